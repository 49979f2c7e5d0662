"""Exact, streaming histogram cores for TensorBoard's three histogram flavours.

Pure functions: arrays in, arrays and small dataclasses out. Every function reads its input
in C order in chunks of at most ``_CHUNK`` elements, so the extra memory is bounded by a few
MiB whatever the input size, and never makes a full-size temporary.

Input: any real array (``np.asarray`` is applied, so ``__array__`` objects work): float16/32/64,
longdouble (read as float64), integers and bool (cast as TF casts them: to float64, or float32
where that is exact), and unknown float-like dtypes such as ``ml_dtypes.bfloat16`` (converted
chunk-wise to float32). Complex, object, string, datetime and structured dtypes raise TypeError.

Non-finite values: NaN, +Inf and -Inf are left out of the buckets *and* of every statistic
(min, max, num, sum, sum_squares); ``num`` is the number of finite values. Each result carries a
:class:`NonFinite` count so that the caller can warn or raise.

Semantics of the three bucket schemes:

* TF1 (:func:`tf1_histogram`), as ``tensorflow/core/lib/histogram/histogram.cc``: 1551 bucket
  limits ``[-DBL_MAX, -9.92e19 .. -1e-12, 0, 1e-12 .. 9.92e19, DBL_MAX]`` (ratio 1.1, built by
  repeated multiplication in double), bucket ``i`` holds ``limit[i-1] <= x < limit[i]``
  (``upper_bound``); ``x == DBL_MAX`` is put in the last bucket (TF indexes past its buffer
  there). ``EncodeToProto``: a non-empty bucket is emitted as ``(limit, count)`` and each run
  of empty buckets collapses to one ``(limit of the run's last bucket, 0)``, so an empty
  histogram is ``min=DBL_MAX, max=-DBL_MAX, bucket_limit=[DBL_MAX], bucket=[0]``. TF runs
  with denormals-are-zero, so a subnormal (or a float32 subnormal, flushed by TF's cast)
  counts as a signed zero: negative ones fall in the ``[0, 1e-12)`` bucket. ``min``/``max``
  compare like TF's loop, so an extreme that equals zero is the first such value in input
  order (sign included). ``sum``/``sum_squares`` are chunked float64 sums (dot products over
  rows of 1024 values, then pairwise; about 1e-15 relative to the sum of magnitudes);
  ``exact_sum=True`` reproduces TF's sequential double sums bit for bit (checked against
  TF 2.21 goldens).
* TF2 (:func:`tf2_buckets`), as ``tf.summary.histogram``'s v3 algorithm and TensorBoard's
  ``histogram_pb``: ``k`` rows ``(left, right, count)`` in float64; all zeros for no data or
  ``k == 0``; for constant data every row is ``(v, v, 0)`` but the last ``(v, v, n)``; else
  ``width = (max - min) / k``, ``index = min(floor((x - min) / width), k - 1)`` in float64
  and ``edges = linspace(min, max, k + 1)``. Identical edges and counts to ``histogram_pb``.
  Where ``max - min`` overflows or ``width`` underflows to 0 (TF gives NaN edges there) the
  same formula is evaluated on values scaled by a power of two.
* tensorboardX (:func:`binned_histogram`): ``np.histogram`` bins of the float64 values (an
  integer count of equal-width bins over ``[min, max]`` (widened by 0.5 when constant),
  explicit non-decreasing edges with the last bin closed, or one of NumPy's bin-rule strings),
  optional ``max_bins`` grouping (groups of ``nbins // max_bins`` adjacent bins, last group
  padded), then tensorboardX's trim: keep one empty bucket left of the first non-empty one and
  drop trailing empties; ``bucket_limit`` holds right edges. Values outside explicit edges are
  not counted but, as in tensorboardX, stay in min/max/num/sum. A rule asking for more than
  ``rule_bin_cap`` bins is grouped down as if ``max_bins=rule_bin_cap``; where NumPy would
  raise "Too many bins for data range" the bins are grouped until the edges increase. A
  :class:`BinCountCappedWarning` says so in both cases. Scott's and Doane's rules use NumPy's
  exact ``np.std``/``np.mean`` bits (its pairwise summation tree, streamed), Freedman-Diaconis
  exact order statistics (radix selection), Stone the exact counts of every candidate.

Distributions: :func:`compress_histogram` is TensorBoard's ``compressor.compress_histogram``
(nine basis points of the normal CDF, linear interpolation inside buckets).
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from ._errors import BinCountCappedWarning

__all__ = [
    "DEFAULT_BUCKET_COUNT",
    "NORMAL_HISTOGRAM_BPS",
    "RULE_BIN_CAP",
    "TF1_BUCKET_LIMITS",
    "BinCountCappedWarning",
    "LegacyHistogram",
    "NonFinite",
    "VariableStats",
    "binned_histogram",
    "compress_histogram",
    "legacy_to_buckets",
    "tf1_histogram",
    "tf2_buckets",
    "variable_stats",
]

ArrayLike: TypeAlias = npt.ArrayLike
F64Array: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]

DBL_MAX = sys.float_info.max
DEFAULT_BUCKET_COUNT = 30
# Normal CDF at (-inf, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, +inf) standard deviations, in basis points.
NORMAL_HISTOGRAM_BPS: tuple[int, ...] = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)
RULE_BIN_CAP = 10_000
RULE_NAMES = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")

_CHUNK = 1 << 17
_INT32_MAX = 2**31 - 1


def _tf1_limits() -> F64Array:
    pos: list[float] = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    limits = np.array([-DBL_MAX, *(-p for p in reversed(pos)), 0.0, *pos, DBL_MAX])
    limits.flags.writeable = False
    return limits


TF1_BUCKET_LIMITS: F64Array = _tf1_limits()
_N_TF1 = TF1_BUCKET_LIMITS.size  # 1551


@dataclass(frozen=True)
class NonFinite:
    """Counts of the values left out of a histogram."""

    nan: int = 0
    posinf: int = 0
    neginf: int = 0

    @property
    def total(self) -> int:
        return self.nan + self.posinf + self.neginf

    def __add__(self, other: NonFinite) -> NonFinite:
        return NonFinite(
            self.nan + other.nan, self.posinf + other.posinf, self.neginf + other.neginf
        )


@dataclass(frozen=True, eq=False)
class LegacyHistogram:
    """The fields of a legacy ``HistogramProto``; ``bucket_limit`` are right edges."""

    min: float
    max: float
    num: float
    sum: float
    sum_squares: float
    bucket_limit: F64Array
    bucket: F64Array
    nonfinite: NonFinite


@dataclass(frozen=True, eq=False)
class VariableStats:
    """``variable_summaries``-style statistics and the TF1 histogram, from one pass."""

    mean: float
    stddev: float
    min: float
    max: float
    histogram: LegacyHistogram


# --------------------------------------------------------------------------------------------
# Input handling


class _Source:
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
        self.work = _work_dtype(arr.dtype, what)
        self.size = int(arr.size)
        self.chunk = max(1, min(self.size, _CHUNK))  # buffer length for this input

    def raw_chunks(self) -> Iterator[np.ndarray]:
        yield from _flat_chunks(self.arr, _CHUNK)

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


def _work_dtype(dt: np.dtype, what: str) -> np.dtype:
    kind = dt.kind
    if kind == "f":
        if dt.itemsize == 8:
            return np.dtype(np.float64)
        if dt.itemsize <= 4:
            return np.dtype(np.float32)
        return np.dtype(np.float64)  # longdouble
    if kind == "b":
        return np.dtype(np.float32)
    if kind in "iu":
        return np.dtype(np.float32 if dt.itemsize <= 2 else np.float64)
    if (
        kind == "V"
        and dt.fields is None
        and dt.subdtype is None
        and np.can_cast(dt, np.float32, casting="unsafe")
    ):
        return np.dtype(np.float32)  # e.g. ml_dtypes.bfloat16 / float8 types
    raise TypeError(f"{what} must be a real numeric array (float, int or bool), got dtype {dt}")


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


class _Kahan:
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


class _Stats:
    """Streaming min/max/count/sum/sum of squares (and optionally Chan moments)."""

    def __init__(self, *, exact_sum: bool = False, moments: bool = False, cap: int = 1) -> None:
        self.n = 0
        self.mn = math.inf
        self.mx = -math.inf
        self.nonfinite = NonFinite()
        self.bad: set[int] = set()
        self.exact_sum = exact_sum
        self.moments = moments
        self._sum = _Kahan()
        self._sq = _Kahan()
        self._seq_sum = 0.0
        self._seq_sq = 0.0
        self.mean = 0.0
        self.m2 = 0.0
        self._x64 = np.empty(cap, np.float64)
        self._tmp = np.empty(cap + 1, np.float64)

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

    def sums(self, c: np.ndarray) -> np.ndarray:
        """Accumulate sum/sum_squares of a finite chunk; return it as float64."""
        with np.errstate(over="ignore", invalid="ignore"):
            return self._sums(c)

    def _sums(self, c: np.ndarray) -> np.ndarray:
        n = c.size
        if c.dtype == np.float64:
            x64 = c
        else:
            x64 = self._x64[:n]
            x64[...] = c
        if self.exact_sum:
            # TF adds doubles one by one in input order; cumsum is that sequential loop.
            # Its denormals-are-zero / flush-to-zero mode is applied to inputs and squares.
            t = self._tmp[: n + 1]
            t[0] = self._seq_sum
            t[1:] = x64
            _flush_subnormals(t[1:])
            np.cumsum(t, out=t)
            self._seq_sum = float(t[n])
            t[0] = self._seq_sq
            np.multiply(x64, x64, out=t[1:])
            _flush_subnormals(t[1:])
            np.cumsum(t, out=t)
            self._seq_sq = float(t[n])
        else:
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
            self._sum.add(s)
            self._sq.add(q)
        if self.moments:
            self._merge_moments(x64)
        return x64

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


def _legacy(
    st: _Stats, mn: float, mx: float, limits: F64Array, bucket: F64Array
) -> LegacyHistogram:
    """A LegacyHistogram of the statistics ``st`` with extremes ``mn``/``mx`` and these buckets."""
    return LegacyHistogram(
        min=mn,
        max=mx,
        num=float(st.n),
        sum=st.sum,
        sum_squares=st.sum_squares,
        bucket_limit=limits,
        bucket=bucket,
        nonfinite=st.nonfinite,
    )


def _flush_subnormals(a: F64Array) -> None:
    a[np.abs(a) < sys.float_info.min] = 0.0


def _fix_zero_signs(src: _Source, mn: float, mx: float) -> tuple[float, float]:
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


def _finite_chunks(src: _Source, bad: set[int]) -> Iterator[np.ndarray]:
    for i, c in enumerate(src.chunks()):
        if i in bad:
            c = c[np.isfinite(c)]
            if c.size == 0:
                continue
        yield c


def _scan_minmax(src: _Source) -> _Stats:
    st = _Stats()
    for i, c in enumerate(src.chunks()):
        st.finite(i, c)
    return st


# --------------------------------------------------------------------------------------------
# TF1 exponential buckets


@dataclass(frozen=True)
class _Tf1Table:
    """Per-cell lookup: a cell is a run of floats sharing their top bits (sign, exponent and
    4 mantissa bits), narrower than any bucket, so it holds at most one threshold."""

    shift: int
    uint: type[np.unsignedinteger]
    thr: np.ndarray  # threshold inside the cell (or +inf): x >= thr adds one bucket
    base: IntArray  # bucket of the smallest value of the cell


def _build_tf1_table(ftype: type[np.floating], bits: int, cell_bits: int) -> _Tf1Table:
    limits = TF1_BUCKET_LIMITS
    uint: type[np.unsignedinteger] = np.uint32 if bits == 32 else np.uint64
    with np.errstate(over="ignore"):
        thr_all = limits.astype(ftype)
    # smallest value of the float type that is >= the double limit
    below = thr_all.astype(np.float64) < limits
    thr_all[below] = np.nextafter(thr_all[below], ftype(np.inf))
    shift = bits - cell_bits
    cells = np.arange(1 << cell_bits, dtype=uint)
    lo_bits = cells << uint(shift)
    hi_bits = lo_bits | uint((1 << shift) - 1)
    with np.errstate(invalid="ignore"):
        a = lo_bits.view(ftype)
        b = hi_bits.view(ftype)
        vmin = np.fmin(a, b)
        vmax = np.fmax(a, b)
    finite = np.isfinite(vmin) & np.isfinite(vmax)
    # TF runs with denormals-are-zero: a subnormal compares (and casts) as a signed zero, so
    # cells of the zero exponent all belong to the bucket of 0.0.
    exp_mask = (1 << (cell_bits - 5)) - 1
    zero_exp = ((cells >> uint(4)) & uint(exp_mask)) == 0
    vmin = np.where(finite & ~zero_exp, vmin, 0)
    vmax = np.where(finite & ~zero_exp, vmax, 0)
    base = np.searchsorted(thr_all, vmin, side="right").astype(np.int64)
    top = np.searchsorted(thr_all, vmax, side="right").astype(np.int64)
    if np.any(top - base > 1):
        raise RuntimeError("TF1 lookup table cell holds two bucket limits")
    has = top > base
    thr = np.where(has, thr_all[np.minimum(base, thr_all.size - 1)], ftype(np.inf)).astype(ftype)
    return _Tf1Table(shift, uint, thr, base)


@functools.cache
def _tf1_table32() -> _Tf1Table:
    return _build_tf1_table(np.float32, 32, 13)


@functools.cache
def _tf1_table64() -> _Tf1Table:
    return _build_tf1_table(np.float64, 64, 16)


# float32 keys: slots 0 .. _N_TF1 are buckets, slots above count down to bucket 0 (see below)
_KEY_TOP = 2 * _N_TF1 + 2


@functools.cache
def _tf1_offsets32() -> tuple[npt.NDArray[np.uint32], IntArray]:
    """Per-cell offsets that turn a float32 bit pattern ``b`` into a bucket key in two integer
    operations: ``key = (b + off[b >> 19]) >> 19`` (uint32, wrapping), and ``key -> bucket``.

    With ``b = (cell << 19) + low`` and a cell whose threshold has low bits ``t`` (``t = 2**19``
    when the cell has none), ``off = ((slot - cell) << 19) + 2**19 - t`` gives
    ``key = slot + (low >= t)``. For positive cells that is ``base + (x >= thr)`` with
    ``slot = base``. In negative cells larger ``low`` means smaller ``x``, so ``t`` is the
    threshold's low bits plus one, ``key = slot + (x < thr)`` and the slot is taken from the
    top: ``slot = _KEY_TOP - base - 1``, ``bucket = _KEY_TOP - key``. The exact sum is below
    2**32, so the wrap-around of the uint32 addition cancels."""
    t = _tf1_table32()
    s = t.shift
    cells = np.arange(1 << (32 - s), dtype=np.int64)
    neg = cells >> (31 - s) == 1
    has = np.isfinite(t.thr)
    low = t.thr.view(np.uint32).astype(np.int64) & ((1 << s) - 1)
    t_low = np.where(has, low + neg, 1 << s)
    slot = np.where(neg & has, _KEY_TOP - t.base - 1, t.base)
    off = ((((slot - cells) << s) + (1 << s) - t_low) % (1 << 32)).astype(np.uint32)
    key_map = np.arange(_KEY_TOP + 1, dtype=np.int64)
    key_map[_N_TF1 + 1 :] = _KEY_TOP - key_map[_N_TF1 + 1 :]
    off.flags.writeable = False
    key_map.flags.writeable = False
    return off, key_map


class _Tf1Counter:
    """Bucket counts: ``bucket = base[cell] + (x >= thr[cell])``; float32 uses the two
    operation key of :func:`_tf1_offsets32` instead of the comparison."""

    def __init__(self, work: np.dtype, cap: int) -> None:
        self.f32 = work == np.float32
        if self.f32:
            self.off, self.key_map = _tf1_offsets32()
            self.shift = _tf1_table32().shift
            self.idx32 = np.empty(cap, np.uint32)
            self.key32 = np.empty(cap, np.uint32)
            self.keys = np.zeros(_KEY_TOP + 1, np.int64)
            return
        self.table = _tf1_table64()
        self.cells = np.empty(cap, np.intp)
        self.bucket = np.empty(cap, np.intp)
        self.thr = np.empty(cap, self.table.thr.dtype)
        self.ge = np.empty(cap, np.bool_)
        self.acc = np.zeros(_N_TF1 + 1, np.int64)  # +1: x == DBL_MAX, clamped later

    def add(self, c: np.ndarray) -> None:
        n = c.size
        if self.f32:
            b = c.view(np.uint32)
            idx = self.idx32[:n]
            key = self.key32[:n]
            np.right_shift(b, self.shift, out=idx)
            np.take(self.off, idx, out=key, mode="wrap")  # in range; "wrap" is the fastest
            np.add(key, b, out=key)
            np.right_shift(key, self.shift, out=key)
            self.keys += np.bincount(key, minlength=self.keys.size)
            return
        t = self.table
        cells = self.cells[:n]
        np.right_shift(c.view(t.uint), t.shift, out=cells, casting="unsafe")
        thr = self.thr[:n]
        np.take(t.thr, cells, out=thr, mode="clip")
        ge = self.ge[:n]
        np.greater_equal(c, thr, out=ge)
        bucket = self.bucket[:n]
        np.take(t.base, cells, out=bucket, mode="clip")
        np.add(bucket, ge, out=bucket)
        self.acc += np.bincount(bucket, minlength=self.acc.size)

    def counts(self) -> F64Array:
        acc: F64Array
        if self.f32:
            weighted = np.bincount(self.key_map, weights=self.keys.astype(np.float64))
            acc = np.asarray(weighted, dtype=np.float64)  # already float64; typed for mypy
        else:
            acc = self.acc.astype(np.float64)
        acc[_N_TF1 - 1] += acc[_N_TF1]  # x == DBL_MAX: TF writes past its buffer; we clamp
        return acc[:_N_TF1]


def _encode_tf1(counts: F64Array) -> tuple[F64Array, F64Array]:
    """``Histogram::EncodeToProto(preserve_zero_buckets=false)``."""
    nz = counts > 0
    nxt = np.ones_like(nz)
    nxt[:-1] = nz[1:]
    idx = np.flatnonzero(nz | nxt)  # an empty bucket is kept only as the end of its run
    return TF1_BUCKET_LIMITS[idx].copy(), counts[idx].astype(np.float64)


def _tf1_pass(src: _Source, *, exact_sum: bool, moments: bool) -> tuple[_Stats, F64Array]:
    st = _Stats(exact_sum=exact_sum, moments=moments, cap=src.chunk)
    counter = _Tf1Counter(src.work, src.chunk)
    for i, c in enumerate(src.chunks()):
        c = st.finite(i, c)
        if c.size == 0:
            continue
        st.sums(c)
        counter.add(c)
    return st, counter.counts()


def _empty_legacy(nonfinite: NonFinite) -> LegacyHistogram:
    return LegacyHistogram(
        min=DBL_MAX,
        max=-DBL_MAX,
        num=0.0,
        sum=0.0,
        sum_squares=0.0,
        bucket_limit=np.array([DBL_MAX]),
        bucket=np.array([0.0]),
        nonfinite=nonfinite,
    )


def tf1_histogram(values: ArrayLike, *, exact_sum: bool = False) -> LegacyHistogram:
    """TF1 ``tf.compat.v1.summary.histogram`` fields (exponential buckets), in one pass.

    Args:
      values: real array of any shape.
      exact_sum: reproduce TF's sequential double ``sum``/``sum_squares`` bit for bit (about
        2 ns per element more); otherwise chunked float64 sums, within ~1e-15 of the sum of
        magnitudes.

    Returns:
      :class:`LegacyHistogram` with EncodeToProto's collapsed buckets; non-finite values are
      counted in ``nonfinite`` and left out of everything else.

    Raises:
      TypeError: ``values`` is not a real numeric array.
    """
    src = _Source(values)
    st, counts = _tf1_pass(src, exact_sum=exact_sum, moments=False)
    if st.n == 0:
        return _empty_legacy(st.nonfinite)
    mn, mx = _fix_zero_signs(src, st.mn, st.mx)
    limits, bucket = _encode_tf1(counts)
    return _legacy(st, mn, mx, limits, bucket)


def variable_stats(values: ArrayLike, *, exact_sum: bool = False) -> VariableStats:
    """Mean, population stddev, min, max and the TF1 histogram of ``values`` in one pass.

    ``stddev`` is ``sqrt(mean((x - mean)**2))`` (the ``variable_summaries`` recipe) computed in
    float64 with Chan's pairwise merge of per-chunk centred moments, not from sum of squares.
    Non-finite values are left out (see ``histogram.nonfinite``). Empty input gives
    ``mean = stddev = nan``, ``min = inf``, ``max = -inf`` (the reductions' identities).
    """
    src = _Source(values)
    st, counts = _tf1_pass(src, exact_sum=exact_sum, moments=True)
    if st.n == 0:
        return VariableStats(
            mean=math.nan,
            stddev=math.nan,
            min=math.inf,
            max=-math.inf,
            histogram=_empty_legacy(st.nonfinite),
        )
    mn, mx = _fix_zero_signs(src, st.mn, st.mx)
    limits, bucket = _encode_tf1(counts)
    hist = _legacy(st, mn, mx, limits, bucket)
    return VariableStats(
        mean=st.mean,
        stddev=math.sqrt(max(st.m2, 0.0) / st.n),
        min=mn,
        max=mx,
        histogram=hist,
    )


# --------------------------------------------------------------------------------------------
# TF2 equal-width buckets


def _check_int(value: object, name: str, minimum: int, expected: str = "an int") -> int:
    """``value`` as an int >= ``minimum``; bools and non-integers raise TypeError."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, got bool {value!r}")
    try:
        number = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(
            f"{name} must be {expected}, got {type(value).__name__} {value!r}"
        ) from None
    if number < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {number}")
    return number


