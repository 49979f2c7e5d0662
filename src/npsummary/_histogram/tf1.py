"""TF1 exponential buckets, as ``tensorflow/core/lib/histogram/histogram.cc``.

1551 bucket limits ``[-DBL_MAX, -9.92e19 .. -1e-12, 0, 1e-12 .. 9.92e19, DBL_MAX]`` (ratio
1.1, built by repeated multiplication in double); bucket ``i`` holds ``limit[i-1] <= x <
limit[i]`` (``upper_bound``); ``x == DBL_MAX`` is put in the last bucket (TF indexes past its
buffer there). ``EncodeToProto``: a non-empty bucket is emitted as ``(limit, count)`` and each
run of empty buckets collapses to one ``(limit of the run's last bucket, 0)``, so an empty
histogram is ``min=DBL_MAX, max=-DBL_MAX, bucket_limit=[DBL_MAX], bucket=[0]``. TF runs with
denormals-are-zero, so a subnormal (or a float32 subnormal, flushed by TF's cast) counts as a
signed zero: negative ones fall in the ``[0, 1e-12)`` bucket. ``min``/``max`` compare like TF's
loop, so an extreme that equals zero is the first such value in input order (sign included).
``exact_sum=True`` reproduces TF's sequential double sums bit for bit (checked against TF 2.21
goldens). Bucketing is a table lookup per value, never a search.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._results import (
    N_TF1,
    TF1_BUCKET_LIMITS,
    ArrayLike,
    F64Array,
    IntArray,
    LegacyHistogram,
    VariableStats,
    empty_legacy,
)
from ._source import (
    CHUNK,
    PARALLEL_MIN_CHUNKS,
    Source,
    Stats,
    fix_zero_signs,
    in_two_threads,
    legacy,
    second_core_free,
    split_in_two,
    stats_pass,
)

__all__ = ["encode_runs", "tf1_histogram", "tf1_pass", "variable_stats"]


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


# float32 keys: slots 0 .. N_TF1 are buckets, slots above count down to bucket 0 (see below)
_KEY_TOP = 2 * N_TF1 + 2


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
    key_map[N_TF1 + 1 :] = _KEY_TOP - key_map[N_TF1 + 1 :]
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
            # cell indices and keys go to take and bincount as intp, which they would
            # otherwise convert in a temporary of the chunk's size on every call
            self.index = np.empty(cap, np.intp)
            self.key32 = np.empty(cap, np.uint32)
            self.keys = np.zeros(_KEY_TOP + 1, np.int64)
            return
        self.table = _tf1_table64()
        self.cells = np.empty(cap, np.intp)
        self.bucket = np.empty(cap, np.intp)
        self.thr = np.empty(cap, self.table.thr.dtype)
        self.ge = np.empty(cap, np.bool_)
        self.acc = np.zeros(N_TF1 + 1, np.int64)  # +1: x == DBL_MAX, clamped later

    def add(self, c: np.ndarray) -> None:
        n = c.size
        if self.f32:
            b = c.view(np.uint32)
            index = self.index[:n]
            key = self.key32[:n]
            np.right_shift(b, self.shift, out=index, casting="unsafe")
            np.take(self.off, index, out=key, mode="wrap")  # in range; "wrap" is the fastest
            np.add(key, b, out=key)
            np.right_shift(key, self.shift, out=index, casting="unsafe")
            self.keys += np.bincount(index, minlength=self.keys.size)
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

    def absorb(self, other: _Tf1Counter) -> None:
        """Add the counts of ``other`` (same work dtype)."""
        if self.f32:
            self.keys += other.keys
        else:
            self.acc += other.acc

    def counts(self) -> F64Array:
        acc: F64Array
        if self.f32:
            weighted = np.bincount(self.key_map, weights=self.keys.astype(np.float64))
            acc = np.asarray(weighted, dtype=np.float64)  # already float64; typed for mypy
        else:
            acc = self.acc.astype(np.float64)
        acc[N_TF1 - 1] += acc[N_TF1]  # x == DBL_MAX: TF writes past its buffer; we clamp
        return acc[:N_TF1]


def encode_runs(counts: F64Array, right: F64Array = TF1_BUCKET_LIMITS) -> tuple[F64Array, F64Array]:
    """``Histogram::EncodeToProto(preserve_zero_buckets=false)`` of buckets with right edges
    ``right``: a non-empty bucket is kept, and a run of empty ones only as its last bucket."""
    nz = counts > 0
    nxt = np.ones_like(nz)
    nxt[:-1] = nz[1:]
    idx = np.flatnonzero(nz | nxt)
    return right[idx].copy(), counts[idx]


def tf1_pass(
    src: Source, *, exact_sum: bool, moments: bool, parallel: bool = True
) -> tuple[Stats, F64Array]:
    """Statistics and the 1551 TF1 bucket counts of ``src``, in one pass.

    Inputs of :data:`PARALLEL_MIN_CHUNKS` chunks or more use a second thread when a second core
    is free (:func:`second_core_free`), with results the same, bit for bit, as one pass
    (``parallel=False``). Without exact sums or moments, the second half (split at a chunk
    boundary) is counted by the thread while this one counts the first, and the halves merge
    in input order. With them (their sums run in input order), the thread counts the buckets
    while this one computes the statistics. The threads overlap only in part (each NumPy call
    is short, and taking the GIL back from the other thread waits for it): measured 10-20 %
    faster than one thread on two free cores (benchmarks/RESULTS.md).
    """
    if parallel and src.size >= PARALLEL_MIN_CHUNKS * CHUNK and second_core_free():
        halves = None if exact_sum or moments else split_in_two(src)
        if halves is not None:
            return _tf1_pass_in_two(*halves)
        return _tf1_pass_counting_aside(src, exact_sum=exact_sum, moments=moments)
    counter = _Tf1Counter(src.work, src.chunk)
    st = Stats(exact_sum=exact_sum, moments=moments, cap=src.chunk)
    stats_pass(src, st, counter.add)
    return st, counter.counts()


def _tf1_pass_in_two(first: Source, second: Source, offset: int) -> tuple[Stats, F64Array]:
    # every buffer exists before the thread starts (and the cached tables are built): the
    # peak memory does not depend on how the two threads interleave
    counter = _Tf1Counter(first.work, first.chunk)
    later_counter = _Tf1Counter(second.work, second.chunk)
    st = Stats(cap=first.chunk)
    later = Stats(cap=second.chunk, record_sums=True)
    in_two_threads(
        lambda: stats_pass(first, st, counter.add),
        lambda: stats_pass(second, later, later_counter.add),
    )
    st.absorb(later, offset)
    counter.absorb(later_counter)
    return st, counter.counts()


def _tf1_pass_counting_aside(
    src: Source, *, exact_sum: bool, moments: bool
) -> tuple[Stats, F64Array]:
    """The buckets counted by a thread while this one computes the statistics."""
    counter = _Tf1Counter(src.work, src.chunk)
    st = Stats(exact_sum=exact_sum, moments=moments, cap=src.chunk)

    def count_finite() -> None:
        for c in src.chunks():
            if not (math.isfinite(c.min()) and math.isfinite(c.max())):
                c = c[np.isfinite(c)]  # what Stats.finite leaves to count
            if c.size:
                counter.add(c)

    in_two_threads(lambda: stats_pass(src, st), count_finite)
    return st, counter.counts()


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
    src = Source(values)
    st, counts = tf1_pass(src, exact_sum=exact_sum, moments=False)
    if st.n == 0:
        return empty_legacy(st.nonfinite)
    mn, mx = fix_zero_signs(src, st.mn, st.mx)
    limits, bucket = encode_runs(counts)
    return legacy(st.n, st, mn, mx, limits, bucket)


def variable_stats(values: ArrayLike, *, exact_sum: bool = False) -> VariableStats:
    """Mean, population stddev, min, max and the TF1 histogram of ``values`` in one pass.

    ``stddev`` is ``sqrt(mean((x - mean)**2))`` (the ``variable_summaries`` recipe) computed in
    float64 with Chan's pairwise merge of per-chunk centred moments, not from sum of squares.
    Non-finite values are left out (see ``histogram.nonfinite``). Empty input gives
    ``mean = stddev = nan``, ``min = inf``, ``max = -inf`` (the reductions' identities).
    """
    src = Source(values)
    st, counts = tf1_pass(src, exact_sum=exact_sum, moments=True)
    if st.n == 0:
        return VariableStats(
            mean=math.nan,
            stddev=math.nan,
            min=math.inf,
            max=-math.inf,
            histogram=empty_legacy(st.nonfinite),
        )
    mn, mx = fix_zero_signs(src, st.mn, st.mx)
    limits, bucket = encode_runs(counts)
    hist = legacy(st.n, st, mn, mx, limits, bucket)
    return VariableStats(
        mean=st.mean,
        stddev=math.sqrt(max(st.m2, 0.0) / st.n),
        min=mn,
        max=mx,
        histogram=hist,
    )
