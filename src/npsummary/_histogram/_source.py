"""Streaming input for the histogram cores: validation, chunking, work dtypes and statistics.

Every core reads its input in C order in chunks of at most :data:`CHUNK` elements, so the extra
memory is bounded by a few MiB whatever the input size, and never makes a full-size temporary.

Input: any real array (``np.asarray`` is applied, so ``__array__`` objects work): float16/32/64,
longdouble (read as float64), integers and bool (cast as TF casts them: to float64, or float32
where that is exact), and unknown float-like dtypes such as ``ml_dtypes.bfloat16`` (converted
chunk-wise to float32). Complex, object, string, bytes, datetime, structured and raw void dtypes
raise TypeError (the one rule and message of :mod:`npsummary._common.convert`).

Statistics (:class:`Stats`): min and max compare like TF's loop; ``sum``/``sum_squares`` are
chunked float64 sums (dot products over rows of 1024 values, then pairwise; about 1e-15
relative to the sum of magnitudes), or with ``exact_sum`` TF's sequential double sums bit for
bit under its denormals-are-zero mode; optional Chan moments give mean and variance.

Two threads (:func:`split_in_two`, :func:`in_two_threads`): a large input splits at a chunk
boundary into two sources whose statistics merge in input order (:meth:`Stats.absorb`), so a
core can hand one half to a second thread and get the result of one pass; only when a second
core is free (:func:`second_core_free`).
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from .._common.convert import REAL, dtype_error
from ._results import ArrayLike, F64Array, LegacyHistogram, NonFinite

if TYPE_CHECKING:  # for annotations only: building a Protocol class costs import time
    from typing import Protocol

    class Sums(Protocol):
        """What a histogram's sums come from: :class:`Stats`, or a merge's tally of parts."""

        @property
        def sum(self) -> float: ...

        @property
        def sum_squares(self) -> float: ...

        @property
        def nonfinite(self) -> NonFinite: ...


__all__ = [
    "CHUNK",
    "PARALLEL_MIN_CHUNKS",
    "Kahan",
    "Source",
    "Stats",
    "finite_chunks",
    "fix_zero_signs",
    "in_two_threads",
    "legacy",
    "scan_minmax",
    "second_core_free",
    "split_in_two",
    "stats_pass",
    "work_dtype",
]

CHUNK = 1 << 17
# Inputs of this many chunks or more (~1e6 values, a few ms) are worth a second thread.
PARALLEL_MIN_CHUNKS = 8

_Here = TypeVar("_Here")
_There = TypeVar("_There")


class Source:
    """A validated real array read as 1-D chunks of a float work dtype, in C order."""

    def __init__(self, values: ArrayLike, what: str = "values") -> None:
        if type(values) is np.ndarray:
            arr = values
        else:
            try:
                arr = np.asarray(values)  # also turns np.matrix etc. into a plain ndarray
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"{what} must be a real numeric array, got {type(values).__name__}: {e}"
                ) from e
        self.arr = arr
        self.work = work_dtype(arr.dtype, what)
        self.size = int(arr.size)
        self.chunk = max(1, min(self.size, CHUNK))  # buffer length for this input

    def raw_chunks(self) -> Iterator[np.ndarray]:
        yield from _flat_chunks(self.arr, CHUNK)

    def chunks(self) -> Iterator[np.ndarray]:
        """Contiguous work-dtype chunks; a yielded chunk may be overwritten by the next one."""
        buf: np.ndarray | None = None
        for raw in self.raw_chunks():
            if raw.dtype == self.work:
                yield raw
                continue
            if buf is None:
                buf = np.empty(self.chunk, self.work)
            out = buf[: raw.size]
            out[...] = raw
            yield out


def work_dtype(dt: np.dtype, what: str = "values") -> np.dtype:
    """The float dtype a core reads an array of ``dt`` in: float64 where float32 would round
    its values (float64, longdouble, integers wider than 16 bits), float32 otherwise (bool,
    smaller integers and floats, extension floats). What is not real numbers
    (:data:`~npsummary._common.convert.REAL`) is a :func:`~npsummary._common.convert.dtype_error`
    naming ``what``."""
    if not REAL.accepts(dt):
        raise dtype_error(dt, what)
    if dt.kind == "f":
        return np.dtype(np.float32 if dt.itemsize <= 4 else np.float64)
    if dt.kind in "iu":
        return np.dtype(np.float32 if dt.itemsize <= 2 else np.float64)
    return np.dtype(np.float32)


def _flat_chunks(a: np.ndarray, chunk: int) -> Iterator[np.ndarray]:
    """Contiguous 1-D pieces of ``a`` in C order, each at most ``chunk`` elements."""
    if a.size == 0:
        return
    if a.flags.c_contiguous or a.ndim <= 1:
        flat = a.reshape(-1) if a.flags.c_contiguous else a
        contiguous = a.flags.c_contiguous
        for i in range(0, flat.size, chunk):
            piece = flat[i : i + chunk]
            yield piece if contiguous else np.ascontiguousarray(piece)
        return
    row = math.prod(a.shape[1:])
    if row >= chunk:
        for i in range(a.shape[0]):
            yield from _flat_chunks(a[i], chunk)
        return
    step = max(1, chunk // row)
    for i in range(0, a.shape[0], step):
        yield np.ascontiguousarray(a[i : i + step]).reshape(-1)


def _nonfinite_of(c: np.ndarray) -> tuple[np.ndarray, NonFinite]:
    """Split a chunk known to hold a non-finite value into its finite part and the counts."""
    nan = int(np.count_nonzero(np.isnan(c)))
    posinf = int(np.count_nonzero(c == np.inf))
    neginf = int(np.count_nonzero(c == -np.inf))
    return c[np.isfinite(c)], NonFinite(nan, posinf, neginf)


class Kahan:
    """Neumaier-compensated running sum of Python floats."""

    __slots__ = ("c", "s")

    def __init__(self) -> None:
        self.s = 0.0
        self.c = 0.0

    def add(self, x: float) -> None:
        t = self.s + x
        if not math.isfinite(t):
            self.s, self.c = t, 0.0
            return
        if abs(self.s) >= abs(x):
            self.c += (self.s - t) + x
        else:
            self.c += (x - t) + self.s
        self.s = t

    @property
    def value(self) -> float:
        return self.s + self.c


# Non-exact sums: dot products over rows of _ROW float64 values, then a pairwise sum of the rows.
# Half the cost of square-then-sum; measured within 5e-16 of the exact sum of squares (NumPy's
# pairwise sum: 2e-16). Longer rows are no faster and less accurate.
_ROW = 1024
_TINY = sys.float_info.min  # the smallest normal double


@functools.cache
def _ones_row() -> F64Array:
    ones = np.ones(_ROW)
    ones.flags.writeable = False
    return ones


_NP_VECDOT = getattr(np, "vecdot", None)


def _vecdot(a: F64Array, b: F64Array) -> F64Array:
    """Row-wise dot products; ``np.vecdot`` where NumPy has it (2.0+)."""
    if _NP_VECDOT is not None:
        r: F64Array = _NP_VECDOT(a, b)
        return r
    r = np.einsum("ij,ij->i", a, np.broadcast_to(b, a.shape))
    return r


class Stats:
    """Streaming min/max/count/sum/sum of squares (and optionally Chan moments)."""

    def __init__(
        self,
        *,
        exact_sum: bool = False,
        moments: bool = False,
        cap: int = 1,
        record_sums: bool = False,
    ) -> None:
        self.n = 0
        self.mn = math.inf
        self.mx = -math.inf
        self.nonfinite = NonFinite()
        self.bad: set[int] = set()
        self.exact_sum = exact_sum
        self.moments = moments
        self._sum = Kahan()
        self._sq = Kahan()
        self._seq_sum = 0.0
        self._seq_sq = 0.0
        self.mean = 0.0
        self.m2 = 0.0
        self._x64 = np.empty(cap, np.float64)
        self._tmp = np.empty(cap if moments else 0, np.float64)
        # exact sums: (sum, sum of squares) pairs, read as complex numbers by one cumsum
        self._complex = np.empty(cap + 1 if exact_sum else 0, np.complex128)
        self._pairs = self._complex.view(np.float64).reshape(-1, 2)
        self._mask = np.empty(cap if exact_sum else 0, np.bool_)
        # record_sums: keep each chunk's (sum, sum of squares) for absorb() instead of adding
        self._chunk_sums: list[tuple[float, float]] | None = [] if record_sums else None

    def finite(self, index: int, c: np.ndarray) -> np.ndarray:
        """Update min/max/non-finite counts; return the finite part of ``c``."""
        lo = c.min()
        hi = c.max()
        if not (math.isfinite(lo) and math.isfinite(hi)):
            c, nf = _nonfinite_of(c)
            self.nonfinite = self.nonfinite + nf
            self.bad.add(index)
            if c.size == 0:
                return c
            lo = c.min()
            hi = c.max()
        lo_f = float(lo)
        hi_f = float(hi)
        if lo_f < self.mn:
            self.mn = lo_f
        if hi_f > self.mx:
            self.mx = hi_f
        self.n += int(c.size)
        return c

    def sums(self, c: np.ndarray) -> None:
        """Accumulate sum/sum_squares (and moments) of a finite chunk."""
        with np.errstate(over="ignore", invalid="ignore"):
            self._sums(c)

    def _sums(self, c: np.ndarray) -> None:
        if self.exact_sum:
            self._exact_sums(c)
            if self.moments:
                self._merge_moments(self._as_float64(c))
            return
        x64 = self._as_float64(c)
        n = c.size
        m = n - n % _ROW
        s = q = 0.0
        if m:
            rows = x64[:m].reshape(-1, _ROW)
            s = float(_vecdot(rows, _ones_row()).sum())
            q = float(_vecdot(rows, rows).sum())
        if m < n:
            tail = x64[m:]
            s += float(tail.sum())
            q += float(np.dot(tail, tail))
        if self._chunk_sums is not None:
            self._chunk_sums.append((s, q))
        else:
            self._sum.add(s)
            self._sq.add(q)
        if self.moments:
            self._merge_moments(x64)

    def absorb(self, later: Stats, offset: int) -> None:
        """Add the statistics of the chunks that follow these, ``later`` (made with
        ``record_sums``, without exact sums or moments; its chunk ``i`` is chunk ``offset + i``
        here): the result is the same, bit for bit, as one pass over all the chunks."""
        if later._chunk_sums is None or later.exact_sum or later.moments:
            raise ValueError("absorb() takes statistics made with record_sums only")
        self.n += later.n
        if later.mn < self.mn:  # strictly: of equal extremes the first stays, as in one pass
            self.mn = later.mn
        if later.mx > self.mx:
            self.mx = later.mx
        self.nonfinite = self.nonfinite + later.nonfinite
        self.bad.update(offset + i for i in later.bad)
        for s, q in later._chunk_sums:
            self._sum.add(s)
            self._sq.add(q)

    def _as_float64(self, c: np.ndarray) -> np.ndarray:
        if c.dtype == np.float64:
            return c
        x64 = self._x64[: c.size]
        x64[...] = c
        return x64

    def _exact_sums(self, c: np.ndarray) -> None:
        """TF's ``sum += v; sum_squares += v * v`` in double, one value after the other.

        np.cumsum is that sequential loop, and one cumsum over complex128 runs both: the real
        parts carry the sum and the imaginary parts the sum of squares, each added exactly as
        a double (complex addition adds the parts separately), in half the time of two
        cumsums. TF's denormals-are-zero / flush-to-zero mode is applied to inputs and
        squares; a float32 value is a normal double or zero, and so is its square (the
        smallest, 2**-298, is far above 2**-1022), so float32 chunks have nothing to flush."""
        n = c.size
        pairs = self._pairs[: n + 1]
        pairs[0, 0] = self._seq_sum
        pairs[0, 1] = self._seq_sq
        values = pairs[1:, 0]
        squares = pairs[1:, 1]
        values[...] = c
        if c.dtype == np.float32:
            np.multiply(values, values, out=squares)
        else:
            np.multiply(c, c, out=squares)
            self._flush_subnormals(values, magnitude=True)
            self._flush_subnormals(squares, magnitude=False)
        z = self._complex[: n + 1]
        np.cumsum(z, out=z)
        self._seq_sum = float(pairs[n, 0])
        self._seq_sq = float(pairs[n, 1])

    def _flush_subnormals(self, a: F64Array, *, magnitude: bool) -> None:
        """Set the subnormal entries of ``a`` to zero (``magnitude=False``: ``a`` is known to
        be non-negative), in preallocated buffers: only float64 chunks are flushed, and those
        are read in place, which leaves ``_x64`` free for the magnitudes."""
        n = a.size
        mask = self._mask[:n]
        if magnitude:
            absolute = self._x64[:n]
            np.abs(a, out=absolute)
            np.less(absolute, _TINY, out=mask)
        else:
            np.less(a, _TINY, out=mask)
        if mask.any():
            a[mask] = 0.0

    def _merge_moments(self, x64: np.ndarray) -> None:
        n_c = x64.size
        mean_c = float(x64.sum()) / n_c
        d = self._tmp[:n_c]
        np.subtract(x64, mean_c, out=d)
        np.multiply(d, d, out=d)
        m2_c = float(d.sum())
        n_a = self.n - n_c  # self.n already includes this chunk
        if n_a == 0:
            self.mean, self.m2 = mean_c, m2_c
            return
        delta = mean_c - self.mean
        tot = n_a + n_c
        self.mean += delta * n_c / tot
        self.m2 += m2_c + delta * delta * (n_a * n_c / tot)

    @property
    def sum(self) -> float:
        return self._seq_sum if self.exact_sum else self._sum.value

    @property
    def sum_squares(self) -> float:
        return self._seq_sq if self.exact_sum else self._sq.value


def legacy(
    n: int,
    sums: Sums,
    mn: float,
    mx: float,
    limits: F64Array,
    bucket: F64Array,
    capped: str | None = None,
) -> LegacyHistogram:
    """A LegacyHistogram of ``n`` values with the sums ``sums``, extremes ``mn``/``mx`` and
    these buckets."""
    return LegacyHistogram(
        min=mn,
        max=mx,
        num=float(n),
        sum=sums.sum,
        sum_squares=sums.sum_squares,
        bucket_limit=limits,
        bucket=bucket,
        nonfinite=sums.nonfinite,
        capped=capped,
    )


def fix_zero_signs(src: Source, mn: float, mx: float) -> tuple[float, float]:
    """TF's ``if (min_ > v) min_ = v`` under denormals-are-zero keeps the first of the values
    that compare equal to zero (zeros and subnormals): an extreme in that class is the first
    such value in input order. float32 inputs reach TF's double cast flushed to signed zero."""
    tiny = float(np.finfo(src.work).tiny)
    if abs(mn) >= tiny and abs(mx) >= tiny:
        return mn, mx
    for c in src.chunks():
        hits = np.flatnonzero(np.abs(c) < tiny)
        if hits.size:
            v = c[hits[0]]
            z = float(v) if src.work == np.float64 else (-0.0 if np.signbit(v) else 0.0)
            return (z if abs(mn) < tiny else mn), (z if abs(mx) < tiny else mx)
    return mn, mx


