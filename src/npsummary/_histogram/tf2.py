"""TF2 equal-width buckets: ``tf.summary.histogram``'s v3 algorithm and ``histogram_pb``.

``k`` rows ``(left, right, count)`` in float64; all zeros for no data or ``k == 0``; for constant
data every row is ``(v, v, 0)`` but the last ``(v, v, n)``; else ``width = (max - min) / k``,
``index = min(floor((x - min) / width), k - 1)`` in float64 and ``edges = linspace(min, max, k +
1)``: identical edges and counts to TensorBoard's ``histogram_pb``. Where ``max - min`` overflows
or ``width`` underflows to 0 (TF gives NaN edges there) the same formula is evaluated on values
scaled by a power of two. Large float32 inputs multiply by ``1 / width`` instead of dividing
when a search over float32 proves that gives the same index for every possible value.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .._common.convert import check_int
from ._results import ArrayLike, F64Array, IntArray, NonFinite
from ._source import Source, Stats, finite_chunks, in_two_threads, scan_minmax, split_in_two

__all__ = ["DEFAULT_BUCKET_COUNT", "tf2_buckets", "tf2_counts", "tf2_rows"]

DEFAULT_BUCKET_COUNT = 30
_INT32_MAX = 2**31 - 1


def _check_bucket_count(bucket_count: object) -> int:
    k = check_int(bucket_count, "bucket_count", minimum=0)
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
    then one bucketing scan; each runs the two halves of a large input in two threads.

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
    src = Source(values)
    st = scan_minmax(src)
    counts = None
    if k and st.n and st.mn != st.mx:
        counts = tf2_counts(src, st, st.mn, st.mx, k)
    return tf2_rows(k, st.n, st.mn, st.mx, counts), st.nonfinite


def tf2_rows(k: int, n: int, mn: float, mx: float, counts: IntArray | None) -> F64Array:
    """The ``[k, 3]`` rows of ``n`` finite values in ``[mn, mx]`` with these ``counts``
    (ignored, and may be None, for no data, ``k == 0`` or constant data)."""
    if k == 0 or n == 0:
        return np.zeros((k, 3))
    out = np.empty((k, 3))
    if mn == mx:
        out[:, 0] = mn
        out[:, 1] = mn
        out[:, 2] = 0.0
        out[k - 1, 2] = n
        return out
    edges = _edges(np.float64(mn), np.float64(mx), k)
    out[:, 0] = edges[:-1]
    out[:, 1] = edges[1:]
    out[:, 2] = 0.0 if counts is None else counts
    return out


def _scale(mn: np.float64, mx: np.float64, k: int) -> tuple[float, float]:
    """``(width, scale)``: the bucket width, and the power of two the values are scaled by
    where ``max - min`` overflows or the width underflows (1.0 elsewhere)."""
    with np.errstate(over="ignore"):
        rng = mx - mn
    width = rng / k
    if not np.isfinite(rng):
        return float(width), 0.25
    if width == 0.0:
        return float(width), 2.0**900
    return float(width), 1.0


def _edges(mn: np.float64, mx: np.float64, k: int) -> F64Array:
    """The ``k + 1`` edges of non-constant data in ``[mn, mx]``."""
    _, scale = _scale(mn, mx, k)
    if scale != 1.0:
        edges = np.linspace(mn * scale, mx * scale, k + 1) / scale
        edges[0], edges[-1] = mn, mx
        return edges
    with np.errstate(over="ignore", invalid="ignore"):  # k * step may round past max
        return np.linspace(mn, mx, k + 1)


def tf2_counts(src: Source, st: Stats, mn: float, mx: float, k: int) -> IntArray:
    """The counts of the finite values of ``src`` (``st``: its scan) in the ``k`` buckets of
    non-constant data in ``[mn, mx]``, which may be the extremes of more data than ``src``."""
    mn64, mx64 = np.float64(mn), np.float64(mx)
    width, scale = _scale(mn64, mx64, k)
    if scale != 1.0:
        return _tf2_counts_scaled(src, st, mn, mx, k, scale)
    multiply = (
        src.work == np.float32
        and st.n >= (1 << 20)
        and k <= 4096
        and _reciprocal_is_exact(mn, mx, width, k)
    )
    return _count(src, st, k, mn, width, multiply)


def _count(src: Source, st: Stats, k: int, mn: float, width: float, multiply: bool) -> IntArray:
    """The counts of the finite values of ``src``; the halves of a large input in two
    threads (counts add up, so the result is the same)."""
    halves = split_in_two(src)
    if halves is None:
        counter = _EqualWidthCounter(k, mn, width, multiply=multiply, cap=src.chunk)
        return _count_chunks(src, st.bad, counter)
    first, second, offset = halves
    # both counters' buffers exist before the thread starts: the peak memory does not depend
    # on how the two threads interleave
    a = _EqualWidthCounter(k, mn, width, multiply=multiply, cap=first.chunk)
    b = _EqualWidthCounter(k, mn, width, multiply=multiply, cap=second.chunk)
    first_bad = {i for i in st.bad if i < offset}
    second_bad = {i - offset for i in st.bad if i >= offset}
    counts_a, counts_b = in_two_threads(
        lambda: _count_chunks(first, first_bad, a), lambda: _count_chunks(second, second_bad, b)
    )
    return counts_a + counts_b


def _count_chunks(src: Source, bad: set[int], counter: _EqualWidthCounter) -> IntArray:
    for c in finite_chunks(src, bad):
        counter.add(c)
    return counter.counts()


def _tf2_counts_scaled(
    src: Source, st: Stats, mn: float, mx: float, k: int, scale: float
) -> IntArray:
    """The v3 formula on values scaled by a power of two, for ranges TF's float64 can't hold."""
    smn = mn * scale
    width = (mx * scale - smn) / k
    counter = _EqualWidthCounter(k, smn, width, multiply=False, cap=src.chunk)
    for c in finite_chunks(src, st.bad):
        counter.add(c.astype(np.float64) * scale)
    return counter.counts()
