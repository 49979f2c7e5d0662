"""tensorboardX's and torch's ``add_histogram(bins=..., max_bins=...)`` histograms, streamed.

``np.histogram`` bins of the float64 values: an integer count of equal-width bins over ``[min,
max]`` (widened by 0.5 when constant), explicit non-decreasing edges with the last bin closed,
one of NumPy's bin-rule strings (see :mod:`.bin_rules`), or ``'tensorflow'``, which both libraries
turn into their ``default_bins`` edges (:func:`tensorboardx_default_edges`: 0 and
``±1e-12 * 1.1**k`` up to 1e20). Then optional ``max_bins`` grouping (groups of ``nbins //
max_bins`` adjacent bins, last group padded), then their trim: keep one empty bucket left of the
first non-empty one and drop trailing empties, keeping the empty buckets in between (TF1's C++
op, :mod:`.tf1`, drops those); ``bucket_limit`` holds right edges. Values outside explicit edges
are not counted but, as in tensorboardX and torch, stay in min/max/num/sum.

A rule asking for more than ``rule_bin_cap`` bins is grouped down as if ``max_bins=rule_bin_cap``;
where NumPy would raise "Too many bins for data range" the bins are grouped until the edges
increase. The result's ``capped`` says so in both cases (the caller warns, naming the tag).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

from .._common.convert import check_int
from ._results import (
    DBL_MAX,
    ArrayLike,
    F64Array,
    IntArray,
    LegacyHistogram,
    empty_legacy,
)
from ._source import Source, Stats, finite_chunks, fix_zero_signs, legacy, stats_pass
from .bin_rules import RULE_NAMES, linspace_at, rule_nbins
from .tf1 import tf1_pass

__all__ = ["RULE_BIN_CAP", "BinsSpec", "binned_histogram", "tensorboardx_default_edges"]

RULE_BIN_CAP = 10_000
BinsSpec: TypeAlias = "int | str | Sequence[float] | np.ndarray"


@functools.lru_cache(maxsize=1)
def _default_edges() -> tuple[float, ...]:
    value, positive = 1e-12, []
    while value < 1e20:  # the same repeated product as theirs, so the same rounding
        positive.append(value)
        value *= 1.1
    return (*(-v for v in reversed(positive)), 0.0, *positive)


@functools.lru_cache(maxsize=1)
def _default_edge_array() -> F64Array:
    edges = np.array(_default_edges(), dtype=np.float64)
    edges.flags.writeable = False
    return edges


def tensorboardx_default_edges() -> list[float]:
    """tensorboardX's and torch's ``SummaryWriter.default_bins``: the edges ``bins='tensorflow'``
    stands for, 0 and ``±1e-12 * 1.1**k`` below 1e20 (1549 edges)."""
    return list(_default_edges())


def binned_histogram(
    values: ArrayLike,
    bins: BinsSpec,
    max_bins: int | None = None,
    *,
    rule_bin_cap: int = RULE_BIN_CAP,
) -> LegacyHistogram:
    """tensorboardX ``add_histogram(values, bins=..., max_bins=...)`` fields, streamed.

    Args:
      values: real array of any shape.
      bins: an int (equal-width bins over ``[min, max]``), a 1-D non-decreasing sequence of
        edges, one of NumPy's rule names (``'auto', 'fd', 'doane', 'scott', 'stone', 'rice',
        'sturges', 'sqrt'``), or ``'tensorflow'`` (the edges of
        :func:`tensorboardx_default_edges`).
      max_bins: if the histogram has more bins, group ``nbins // max_bins`` adjacent bins.
      rule_bin_cap: most bins a rule name may produce before grouping kicks in (the result's
        ``capped`` then says so).

    Returns:
      :class:`LegacyHistogram`; empty (or all non-finite) input gives TF1's empty histogram.

    Raises:
      TypeError: ``values`` not real; ``bins``, ``max_bins`` or ``rule_bin_cap`` of the wrong
        type.
      ValueError: unknown rule, non-positive bin count, edges not 1-D, NaN or decreasing,
        ``max_bins`` or ``rule_bin_cap`` < 1.
    """
    spec = _parse_bins(bins)
    mb = check_int(max_bins, "max_bins", minimum=1, allow_none=True)
    cap = check_int(rule_bin_cap, "rule_bin_cap", minimum=1)
    if isinstance(spec, str) and spec == "tensorflow":
        return _default_bins_histogram(values, mb)
    src = Source(values)
    st = stats_pass(src, Stats(moments=True, cap=src.chunk))
    if st.n == 0:
        return empty_legacy(st.nonfinite)
    mn, mx = fix_zero_signs(src, st.mn, st.mx)
    capped = None
    if isinstance(spec, np.ndarray):
        counts = _count(src, st, spec, uniform=False)
        counts, limits = _group_counts(counts, spec, _group(spec.size - 1, mb))
    else:
        limits, capped = _equal_width_edges(src, st, spec, mn, mx, mb, cap)
        counts = _count(src, st, limits, uniform=True)
    bucket_limit, bucket = _trim_tbx(counts, limits)
    return legacy(st.n, st, mn, mx, bucket_limit, bucket, capped)


def _default_bins_histogram(values: ArrayLike, max_bins: int | None) -> LegacyHistogram:
    """``bins='tensorflow'``: ``np.histogram`` over :func:`tensorboardx_default_edges`, counted in
    one pass by TF1's counter. Those edges are TF1's bucket limits without ``±DBL_MAX``, so bin
    ``j`` is TF1 bucket ``j + 2``; values left of the first edge fall in TF1's buckets 0 and 1,
    which are not bins. Only a value equal to the last edge (np.histogram closes the last bin)
    needs the general path, taken when the maximum reaches it."""
    edges = _default_edge_array()
    src = Source(values)
    st, tf1_counts = tf1_pass(src, exact_sum=False, moments=False)
    if st.n == 0:
        return empty_legacy(st.nonfinite)
    mn, mx = fix_zero_signs(src, st.mn, st.mx)
    if mx >= edges[-1]:
        return binned_histogram(values, edges, max_bins)
    counts = tf1_counts[2:-1].astype(np.int64)
    counts, limits = _group_counts(counts, edges, _group(counts.size, max_bins))
    bucket_limit, bucket = _trim_tbx(counts, limits)
    return legacy(st.n, st, mn, mx, bucket_limit, bucket)


def _equal_width_edges(
    src: Source,
    st: Stats,
    spec: int | str,
    mn: float,
    mx: float,
    max_bins: int | None,
    rule_bin_cap: int,
) -> tuple[F64Array, str | None]:
    """The (grouped) edges of ``spec`` equal-width bins, or a rule's, and why they were capped."""
    first, last = np.float64(mn), np.float64(mx)
    if first == last:
        first, last = first - 0.5, last + 0.5
    if isinstance(spec, str):
        nbins = rule_nbins(spec, src, st, float(first), float(last))
        asked = f"bins={spec!r} asked for {nbins} bins"
    else:
        nbins = spec
        asked = f"bins={nbins}"
    notes: list[str] = []
    s = _group(nbins, max_bins)
    if isinstance(spec, str) and nbins // s > rule_bin_cap:
        s = max(s, nbins // rule_bin_cap)
        notes.append(f"{asked}; grouped {s} at a time (rule_bin_cap={rule_bin_cap})")
    limits, widened = _equal_edges(float(first), float(last), nbins, s, asked)
    if widened is not None:
        notes.append(widened)
    return limits, "; ".join(notes) or None


def _group(nbins: int, max_bins: int | None) -> int:
    """tensorboardX's group size: ``nbins // max_bins`` when there are more bins than that."""
    if max_bins is not None and nbins > max_bins:
        return nbins // max_bins
    return 1


def _grouped_edge_index(nbins: int, s: int) -> IntArray:
    """Indices 0, s, 2s, ... and ``nbins`` of the edges left after grouping by ``s``."""
    idx = np.arange(0, nbins, s, dtype=np.int64)
    return np.append(idx, nbins)


def _sum_groups(counts: IntArray, s: int) -> IntArray:
    """Sums of ``s`` adjacent counts, the last group padded with zeros."""
    rem = counts.size % s
    if rem:
        counts = np.concatenate([counts, np.zeros(s - rem, counts.dtype)])
    summed: IntArray = counts.reshape(-1, s).sum(axis=1)
    return summed


def _equal_edges(
    first: float, last: float, nbins: int, s: int, asked: str
) -> tuple[F64Array, str | None]:
    """Edges 0, s, 2s, ... and nbins of ``np.linspace(first, last, nbins + 1)``.

    NumPy raises "Too many bins for data range" when the edges are not strictly increasing;
    a logger should not fail on data, so groups are widened until they are, down to the single
    bin ``[first, last]``; the second result then says so."""
    limits = linspace_at(first, last, nbins + 1, _grouped_edge_index(nbins, s))
    widened = False
    while limits.size > 2 and np.any(limits[1:] <= limits[:-1]):
        s = nbins if s * 2 >= nbins else s * 2
        widened = True
        limits = linspace_at(first, last, nbins + 1, _grouped_edge_index(nbins, s))
    if not widened:
        return limits, None
    return limits, (
        f"{asked}: too many bins for the data range [{first!r}, {last!r}]; grouped {s} at a time"
    )


def _count(src: Source, st: Stats, edges: F64Array, *, uniform: bool) -> IntArray:
    """Counts of the finite values of ``src`` in the bins of ``edges`` (see _EdgeCounter)."""
    if st.mn < edges[0] or st.mx > edges[-1]:
        # equal-width edges narrower than the data (a zero-class extreme reported as the first
        # such value): the arithmetic guess assumes every value in range
        uniform = False
    counter = _EdgeCounter(edges, uniform=uniform)
    for c in finite_chunks(src, st.bad):
        counter.add(c)
    return counter.acc


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
    counts = _sum_groups(counts, s)
    new = np.empty(counts.size + 1, limits.dtype)
    new[:-1] = limits[:-1:s]
    new[-1] = limits[-1]
    return counts, new


def _parse_bins(bins: object) -> int | str | F64Array:
    """``bins`` as a bin count, a rule name or float64 edges (1-D, non-decreasing, no NaN)."""
    if isinstance(bins, str):
        if bins == "tensorflow" or bins in RULE_NAMES:
            return bins
        raise ValueError(
            f"bins={bins!r} is not a bin rule; expected 'tensorflow' or one of {RULE_NAMES}"
        )
    if np.ndim(bins) == 0:  # type: ignore[arg-type]
        try:
            return check_int(bins, "bins", minimum=1)
        except TypeError:
            raise TypeError(
                f"bins must be an int, a rule name or edges, got {type(bins).__name__} {bins!r}"
            ) from None
    try:
        edges = np.asarray(bins, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"bins: bin edges must be real numbers, got {bins!r}") from e
    if edges.ndim != 1 or edges.size < 2:
        raise ValueError(
            f"bins: bin edges must be 1-D with at least 2 entries, got shape {edges.shape}"
        )
    if np.isnan(edges).any():
        raise ValueError(f"bins: bin edges must not contain NaN, got {edges.tolist()!r}")
    if np.any(edges[1:] < edges[:-1]):
        raise ValueError(f"bins: bin edges must be non-decreasing, got {edges.tolist()!r}")
    return edges