def _check_bucket_count(bucket_count: object) -> int:
    k = _check_int(bucket_count, "bucket_count", 0)
    if k > _INT32_MAX - 1:
        raise ValueError(f"bucket_count must fit in int32 (TF requires it), got {k}")
    return k


def _f32_key(v: np.ndarray) -> IntArray:
    """Order-preserving int64 key of float32 values (-0.0 sorts just below +0.0)."""
    b = np.ascontiguousarray(v, np.float32).view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF) - 1, b)


def _f32_from_key(k: IntArray) -> npt.NDArray[np.float32]:
    b = np.where(k < 0, (-(k + 1)) | -(2**31), k).astype(np.int32)
    return b.view(np.float32)


def _first_true_f32(
    pred: Callable[[F64Array, IntArray], npt.NDArray[np.bool_]],
    lo: int,
    hi: int,
    js: IntArray,
    guess: IntArray,
) -> IntArray:
    """For each j, the smallest float32 key in [lo, hi] where the monotone pred holds (it
    holds at hi). The search starts in a small bracket around ``guess`` when that bracket is
    valid, else in [lo, hi]."""
    lo_a = np.clip(guess - 64, lo, hi)
    hi_a = np.clip(guess + 64, lo, hi)
    below = np.maximum(lo_a - 1, lo)
    valid = pred(_f32_from_key(hi_a).astype(np.float64), js) & (
        (lo_a == lo) | ~pred(_f32_from_key(below).astype(np.float64), js)
    )
    lo_a = np.where(valid, lo_a, lo)
    hi_a = np.where(valid, hi_a, hi)
    while np.any(lo_a < hi_a):
        mid = (lo_a + hi_a) // 2
        ok = pred(_f32_from_key(mid).astype(np.float64), js)
        hi_a = np.where(ok, mid, hi_a)
        lo_a = np.where(ok, lo_a, mid + 1)
    return lo_a


