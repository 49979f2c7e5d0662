"""NumPy's bin-rule strings (``np.histogram_bin_edges``), streamed and exact.

A rule name (``'auto', 'fd', 'doane', 'scott', 'stone', 'rice', 'sturges', 'sqrt'``) gives the
same bin count as NumPy on the float64 values, and :func:`linspace_at` the same edges as
``np.linspace`` without building them all. Scott's and Doane's rules use NumPy's exact
``np.std``/``np.mean`` bits (its pairwise summation tree, streamed), Freedman-Diaconis exact order
statistics (radix selection, :func:`order_stats`), Stone the exact counts of every candidate.
``'auto'`` is the installed NumPy's rule, as tensorboardX gets it from ``np.histogram``: NumPy 2.3
changed it from ``min(fd, sturges)`` to ``min(max(fd, sqrt / 2), sturges)``.
Memory stays bounded: nothing here sorts or copies the whole input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .._common.errors import warn_user
from ._results import F64Array, IntArray
from ._source import CHUNK, Kahan, Source, Stats, finite_chunks

__all__ = ["RULE_NAMES", "linspace_at", "order_stats", "rule_nbins"]

RULE_NAMES = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")


def linspace_at(first: float, last: float, num: int, idx: IntArray) -> F64Array:
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


@functools.cache
def _auto_floors_fd_at_half_sqrt() -> bool:
    """Whether the installed NumPy's ``'auto'`` rule is the newer one.

    NumPy 2.3 changed ``'auto'`` from ``min(fd, sturges)`` (``sturges`` when ``fd`` is 0) to
    ``min(max(fd, sqrt / 2), sturges)``, which caps the bin count of data whose interquartile
    range is tiny. tensorboardX calls the installed NumPy, so we follow whichever rule it has;
    asked once, on data where the two rules disagree: IQR 0 gives 5 bins before, 6 after.
    """
    probe = np.array([0.0] * 8 + [1.0])
    return len(np.histogram_bin_edges(probe, "auto")) - 1 == 6


def rule_nbins(rule: str, src: Source, st: Stats, first: float, last: float) -> int:
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
        if _auto_floors_fd_at_half_sqrt():
            width = min(max(fd_bw, ptp / np.sqrt(n) / 2), sturges_bw)
        else:
            width = min(fd_bw, sturges_bw) if fd_bw else sturges_bw
    else:  # stone
        width = _stone(src, st, float(ptp), first, last)
    if width:
        with np.errstate(over="ignore"):
            q = np.ceil((np.float64(last) - np.float64(first)) / width)
        return int(q) if q < 2.0**62 else 2**62  # NumPy would fail; the cap groups it
    return 1


class _SeqReader:
    """Reads consecutive ranges of the flattened input as float64."""

    def __init__(self, src: Source) -> None:
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


def _np_sum(src: Source, n: int, f: Callable[[F64Array], F64Array]) -> np.float64:
    """``np.sum(f(x))`` of the float64 data with NumPy's own pairwise split, streamed.

    NumPy's contiguous float sum halves the range (rounded down to a multiple of 8) until it is
    small; summing the same segments in the same tree gives the same bits."""
    reader = _SeqReader(src)

    def rec(m: int) -> np.float64:
        r: np.float64
        if m <= CHUNK:
            r = np.add.reduce(f(reader.read(m)))
            return r
        m2 = m // 2
        m2 -= m2 % 8
        left = rec(m2)
        r = left + rec(m - m2)
        return r

    return rec(n)


def _np_std(src: Source, st: Stats) -> np.float64:
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


def _doane(src: Source, st: Stats, ptp: np.float64) -> float:
    n = st.n
    if n <= 2:
        return 0.0
    sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
    sigma = _np_std(src, st)
    if not sigma > 0.0:
        return 0.0
    if st.bad:
        mean = np.float64(st.mean)
        acc = Kahan()
        for c in finite_chunks(src, st.bad):
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


def _fd(src: Source, st: Stats) -> float:
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
    vals = order_stats(src, st, ranks)
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


def order_stats(src: Source, st: Stats, ranks: list[int]) -> dict[int, float]:
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
        for c in finite_chunks(src, st.bad):
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


def _stone(src: Source, st: Stats, ptp: float, first: float, last: float) -> float:
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
            linspace_at(first, last, m + 1, np.arange(m + 1, dtype=np.int64)) for m in batch
        ]
        inner = np.unique(np.concatenate([e[1:-1] for e in edge_sets] + [np.empty(0)]))
        h = np.zeros(inner.size + 1, np.int64)
        for c in finite_chunks(src, st.bad):
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
        # NumPy's own note, attributed to the user's line like every warning of ours.
        warn_user("The number of bins estimated may be suboptimal.", RuntimeWarning)
    return ptp / best_nb