def finite_chunks(src: Source, bad: set[int]) -> Iterator[np.ndarray]:
    for i, c in enumerate(src.chunks()):
        if i in bad:
            c = c[np.isfinite(c)]
            if c.size == 0:
                continue
        yield c


def stats_pass(src: Source, st: Stats, add: Callable[[np.ndarray], None] | None = None) -> Stats:
    """One pass of ``st`` over ``src``; ``add`` also sees each non-empty finite chunk."""
    for i, c in enumerate(src.chunks()):
        c = st.finite(i, c)
        if c.size:
            st.sums(c)
            if add is not None:
                add(c)
    return st


@functools.cache
def _usable_cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return len(affinity(0))
    return os.cpu_count() or 1


def second_core_free() -> bool:
    """Whether a second thread can be expected to run at once with this one: the process may
    run on two CPUs or more, and the system's one-minute load average (where there is one)
    leaves one of them free. On a busy machine the two halves queue for the same time slices
    and the thread only adds switches (measured: up to ~15% slower), so large inputs are then
    counted in one thread as before."""
    cores = _usable_cores()
    if cores < 2:
        return False
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return True
    return load < cores - 0.25  # this process itself counts about 1 while it runs


def split_in_two(src: Source) -> tuple[Source, Source, int] | None:
    """The two halves of a large ``src`` (:data:`PARALLEL_MIN_CHUNKS` chunks or more) split at
    a chunk boundary, and the index the first chunk of the second has in ``src``; ``None``
    when ``src`` is smaller, does not read as one flat run (C-contiguous, or 1-D), or no
    second core is free."""
    arr = src.arr
    if src.size < PARALLEL_MIN_CHUNKS * CHUNK or not (arr.flags.c_contiguous or arr.ndim == 1):
        return None
    if not second_core_free():
        return None
    flat = arr.reshape(-1)
    offset = src.size // CHUNK // 2
    cut = offset * CHUNK
    return Source(flat[:cut]), Source(flat[cut:]), offset