def _reciprocal_is_exact(mn: float, mx: float, width: float, k: int) -> bool:
    """True when floor((x - mn) * (1/width)) >= j <=> floor((x - mn) / width) >= j for every
    float32 x in [mn, mx] and j in 1..k-1. Both sides are monotone in x, so it suffices
    that they switch at the same float32 value, found by binary search per j."""
    inv = 1.0 / width
    if not math.isfinite(inv):
        return False
    js = np.arange(1, k, dtype=np.int64)
    lo = int(_f32_key(np.array([mn]))[0])
    hi = int(_f32_key(np.array([mx]))[0])
    with np.errstate(over="ignore", invalid="ignore"):
        guess = _f32_key((mn + js * width).astype(np.float32))

    def by_div(v: F64Array, j: IntArray) -> npt.NDArray[np.bool_]:
        return np.floor((v - mn) / width) >= j

    def by_mul(v: F64Array, j: IntArray) -> npt.NDArray[np.bool_]:
        return np.floor((v - mn) * inv) >= j

    return bool(
        np.array_equal(
            _first_true_f32(by_div, lo, hi, js, guess), _first_true_f32(by_mul, lo, hi, js, guess)
        )
    )


class _EqualWidthCounter:
    """Counts ``min(floor((x - mn) / width), k - 1)`` over float64 arithmetic, as TF does."""

    def __init__(self, k: int, mn: float, width: float, *, multiply: bool, cap: int) -> None:
        self.k = k
        self.mn = mn
        self.width = width
        self.inv = 1.0 / width if multiply else 0.0
        self.multiply = multiply
        big = k + 1
        self.index_dtype = np.int32 if big < _INT32_MAX else np.intp
        # bincount is latency-bound (about 1 ns per element): packing 3 (or 2) indices into
        # one entry of a big**3 (big**2) table cuts its work threefold (twofold).
        self.pack = 3 if big <= 32 else 2 if big <= 64 else 1
        self.big = big
        self.packed_size = big**self.pack
        self.acc: IntArray | None = None  # allocated when a chunk is big enough to pack
        self.tail = np.zeros(big, np.int64)
        self.b64 = np.empty(cap, np.float64)
        self.idx = np.empty(cap, self.index_dtype)

    def add(self, c: np.ndarray) -> None:
        n = c.size
        b = self.b64[:n]
        if c.dtype == np.float64:
            np.subtract(c, self.mn, out=b)
        else:
            b[...] = c
            np.subtract(b, self.mn, out=b)
        if self.multiply:
            np.multiply(b, self.inv, out=b)
        else:
            np.divide(b, self.width, out=b)
        q = self.idx[:n]
        q[...] = b  # truncation == floor: the quotient is >= 0
        p = self.pack
        if p > 1 and n >= self.packed_size:
            h = n // p
            a = q[:h]
            for i in range(1, p):
                np.multiply(a, self.big, out=a)
                np.add(a, q[i * h : (i + 1) * h], out=a)
            packed = np.bincount(a, minlength=self.packed_size)
            if self.acc is None:
                self.acc = packed
            else:
                self.acc += packed
            q = q[p * h :]
        if q.size:
            self.tail += np.bincount(q, minlength=self.big)

    def counts(self) -> IntArray:
        tot = self.tail.copy()
        if self.acc is not None:
            cube = self.acc.reshape((self.big,) * self.pack)
            for axis in range(self.pack):
                others = tuple(i for i in range(self.pack) if i != axis)
                tot += cube.sum(axis=others)
        out: IntArray = tot[: self.k].copy()
        out[self.k - 1] += tot[self.k :].sum()
        return out


