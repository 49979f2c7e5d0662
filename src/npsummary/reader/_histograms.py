"""TensorBoard's read-side histogram algorithms: legacy migration and distribution compression.

* :func:`legacy_to_buckets` turns a legacy ``HistogramProto`` (TF1, tensorboardX, torch) into
  the histograms plugin's ``[k, 3]`` rows ``(left, right, count)`` the way TensorBoard migrates
  it on read: the Python loader (``data_compat._migrate_histogram_value``, the default here)
  drops empty buckets at both ends, uses ``min``/``max`` as the outer edges and rounds to
  float32; the Rust loader keeps every bucket in float64.
* :func:`compress_histogram` is TensorBoard's ``compressor.compress_histogram``, behind the
  Distributions dashboard: for each basis point of the normal CDF (``NORMAL_HISTOGRAM_BPS``) the
  value where the cumulative count reaches it, interpolating linearly inside the bucket, with the
  same float operations, so the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from .._common.convert import as_list, as_numeric_array, check_int

__all__ = ["NORMAL_HISTOGRAM_BPS", "LegacyLike", "compress_histogram", "legacy_to_buckets"]

# Normal CDF at (-inf, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, +inf) standard deviations, in basis points.
NORMAL_HISTOGRAM_BPS: tuple[int, ...] = (0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000)


class LegacyLike(Protocol):
    """A legacy histogram: ``HistogramProto`` or anything with its fields."""

    @property
    def min(self) -> float: ...
    @property
    def max(self) -> float: ...
    @property
    def bucket_limit(self) -> Sequence[float] | npt.ArrayLike: ...
    @property
    def bucket(self) -> Sequence[float] | npt.ArrayLike: ...


def compress_histogram(
    buckets: npt.ArrayLike, bps: Sequence[int] = NORMAL_HISTOGRAM_BPS
) -> list[tuple[int, float]]:
    """TensorBoard's distribution compression of ``[k, 3]`` buckets (left, right, count).

    Args:
        buckets: ``[k, 3]`` rows ``(left, right, count)``.
        bps: basis points (1/100 of a percent) to report.

    Returns:
        ``(bp, value)`` pairs, one per basis point.

    Raises:
        ValueError: ``buckets`` is not ``[k, 3]``.
    """
    bps = [
        check_int(bp, f"bps[{i}]", minimum=0, maximum=10_000)
        for i, bp in enumerate(as_list(bps, "compress_histogram", "bps"))
    ]
    if not bps:
        raise ValueError("compress_histogram: bps must name at least one basis point")
    b = as_numeric_array(buckets, "compress_histogram", "buckets")
    if not b.size:
        return [(int(bp), 0.0) for bp in bps]
    if b.ndim != 2 or b.shape[1] != 3:
        raise ValueError(f"compress_histogram: buckets must have shape [k, 3], got {b.shape}")
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


def legacy_to_buckets(h: LegacyLike, *, loader: Literal["python", "rust"] = "python") -> np.ndarray:
    """``[k, 3]`` buckets as TensorBoard migrates a legacy HistogramProto on read.

    Args:
        h: the legacy histogram.
        loader: ``"python"`` (``data_compat._migrate_histogram_value``: drop empty buckets at
            both ends, left edge of the first = ``min``, right edge of the last = ``max``,
            float32) or ``"rust"`` (``data_compat.rs``: keep every bucket, float64).

    Returns:
        The ``[k, 3]`` array.

    Raises:
        ValueError: unknown ``loader``, or bucket and limit counts that differ.
    """
    limits = np.asarray(h.bucket_limit, np.float64)
    counts = np.asarray(h.bucket, np.float64)
    if limits.shape != counts.shape:
        raise ValueError(f"histogram has {counts.size} buckets but {limits.size} limits")
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
    with np.errstate(over="ignore"):  # edges beyond float32 become +-inf, as in TensorBoard
        out32: np.ndarray = np.array(
            [lefts, rights, counts[start : end + 1].tolist()], dtype=np.float32
        ).T
    return out32