def in_two_threads(here: Callable[[], _Here], there: Callable[[], _There]) -> tuple[_Here, _There]:
    """``here()`` in this thread while a new thread runs ``there()`` (NumPy's loops release the
    GIL, so on two free cores both run at once). Both have ended when this returns; an
    exception from either is raised here."""
    import threading

    results: list[_There] = []
    errors: list[BaseException] = []

    def run_there() -> None:
        try:
            results.append(there())
        except BaseException as exc:  # re-raised by the caller's thread
            errors.append(exc)

    worker = threading.Thread(target=run_there, name="npsummary-histogram", daemon=True)
    worker.start()
    try:
        mine = here()
    finally:
        worker.join()
    if errors:
        raise errors[0]
    return mine, results[0]


def scan_minmax(src: Source, *, parallel: bool = True) -> Stats:
    """Min, max, count and non-finite values of ``src``; halves of a large input in two
    threads, merged in input order (the same result as one pass)."""
    halves = split_in_two(src) if parallel else None
    if halves is None:
        return _scan_minmax(src, Stats())
    first, second, offset = halves
    st, later = in_two_threads(
        lambda: _scan_minmax(first, Stats()), lambda: _scan_minmax(second, Stats(record_sums=True))
    )
    st.absorb(later, offset)
    return st


def _scan_minmax(src: Source, st: Stats) -> Stats:
    for i, c in enumerate(src.chunks()):
        st.finite(i, c)
    return st