def tf2_buckets(
    values: ArrayLike, bucket_count: int = DEFAULT_BUCKET_COUNT
) -> tuple[F64Array, NonFinite]:
    """TF2 ``tf.summary.histogram`` buckets: float64 ``[bucket_count, 3]`` rows (left, right, n).

    Identical edges and counts to TensorBoard's ``histogram_pb`` on the finite values. Two
    passes over the data: edges depend on min and max, so one fused min/max scan comes first,
    then one bucketing scan.

    Args:
      values: real array of any shape.
      bucket_count: number of buckets, an int >= 0 (0 gives shape ``[0, 3]``).

    Returns:
      ``(buckets, nonfinite)``.

    Raises:
      TypeError: ``values`` is not real, or ``bucket_count`` is not an int.
      ValueError: ``bucket_count`` is negative or does not fit in int32.
    """
    k = _check_bucket_count(bucket_count)
    src = _Source(values)
    st = _scan_minmax(src)
    nf = st.nonfinite
    if k == 0 or st.n == 0:
        return np.zeros((k, 3)), nf
    mn = np.float64(st.mn)
    mx = np.float64(st.mx)
    out = np.empty((k, 3))
    if mn == mx:
        out[:, 0] = mn
        out[:, 1] = mn
        out[:, 2] = 0.0
        out[k - 1, 2] = st.n
        return out, nf
    with np.errstate(over="ignore"):
        rng = mx - mn
    width = rng / k
    scale = 1.0
    if not np.isfinite(rng):
        scale = 0.25
    elif width == 0.0:
        scale = 2.0**900
    if scale != 1.0:
        counts = _tf2_counts_scaled(src, st, float(mn), float(mx), k, scale)
        edges = np.linspace(mn * scale, mx * scale, k + 1) / scale
        edges[0], edges[-1] = mn, mx
    else:
        multiply = (
            src.work == np.float32
            and st.n >= (1 << 20)
            and k <= 4096
            and _reciprocal_is_exact(float(mn), float(mx), float(width), k)
        )
        counter = _EqualWidthCounter(k, float(mn), float(width), multiply=multiply, cap=src.chunk)
        for c in _finite_chunks(src, st.bad):
            counter.add(c)
        counts = counter.counts()
        with np.errstate(over="ignore", invalid="ignore"):  # k * step may round past max
            edges = np.linspace(mn, mx, k + 1)
    out[:, 0] = edges[:-1]
    out[:, 1] = edges[1:]
    out[:, 2] = counts
    return out, nf


