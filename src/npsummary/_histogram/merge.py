"""Histograms of data split into parts, each part bucketed on its own and the results merged.

The parts may live in other processes (shards of a ``DTensor``, each rank's activations); this
module only says what each part computes and how the results add up, so that the merged
histogram is the one of all the data at once, bit for bit (buckets, counts, ``min``, ``max``,
``num``), with ``sum``/``sum_squares`` the sums of the parts' float64 sums (within about
1e-15 of the magnitudes; TF1's sequential sums are not reproduced across parts).

A :class:`Plan` is one bucketing (TF1's, TF2's, tensorboardX's default, edges or bin count). Each
part runs it in up to two passes:

1. :meth:`Plan.scan`: a :class:`Part` (count, extremes, the first value TF compares equal to
   zero) and, for fixed edges, already the counts and sums;
2. :meth:`Plan.tally` with the merged part (:func:`merge_parts`): the counts of edges that
   depend on the global extremes, the sums and the non-finite counts, as a :class:`Tally`.

Tallies add up (:func:`merge_tallies`), and :meth:`Plan.finish` turns the merged part and tally
into the same result as the single-array core. Parts are given in the data's order: where two
values tie (a zero-class extreme, whose sign TF takes from the first such value), the part's
``zero_order`` (e.g. the flat index of that value in the whole array) decides.

Rules that need quantiles or NumPy's pairwise ``std`` bits of the whole data (``'auto'``,
``'fd'``, ``'doane'``, ``'scott'``, ``'stone'``) have no exact merge and are refused by
:func:`tbx_plan`; ``'sqrt'``, ``'sturges'`` and ``'rice'`` need only the count and the range.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from . import tbx
from ._results import (
    N_TF1,
    ArrayLike,
    F64Array,
    IntArray,
    LegacyHistogram,
    NonFinite,
    empty_legacy,
)
from ._source import Source, Stats, legacy, scan_minmax, stats_pass
from .bin_rules import RULE_NAMES
from .tf1 import encode_runs, tf1_pass
from .tf2 import tf2_counts, tf2_rows

__all__ = [
    "MERGEABLE_RULES",
    "Part",
    "Plan",
    "Scan",
    "Tally",
    "merge_parts",
    "merge_tallies",
    "split_histogram",
    "tbx_plan",
    "tf1_plan",
    "tf2_plan",
]

#: NumPy bin rules whose bin count needs only the count and range of the data.
MERGEABLE_RULES = ("sqrt", "sturges", "rice")


@dataclass(frozen=True)
class Part:
    """What a part tells the others before counting: its finite count and extremes (``inf``,
    ``-inf`` when it has none), and the first of its values that TF compares equal to zero
    (zeros and subnormals), as the core reports it, with that value's place in the whole data
    (``zero_order``; ``inf`` when the part's extremes are not zero-class)."""

    n: int
    mn: float
    mx: float
    zero_order: float = math.inf
    first_zero: float = 0.0


@dataclass(frozen=True, eq=False)
class Tally:
    """What a part adds up: bucket counts, float64 sums and the non-finite values left out."""

    counts: IntArray
    sum: float = 0.0
    sum_squares: float = 0.0
    nonfinite: NonFinite = field(default_factory=NonFinite)


@dataclass(eq=False)
class Scan:
    """One part after :meth:`Plan.scan`: its source, first-pass statistics, counts counted in
    that pass (or None) and :class:`Part`."""

    src: Source
    st: Stats
    counts: IntArray | None
    part: Part


def merge_parts(parts: Sequence[Part]) -> Part:
    """The :class:`Part` of all the data, from its parts in the data's order."""
    n = 0
    mn, mx = math.inf, -math.inf
    best = Part(0, math.inf, -math.inf)
    for p in parts:
        n += p.n
        if p.mn < mn:  # strictly: of equal extremes the first stays, as in one pass
            mn = p.mn
        if p.mx > mx:
            mx = p.mx
        if p.zero_order < best.zero_order:
            best = p
    return Part(n, mn, mx, best.zero_order, best.first_zero)


def merge_tallies(tallies: Sequence[Tally]) -> Tally:
    """The sum of tallies of equal length."""
    counts = np.sum([t.counts for t in tallies], axis=0, dtype=np.int64)
    nonfinite = NonFinite()
    for t in tallies:
        nonfinite = nonfinite + t.nonfinite
    return Tally(
        counts=np.asarray(counts, np.int64).reshape(-1),
        sum=math.fsum(t.sum for t in tallies),
        sum_squares=math.fsum(t.sum_squares for t in tallies),
        nonfinite=nonfinite,
    )


def _first_zero(src: Source, order: Callable[[int], float]) -> tuple[float, float]:
    """``(order, value)`` of the first value of ``src`` that TF compares equal to zero, as
    :func:`._source.fix_zero_signs` reports it (float32 inputs as a signed zero)."""
    tiny = float(np.finfo(src.work).tiny)
    offset = 0
    for c in src.chunks():
        hits = np.flatnonzero(np.abs(c) < tiny)
        if hits.size:
            v = c[hits[0]]
            z = float(v) if src.work == np.float64 else (-0.0 if np.signbit(v) else 0.0)
            return order(offset + int(hits[0])), z
        offset += c.size
    return math.inf, 0.0


def _part(src: Source, st: Stats, order: Callable[[int], float]) -> Part:
    tiny = float(np.finfo(src.work).tiny)
    if st.n and (abs(st.mn) < tiny or abs(st.mx) < tiny):
        return Part(st.n, st.mn, st.mx, *_first_zero(src, order))
    return Part(st.n, st.mn, st.mx)


def _extremes(whole: Part, work: np.dtype) -> tuple[float, float]:
    """The reported min and max: a zero-class extreme is the first zero-class value."""
    tiny = float(np.finfo(work).tiny)
    mn = whole.first_zero if abs(whole.mn) < tiny else whole.mn
    mx = whole.first_zero if abs(whole.mx) < tiny else whole.mx
    return mn, mx


class Plan:
    """One bucketing of data in parts; see the module docstring for the protocol."""

    #: Says which bucketing this is; parts that disagree on it cannot be merged.
    signature: str = ""

    def first_pass(self, src: Source) -> tuple[Stats, IntArray | None]:
        st = stats_pass(src, Stats(cap=src.chunk))
        return st, None

    def scan(self, values: ArrayLike | Source, order: Callable[[int], float] = float) -> Scan:
        """Pass 1 over one part; ``order(i)`` places its ``i``-th value (C order) in the whole
        data (default: the part is the whole, or a flat piece whose order keys are given)."""
        src = values if isinstance(values, Source) else Source(values)
        st, counts = self.first_pass(src)
        return Scan(src, st, counts, _part(src, st, order))

    def bucket_count(self, whole: Part, work: np.dtype) -> int:
        """How many counts a tally holds, from the merged part."""
        raise NotImplementedError

    def count(self, scan: Scan, whole: Part) -> IntArray:
        """This part's bucket counts (pass 2), given the merged part."""
        raise NotImplementedError

    def finish(self, whole: Part, tally: Tally, work: np.dtype) -> object:
        """The core's result of the merged data: a :class:`LegacyHistogram`, or as
        :func:`.tf2_buckets` ``(rows, nonfinite)``."""
        raise NotImplementedError

    def tally(self, scan: Scan, whole: Part) -> Tally:
        counts = self.count(scan, whole) if whole.n else np.zeros(0, np.int64)
        if counts.size != (self.bucket_count(whole, scan.src.work) if whole.n else 0):
            raise RuntimeError("a part's counts do not have the plan's length")
        return Tally(counts, scan.st.sum, scan.st.sum_squares, scan.st.nonfinite)


class _Tf1Plan(Plan):
    signature = "tf1"

    def first_pass(self, src: Source) -> tuple[Stats, IntArray | None]:
        st, counts = tf1_pass(src, exact_sum=False, moments=False)
        return st, counts.astype(np.int64)

    def bucket_count(self, whole: Part, work: np.dtype) -> int:
        return N_TF1

    def count(self, scan: Scan, whole: Part) -> IntArray:
        if scan.counts is None:
            raise RuntimeError("TF1 counts are made by the first pass")
        return scan.counts

    def finish(self, whole: Part, tally: Tally, work: np.dtype) -> LegacyHistogram:
        if whole.n == 0:
            return empty_legacy(tally.nonfinite)
        mn, mx = _extremes(whole, work)
        limits, bucket = encode_runs(tally.counts.astype(np.float64))
        return legacy(whole.n, tally, mn, mx, limits, bucket)


class _Tf2Plan(Plan):
    def __init__(self, k: int) -> None:
        self.k = k
        self.signature = f"tf2:{k}"

    def first_pass(self, src: Source) -> tuple[Stats, IntArray | None]:
        return scan_minmax(src), None

    def bucket_count(self, whole: Part, work: np.dtype) -> int:
        return self.k if whole.mn != whole.mx else 0

    def count(self, scan: Scan, whole: Part) -> IntArray:
        if self.k == 0 or whole.mn == whole.mx or scan.st.n == 0:
            return np.zeros(self.bucket_count(whole, scan.src.work), np.int64)
        return tf2_counts(scan.src, scan.st, whole.mn, whole.mx, self.k)

    def finish(self, whole: Part, tally: Tally, work: np.dtype) -> tuple[F64Array, NonFinite]:
        counts = tally.counts if tally.counts.size else None
        return tf2_rows(self.k, whole.n, whole.mn, whole.mx, counts), tally.nonfinite


class _TbxPlan(Plan):
    """tensorboardX's bins: ``'tensorflow'``, explicit edges, a bin count or a mergeable rule."""

    def __init__(self, spec: int | str | F64Array, max_bins: int | None, rule_bin_cap: int) -> None:
        self.spec = spec
        self.max_bins = max_bins
        self.cap = rule_bin_cap
        if isinstance(spec, np.ndarray):
            crc = zlib.crc32(np.ascontiguousarray(spec, np.float64).tobytes())
            self.signature = f"tbx:edges:{spec.size}:{crc}:{max_bins}"
        else:
            self.signature = f"tbx:{spec!r}:{max_bins}:{rule_bin_cap}"
        self._edges_for: tuple[Part, F64Array, str | None] | None = None

    def first_pass(self, src: Source) -> tuple[Stats, IntArray | None]:
        if isinstance(self.spec, str) and self.spec == "tensorflow":
            st, counts = tf1_pass(src, exact_sum=False, moments=False)
            return st, counts.astype(np.int64)
        if isinstance(self.spec, np.ndarray):
            counter = tbx._EdgeCounter(self.spec, uniform=False)
            st = stats_pass(src, Stats(cap=src.chunk), counter.add)
            return st, counter.acc
        return super().first_pass(src)

    def _default_closed(self, whole: Part) -> bool:
        """``'tensorflow'`` data reaching the last edge: counted as explicit edges instead."""
        return bool(whole.mx >= tbx._default_edge_array()[-1])

    def _equal_edges(self, whole: Part, work: np.dtype) -> tuple[F64Array, str | None]:
        if self._edges_for is None or self._edges_for[0] is not whole:
            mn, mx = _extremes(whole, work)
            st = Stats()
            st.n, st.mn, st.mx = whole.n, whole.mn, whole.mx
            spec = self.spec
            if not isinstance(spec, (int, str)):
                raise RuntimeError("equal-width edges of explicit edges")
            limits, capped = tbx._equal_width_edges(
                Source(np.empty(0)), st, spec, mn, mx, self.max_bins, self.cap
            )
            self._edges_for = (whole, limits, capped)
        return self._edges_for[1], self._edges_for[2]

    def bucket_count(self, whole: Part, work: np.dtype) -> int:
        if isinstance(self.spec, str) and self.spec == "tensorflow":
            edges = tbx._default_edge_array()
            return edges.size - 1 if self._default_closed(whole) else N_TF1
        if isinstance(self.spec, np.ndarray):
            return self.spec.size - 1
        return self._equal_edges(whole, work)[0].size - 1

    def count(self, scan: Scan, whole: Part) -> IntArray:
        if isinstance(self.spec, str) and self.spec == "tensorflow":
            if not self._default_closed(whole):
                if scan.counts is None:
                    raise RuntimeError("default-bin counts are made by the first pass")
                return scan.counts
            edges = tbx._default_edge_array()
            return tbx._count(scan.src, scan.st, edges, uniform=False)
        if isinstance(self.spec, np.ndarray):
            if scan.counts is None:
                raise RuntimeError("edge counts are made by the first pass")
            return scan.counts
        limits, _ = self._equal_edges(whole, scan.src.work)
        if scan.st.n == 0:
            return np.zeros(limits.size - 1, np.int64)
        return tbx._count(scan.src, scan.st, limits, uniform=True)

    def finish(self, whole: Part, tally: Tally, work: np.dtype) -> LegacyHistogram:
        if whole.n == 0:
            return empty_legacy(tally.nonfinite)
        mn, mx = _extremes(whole, work)
        capped = None
        counts = tally.counts
        if isinstance(self.spec, str) and self.spec == "tensorflow":
            edges = tbx._default_edge_array()
            if not self._default_closed(whole):
                counts = counts[2:-1]
            counts, limits = tbx._group_counts(
                counts, edges, tbx._group(counts.size, self.max_bins)
            )
        elif isinstance(self.spec, np.ndarray):
            group = tbx._group(self.spec.size - 1, self.max_bins)
            counts, limits = tbx._group_counts(counts, self.spec, group)
        else:
            limits, capped = self._equal_edges(whole, work)
        bucket_limit, bucket = tbx._trim_tbx(counts, limits)
        return legacy(whole.n, tally, mn, mx, bucket_limit, bucket, capped)


def tf1_plan() -> Plan:
    """TF1's 1551 exponential buckets (``tf.compat.v1.summary.histogram``)."""
    return _Tf1Plan()


def tf2_plan(k: int) -> Plan:
    """TF2's ``k`` equal-width buckets (``tf.summary.histogram``)."""
    return _Tf2Plan(k)


def tbx_plan(bins: object, max_bins: int | None = None, rule_bin_cap: int | None = None) -> Plan:
    """tensorboardX's ``add_histogram(bins=..., max_bins=...)``, as :func:`.binned_histogram`
    takes them; a rule without an exact merge is a ``ValueError``."""
    from .._common.convert import check_int

    spec = tbx._parse_bins(bins)
    mb = check_int(max_bins, "max_bins", minimum=1, allow_none=True)
    cap = check_int(
        tbx.RULE_BIN_CAP if rule_bin_cap is None else rule_bin_cap, "rule_bin_cap", minimum=1
    )
    if isinstance(spec, str) and spec in RULE_NAMES and spec not in MERGEABLE_RULES:
        raise ValueError(
            f"bins={spec!r} needs the quantiles or NumPy's exact std of all the data at once, "
            "which data split across processes cannot give exactly; use 'tensorflow', a bin "
            f"count, explicit edges or one of {MERGEABLE_RULES}"
        )
    return _TbxPlan(spec, mb, cap)


def split_histogram(plan: Plan, parts: Sequence[ArrayLike]) -> object:
    """The merged result of ``parts`` (flat pieces of the data, in order) computed part by part:
    the protocol run in one process, as :mod:`npsummary._summaries.spread` runs it across
    processes. Used by tests and by callers holding the pieces already."""
    sources = [Source(p) for p in parts]
    works = {s.work for s in sources}
    if len(works) > 1:
        raise ValueError(f"parts read as different dtypes: {sorted(map(str, works))}")
    scans = []
    base = 0
    for s in sources:
        scans.append(plan.scan(s, functools.partial(_offset_order, base)))
        base += s.size
    whole = merge_parts([s.part for s in scans])
    tally = merge_tallies([plan.tally(s, whole) for s in scans])
    work = sources[0].work if sources else np.dtype(np.float64)
    return plan.finish(whole, tally, work)


def _offset_order(base: int, i: int) -> float:
    return float(base + i)