def _tf2_counts_scaled(
    src: _Source, st: _Stats, mn: float, mx: float, k: int, scale: float
) -> IntArray:
    """The v3 formula on values scaled by a power of two, for ranges TF's float64 can't hold."""
    smn = mn * scale
    width = (mx * scale - smn) / k
    counter = _EqualWidthCounter(k, smn, width, multiply=False, cap=src.chunk)
    for c in _finite_chunks(src, st.bad):
        counter.add(c.astype(np.float64) * scale)
    return counter.counts()


# --------------------------------------------------------------------------------------------
# tensorboardX-style np.histogram bins


BinsSpec: TypeAlias = "int | str | Sequence[float] | np.ndarray"


def _linspace_at(first: float, last: float, num: int, idx: IntArray) -> F64Array:
    """``np.linspace(first, last, num)[idx]`` without building the whole array."""
    div = num - 1
    with np.errstate(over="ignore"):
        delta = np.subtract(np.float64(last), np.float64(first))
    y: F64Array = idx.astype(np.float64)
    if div > 0:
        step = delta / div
        if step == 0:
            y = (y / div) * delta
        elif not np.isfinite(step):
            # NumPy gives NaN edges here; interpolate without overflowing instead.
            y = y * (np.float64(last) / div - np.float64(first) / div)
        else:
            y = y * step
    else:
        y = y * delta
    y = y + np.float64(first)
    y[idx == num - 1] = last
    return y


def _group(nbins: int, max_bins: int | None) -> int:
    if max_bins is not None and nbins > max_bins:
        return nbins // max_bins
    return 1


def _grouped_edge_index(nbins: int, s: int) -> IntArray:
    idx = np.arange(0, nbins, s, dtype=np.int64)
    return np.append(idx, nbins)


class _EdgeCounter:
    """Counts by edges: bin i holds ``e[i] <= x < e[i+1]``, the last bin closed; values
    outside ``[e[0], e[-1]]`` are not counted. ``uniform`` edges get an arithmetic index
    guess corrected against the edges, others a binary search."""

    def __init__(self, edges: F64Array, *, uniform: bool) -> None:
        self.edges = edges
        self.nb = edges.size - 1
        self.uniform = uniform and self.nb >= 1 and bool(np.all(edges[1:] > edges[:-1]))
        self.acc = np.zeros(self.nb, np.int64)
        if self.uniform:
            self.first = float(edges[0])
            span = float(edges[-1]) - float(edges[0])
            scale = self.nb / span if math.isfinite(span) and span > 0 else 0.0
            # A subnormal span overflows the scale to inf (0 * inf = NaN): use the exact
            # searchsorted path instead.
            self.scale = scale if math.isfinite(scale) else 0.0

    def add(self, c: np.ndarray) -> None:
        x = c.astype(np.float64, copy=False)
        e = self.edges
        nb = self.nb
        if not self.uniform or self.scale == 0.0:
            i = np.searchsorted(e, x, side="right") - 1
            keep = (i >= 0) & (x <= e[-1])
            if not keep.all():
                i = i[keep]
            np.minimum(i, nb - 1, out=i)
            self.acc += np.bincount(i, minlength=nb)
            return
        g = (x - self.first) * self.scale
        np.clip(g, 0, nb - 1, out=g)
        i = g.astype(np.intp)
        while True:
            low = x < e[i]
            high = (x >= e[i + 1]) & (i < nb - 1)
            if not (low.any() or high.any()):
                break
            i -= low
            i += high
        self.acc += np.bincount(i, minlength=nb)


def _equal_edges(first: float, last: float, nbins: int, s: int, asked: str) -> F64Array:
    """Edges 0, s, 2s, ... and nbins of ``np.linspace(first, last, nbins + 1)``.

    NumPy raises "Too many bins for data range" when the edges are not strictly increasing;
    a logger should not fail on data, so groups are widened until they are (with a
    warning), down to the single bin ``[first, last]``."""
    limits = _linspace_at(first, last, nbins + 1, _grouped_edge_index(nbins, s))
    widened = False
    while limits.size > 2 and np.any(limits[1:] <= limits[:-1]):
        s = nbins if s * 2 >= nbins else s * 2
        widened = True
        limits = _linspace_at(first, last, nbins + 1, _grouped_edge_index(nbins, s))
    if widened:
        warnings.warn(
            BinCountCappedWarning(
                f"{asked}: too many bins for the data range [{first!r}, {last!r}]; "
                f"grouped {s} at a time"
            ),
            stacklevel=3,
        )
    return limits


def _trim_tbx(counts: IntArray, limits: F64Array) -> tuple[F64Array, F64Array]:
    """tensorboardX's ``make_histogram`` trimming (one empty bucket kept on the left)."""
    nz = np.flatnonzero(counts > 0)
    if nz.size == 0:
        return np.array([DBL_MAX]), np.array([0.0])
    start = int(nz[0])
    end = int(nz[-1]) + 1
    c = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    lim = limits[start : end + 1]
    return np.asarray(lim, np.float64).copy(), c.astype(np.float64)


def _group_counts(counts: IntArray, limits: F64Array, s: int) -> tuple[IntArray, F64Array]:
    """tensorboardX's ``max_bins`` grouping of explicit-edge counts."""
    if s <= 1:
        return counts, limits
    nb = counts.size
    rem = nb % s
    if rem:
        counts = np.concatenate([counts, np.zeros(s - rem, counts.dtype)])
    counts = counts.reshape(-1, s).sum(axis=1)
    new = np.empty(counts.size + 1, limits.dtype)
    new[:-1] = limits[:-1:s]
    new[-1] = limits[-1]
    return counts, new


def _check_max_bins(max_bins: object) -> int | None:
    if max_bins is None:
        return None
    return _check_int(max_bins, "max_bins", 1, "an int or None")


def binned_histogram(
    values: ArrayLike,
    bins: int | str | Sequence[float] | np.ndarray,
    max_bins: int | None = None,
    *,
    rule_bin_cap: int = RULE_BIN_CAP,
) -> LegacyHistogram:
    """tensorboardX ``add_histogram(values, bins=..., max_bins=...)`` fields, streamed.

    Args:
      values: real array of any shape.
      bins: an int (equal-width bins over ``[min, max]``), a 1-D non-decreasing sequence of
        edges, one of NumPy's rule names (``'auto', 'fd', 'doane', 'scott', 'stone', 'rice',
        'sturges', 'sqrt'``), or ``'tensorflow'`` (the TF1 buckets of :func:`tf1_histogram`).
      max_bins: if the histogram has more bins, group ``nbins // max_bins`` adjacent bins.
      rule_bin_cap: most bins a rule name may produce before grouping kicks in (with a
        :class:`BinCountCappedWarning`).

    Returns:
      :class:`LegacyHistogram`; empty (or all non-finite) input gives TF1's empty histogram.

    Raises:
      TypeError: ``values`` not real; ``bins`` or ``max_bins`` of the wrong type.
      ValueError: unknown rule, non-positive bin count, edges not 1-D, NaN or decreasing,
        ``max_bins`` or ``rule_bin_cap`` < 1.
    """
    spec = _parse_bins(bins)
    mb = _check_max_bins(max_bins)
    if isinstance(rule_bin_cap, bool) or not isinstance(rule_bin_cap, (int, np.integer)):
        raise TypeError(f"rule_bin_cap must be an int, got {rule_bin_cap!r}")
    if rule_bin_cap < 1:
        raise ValueError(f"rule_bin_cap must be >= 1, got {rule_bin_cap!r}")
    if isinstance(spec, str) and spec == "tensorflow":
        if mb is None:
            return tf1_histogram(values)
        return _tf1_grouped(values, mb)
    src = _Source(values)
    st = _Stats(moments=True, cap=src.chunk)
    for i, c in enumerate(src.chunks()):
        c = st.finite(i, c)
        if c.size:
            st.sums(c)
    if st.n == 0:
        return _empty_legacy(st.nonfinite)
    mn, mx = _fix_zero_signs(src, st.mn, st.mx)

    if isinstance(spec, np.ndarray):
        counter = _EdgeCounter(spec, uniform=False)
        for c in _finite_chunks(src, st.bad):
            counter.add(c)
        counts, limits = _group_counts(counter.acc, spec, _group(spec.size - 1, mb))
    else:
        first, last = np.float64(mn), np.float64(mx)
        if first == last:
            first, last = first - 0.5, last + 0.5
        if isinstance(spec, str):
            nbins = _rule_nbins(spec, src, st, float(first), float(last))
            asked = f"bins={spec!r} asked for {nbins} bins"
        else:
            nbins = spec
            asked = f"bins={nbins}"
        s = _group(nbins, mb)
        if isinstance(spec, str) and nbins // s > rule_bin_cap:
            s = max(s, nbins // rule_bin_cap)
            warnings.warn(
                BinCountCappedWarning(
                    f"{asked}; grouped {s} at a time (rule_bin_cap={rule_bin_cap})"
                ),
                stacklevel=2,
            )
        limits = _equal_edges(float(first), float(last), nbins, s, asked)
        counter = _EdgeCounter(limits, uniform=True)
        for c in _finite_chunks(src, st.bad):
            counter.add(c)
        counts = counter.acc
    bucket_limit, bucket = _trim_tbx(counts, limits)
    return _legacy(st, mn, mx, bucket_limit, bucket)


def _parse_bins(bins: object) -> int | str | F64Array:
    if isinstance(bins, str):
        if bins == "tensorflow" or bins in RULE_NAMES:
            return bins
        raise ValueError(
            f"bins={bins!r} is not a bin rule; expected 'tensorflow' or one of {RULE_NAMES}"
        )
    if isinstance(bins, (bool, np.bool_)):
        raise TypeError(f"bins must be an int, a rule name or edges, got bool {bins!r}")
    if np.ndim(bins) == 0:  # type: ignore[arg-type]
        try:
            nb = operator.index(bins)  # type: ignore[arg-type]
        except TypeError:
            raise TypeError(
                f"bins must be an int, a rule name or edges, got {type(bins).__name__} {bins!r}"
            ) from None
        if nb < 1:
            raise ValueError(f"bins must be >= 1 when an int, got {nb}")
        return nb
    try:
        edges = np.asarray(bins, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"bin edges must be real numbers, got {bins!r}") from e
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(f"bin edges must be 1-D with at least 2 entries, got shape {edges.shape}")
    if np.isnan(edges).any():
        raise ValueError(f"bin edges must not contain NaN, got {edges.tolist()!r}")
    if np.any(edges[1:] < edges[:-1]):
        raise ValueError(f"bin edges must be non-decreasing, got {edges.tolist()!r}")
    return edges


def _tf1_grouped(values: ArrayLike, max_bins: int) -> LegacyHistogram:
    """'tensorflow' bins with max_bins: group TF1's 1551 buckets the tensorboardX way."""
    src = _Source(values)
    st, counts = _tf1_pass(src, exact_sum=False, moments=False)
    if st.n == 0:
        return _empty_legacy(st.nonfinite)
    mn, mx = _fix_zero_signs(src, st.mn, st.mx)
    s = _group(_N_TF1, max_bins)
    c = counts.astype(np.int64)
    if s > 1:
        rem = c.size % s
        if rem:
            c = np.concatenate([c, np.zeros(s - rem, np.int64)])
        c = c.reshape(-1, s).sum(axis=1)
    # right edge of each group = limit of its last bucket (TF1 limits are right edges)
    right = TF1_BUCKET_LIMITS[np.minimum(np.arange(s - 1, s * c.size, s), _N_TF1 - 1)]
    limits, bucket = _encode_tf1_generic(c.astype(np.float64), right)
    return _legacy(st, mn, mx, limits, bucket)


def _encode_tf1_generic(counts: F64Array, right: F64Array) -> tuple[F64Array, F64Array]:
    nz = counts > 0
    nxt = np.ones_like(nz)
    nxt[:-1] = nz[1:]
    idx = np.flatnonzero(nz | nxt)
    return right[idx].copy(), counts[idx]


# ---- NumPy bin rules, streamed -------------------------------------------------------------


def _rule_nbins(rule: str, src: _Source, st: _Stats, first: float, last: float) -> int:
    """``np.histogram_bin_edges``' bin count for a rule (data already cast to float64)."""
    n = st.n
    ptp = np.float64(st.mx) - np.float64(st.mn)
    if rule == "sqrt":
        width = ptp / np.sqrt(n)
    elif rule == "sturges":
        width = ptp / (np.log2(n) + 1.0)
    elif rule == "rice":
        width = ptp / (2.0 * n ** (1.0 / 3))
    elif rule == "scott":
        width = (24.0 * np.pi**0.5 / n) ** (1.0 / 3.0) * _np_std(src, st)
    elif rule == "doane":
        width = _doane(src, st, ptp)
    elif rule == "fd":
        width = _fd(src, st)
    elif rule == "auto":
        fd_bw = _fd(src, st)
        sturges_bw = ptp / (np.log2(n) + 1.0)
        sqrt_bw = ptp / np.sqrt(n)
        width = min(max(fd_bw, sqrt_bw / 2), sturges_bw)
    else:  # stone
        width = _stone(src, st, float(ptp), first, last)
    if width:
        with np.errstate(over="ignore"):
            q = np.ceil((np.float64(last) - np.float64(first)) / width)
        return int(q) if q < 2.0**62 else 2**62  # NumPy would fail; the cap groups it
    return 1


class _SeqReader:
    """Reads consecutive ranges of the flattened input as float64."""

    def __init__(self, src: _Source) -> None:
        self._it = src.raw_chunks()
        self._cur: np.ndarray = np.empty(0)
        self._off = 0

    def read(self, n: int) -> F64Array:
        out = np.empty(n, np.float64)
        pos = 0
        while pos < n:
            if self._off >= self._cur.size:
                self._cur = next(self._it)
                self._off = 0
            take = min(n - pos, self._cur.size - self._off)
            out[pos : pos + take] = self._cur[self._off : self._off + take]
            pos += take
            self._off += take
        return out


def _np_sum(src: _Source, n: int, f: Callable[[F64Array], F64Array]) -> np.float64:
    """``np.sum(f(x))`` of the float64 data with NumPy's own pairwise split, streamed.

    NumPy's contiguous float sum halves the range (rounded down to a multiple of 8) until it is
    small; summing the same segments in the same tree gives the same bits."""
    reader = _SeqReader(src)

    def rec(m: int) -> np.float64:
        r: np.float64
        if m <= _CHUNK:
            r = np.add.reduce(f(reader.read(m)))
            return r
        m2 = m // 2
        m2 -= m2 % 8
        left = rec(m2)
        r = left + rec(m - m2)
        return r

    return rec(n)


def _np_std(src: _Source, st: _Stats) -> np.float64:
    """``np.std`` of the float64 data: exact NumPy bits when there was no non-finite value,
    otherwise the streaming (Chan) estimate."""
    r: np.float64
    if st.bad:
        r = np.float64(math.sqrt(max(st.m2, 0.0) / st.n))
        return r
    mean = _np_sum(src, st.n, lambda x: x) / st.n

    def sq(x: F64Array) -> F64Array:
        d = x - mean
        return d * d

    r = np.sqrt(_np_sum(src, st.n, sq) / st.n)
    return r


def _doane(src: _Source, st: _Stats, ptp: np.float64) -> float:
    n = st.n
    if n <= 2:
        return 0.0
    sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
    sigma = _np_std(src, st)
    if not sigma > 0.0:
        return 0.0
    if st.bad:
        mean = np.float64(st.mean)
        acc = _Kahan()
        for c in _finite_chunks(src, st.bad):
            t = (c.astype(np.float64) - mean) / sigma
            acc.add(float(np.sum(t**3)))
        g1 = np.float64(acc.value / n)
    else:
        mean = _np_sum(src, n, lambda x: x) / n

        def cube(x: F64Array) -> F64Array:
            t = x - mean
            np.true_divide(t, sigma, t)
            np.power(t, 3, t)
            return t

        g1 = _np_sum(src, n, cube) / n
    return float(ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1)))


def _fd(src: _Source, st: _Stats) -> float:
    n = st.n
    q = np.array([75.0, 25.0]) / 100.0
    virtual = (n - 1) * q
    prev = np.floor(virtual)
    ranks: list[int] = []
    plan: list[tuple[int, int, float]] = []
    for v, p in zip(virtual.tolist(), prev.tolist(), strict=True):
        if v >= n - 1:
            plan.append((n - 1, n - 1, 0.0))
        else:
            plan.append((int(p), int(p) + 1, v - p))
    for a, b, _ in plan:
        ranks += [a, b]
    vals = _order_stats(src, st, ranks)
    res = []
    for a, b, t in plan:
        lo, hi = np.float64(vals[a]), np.float64(vals[b])
        diff = hi - lo
        r = lo + diff * t
        if t >= 0.5:
            r = hi - diff * (1 - t)
        res.append(r)
    iqr = res[0] - res[1]
    return float(2.0 * iqr * n ** (-1.0 / 3.0))


def _f64_keys(x: F64Array) -> npt.NDArray[np.uint64]:
    u = (x + 0.0).view(np.uint64)  # + 0.0 turns -0.0 into +0.0
    neg = (u >> np.uint64(63)).astype(bool)
    return np.where(neg, ~u, u | np.uint64(1 << 63))


def _f64_from_key(key: int) -> float:
    u = np.array([key], np.uint64)
    bits = np.where(u >> np.uint64(63), u ^ np.uint64(1 << 63), ~u)
    return float(bits.view(np.float64)[0])


def _order_stats(src: _Source, st: _Stats, ranks: list[int]) -> dict[int, float]:
    """Exact k-th smallest finite values (0-based) by radix selection on 16-bit digits;
    a bucket small enough is gathered and partitioned directly. Memory is bounded."""
    gather_limit = 1 << 16
    todo = {r: (0, 0, r) for r in set(ranks)}  # rank -> (prefix, prefix_bits, rank_in_bucket)
    counts_of: dict[tuple[int, int], int] = {(0, 0): st.n}
    found: dict[int, float] = {}
    while todo:
        groups: dict[tuple[int, int], list[int]] = {}
        for r, (p, nb, _) in todo.items():
            groups.setdefault((p, nb), []).append(r)
        gathered: dict[tuple[int, int], list[np.ndarray]] = {}
        hists: dict[tuple[int, int], IntArray] = {}
        for g in list(groups):
            if g[1] >= 64:  # every bit fixed: the value is the key itself
                for r in groups.pop(g):
                    found[r] = _f64_from_key(g[0])
                    del todo[r]
            elif counts_of[g] <= gather_limit:
                gathered[g] = []
            else:
                hists[g] = np.zeros(1 << 16, np.int64)
        if not (gathered or hists):
            continue
        for c in _finite_chunks(src, st.bad):
            x = c.astype(np.float64)
            keys = _f64_keys(x)
            for (p, nb), parts in list(gathered.items()) + list(hists.items()):
                if nb:
                    sel = (keys >> np.uint64(64 - nb)) == np.uint64(p)
                    sub_k = keys[sel]
                else:
                    sel = None
                    sub_k = keys
                if isinstance(parts, list):
                    parts.append(x[sel] if sel is not None else x.copy())
                else:
                    digit = (sub_k >> np.uint64(48 - nb)) & np.uint64(0xFFFF)
                    parts += np.bincount(digit.astype(np.intp), minlength=1 << 16)
        for g, parts in gathered.items():
            vals = np.sort(np.concatenate(parts)) if parts else np.empty(0)
            for r in groups[g]:
                found[r] = float(vals[todo[r][2]])
                del todo[r]
        for g, h in hists.items():
            cum = np.cumsum(h)
            p, nb = g
            for r in groups[g]:
                within = todo[r][2]
                d = int(np.searchsorted(cum, within, side="right"))
                below = int(cum[d - 1]) if d else 0
                key = ((p << 16) | d, nb + 16)
                counts_of[key] = int(h[d])
                todo[r] = (key[0], key[1], within - below)
    return found


def _stone(src: _Source, st: _Stats, ptp: float, first: float, last: float) -> float:
    """NumPy's 'stone' rule: argmin over nbins of the cross-validated risk, which needs the
    equal-width counts for every nbins in 1..max(100, sqrt(n)). Counting is done against the
    union of all those edges, in batches of about a million edges per pass."""
    n = st.n
    if n <= 1 or ptp == 0:
        return 0.0
    upper = max(100, int(np.sqrt(n)))
    best_nb = 1
    best = math.inf
    nb = 1
    while nb <= upper:
        hi_nb = nb
        total = 0
        while hi_nb <= upper and total + hi_nb + 1 <= (1 << 20):
            total += hi_nb + 1
            hi_nb += 1
        batch = range(nb, max(hi_nb, nb + 1))
        edge_sets = [
            _linspace_at(first, last, m + 1, np.arange(m + 1, dtype=np.int64)) for m in batch
        ]
        inner = np.unique(np.concatenate([e[1:-1] for e in edge_sets] + [np.empty(0)]))
        h = np.zeros(inner.size + 1, np.int64)
        for c in _finite_chunks(src, st.bad):
            h += np.bincount(
                np.searchsorted(inner, c.astype(np.float64), side="right"),
                minlength=inner.size + 1,
            )
        # h[i] = #(x with exactly i inner edges <= x), so #(x >= inner[j]) = sum(h[j + 1 :])
        ge = np.cumsum(h[::-1])[::-1]
        for m, e in zip(batch, edge_sets, strict=True):
            pos = np.searchsorted(inner, e[1:-1])
            cge = np.concatenate([[n], ge[pos + 1], [0]])
            counts = cge[:-1] - cge[1:]
            hh = ptp / m
            p_k = counts / n
            risk = (2 - (n + 1) * p_k.dot(p_k)) / hh
            if risk < best:
                best, best_nb = risk, m
        nb = batch[-1] + 1
    if best_nb == upper:
        warnings.warn(
            "The number of bins estimated may be suboptimal.", RuntimeWarning, stacklevel=4
        )
    return ptp / best_nb


# --------------------------------------------------------------------------------------------
# Distributions


def compress_histogram(
    buckets: ArrayLike, bps: Sequence[int] = NORMAL_HISTOGRAM_BPS
) -> list[tuple[int, float]]:
    """TensorBoard's distribution compression of ``[k, 3]`` buckets (left, right, count).

    For each basis point ``bp`` (1/100 of a percent) the value where the cumulative count
    reaches ``bp``, interpolating linearly inside the bucket; the same float operations as
    ``tensorboard.plugins.distribution.compressor.compress_histogram``, so the same result.
    """
    b = np.array(buckets)
    if not b.size:
        return [(int(bp), 0.0) for bp in bps]
    if b.ndim != 2 or b.shape[1] != 3:
        raise ValueError(f"buckets must have shape [k, 3], got {b.shape}")
    minmin, maxmax = b[0][0], b[-1][1]
    counts = b[:, 2]
    right = b[:, 1]
    weights = (counts * bps[-1] / (counts.sum() or 1.0)).cumsum()
    out: list[tuple[int, float]] = []
    j = 0
    while j < len(bps):
        i = int(np.searchsorted(weights, bps[j], side="right"))
        while i < len(weights):
            cum = weights[i]
            prev = weights[i - 1] if i > 0 else 0.0
            if cum == prev:
                i += 1
                continue
            lhs = minmin if (not i or not prev) else max(right[i - 1], minmin)
            rhs = min(right[i], maxmax)
            value = lhs + (bps[j] - prev) * float(rhs - lhs) / (cum - prev)
            out.append((int(bps[j]), float(value)))
            j += 1
            break
        else:
            break
    while j < len(bps):
        out.append((int(bps[j]), float(maxmax)))
        j += 1
    return out


def legacy_to_buckets(
    h: LegacyHistogram, *, loader: Literal["python", "rust"] = "python"
) -> np.ndarray:
    """``[k, 3]`` buckets as TensorBoard migrates a legacy HistogramProto on read.

    ``loader='python'`` (``data_compat._migrate_histogram_value``): drop empty buckets at both
    ends, left edge of the first = ``min``, right edge of the last = ``max``, float32.
    ``loader='rust'`` (``data_compat.rs``): keep every bucket, float64.
    """
    limits = np.asarray(h.bucket_limit, np.float64)
    counts = np.asarray(h.bucket, np.float64)
    if loader == "rust":
        out = np.empty((counts.size, 3))
        if counts.size:
            out[0, 0] = h.min
            out[1:, 0] = limits[:-1]
            out[:-1, 1] = limits[:-1]
            out[-1, 1] = h.max
            out[:, 2] = counts
        return out
    if loader != "python":
        raise ValueError(f"loader must be 'python' or 'rust', got {loader!r}")
    nz = np.flatnonzero(counts > 0)
    if nz.size == 0:
        return np.zeros((0, 3), np.float32)
    start, end = int(nz[0]), int(nz[-1])
    inner = limits[start:end].tolist()
    lefts = [h.min, *inner]
    rights = [*inner, h.max]
    out32: np.ndarray = np.array(
        [lefts, rights, counts[start : end + 1].tolist()], dtype=np.float32
    ).T
    return out32
