"""From arrays to histogram ``Summary.Value`` bytes: the bucketing core plus the proto builders.

Both APIs share these functions. They compute with :mod:`npsummary._histogram` (imported on
first use) and make every error name the tag. Non-finite values never reach the buckets; what
happens to them is the caller's *policy*:

* ``"warn"`` (default): left out, and a :class:`NonFiniteWarning` names the tag and the counts,
  once per tag and writer;
* ``"raise"``: ``ValueError`` before anything is written (TF1's behaviour, which ends the step);
* ``"ignore"``: left out silently.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ._convert import as_array, tagged
from ._errors import NonFiniteWarning
from ._summary import histogram_value, legacy_histogram_value

if TYPE_CHECKING:
    from ._histogram import LegacyHistogram, NonFinite

__all__ = [
    "MAX_BUCKETS",
    "NONFINITE_POLICIES",
    "NonFiniteGuard",
    "NonFiniteWarning",
    "check_policy",
    "legacy_value",
    "raw_histogram_value",
    "tensorboardx_histogram",
    "tf1_histogram",
    "tf2_value",
]

NONFINITE_POLICIES = ("warn", "raise", "ignore")
#: Most buckets one histogram may have. TensorBoard redraws every histogram with 30 bins, and a
#: bucket count of 1e9 would allocate tens of gigabytes; 100,000 buckets is a 2.4 MB value.
MAX_BUCKETS = 100_000


def _check_count(tag: str, name: str, count: Any) -> None:
    if isinstance(count, (int, np.integer)) and not isinstance(count, bool) and count > MAX_BUCKETS:
        raise ValueError(f"{tag!r}: {name}={count} is more than the {MAX_BUCKETS} buckets allowed")


def check_policy(nonfinite: Any, tag: str) -> str:
    if not isinstance(nonfinite, str) or nonfinite not in NONFINITE_POLICIES:
        text = repr(nonfinite)
        text = text if len(text) <= 60 else text[:57] + "..."
        raise ValueError(f"{tag!r}: nonfinite must be one of {NONFINITE_POLICIES}, got {text}")
    return nonfinite


class NonFiniteGuard:
    """Applies the non-finite policy to histograms and images; warns once per tag."""

    def __init__(self) -> None:
        self._warned: set[str] = set()

    def __call__(self, tag: str, counts: NonFinite, policy: str) -> None:
        if not counts.total or policy == "ignore":
            return
        message = (
            f"{tag!r}: {counts.nan} NaN, {counts.posinf} +Inf and {counts.neginf} -Inf values "
            "left out of the histogram"
        )
        if policy == "raise":
            raise ValueError(message)
        self.warn_once(tag, message)

    def warn_once(self, tag: str, message: str) -> None:
        """Emit ``message`` as a NonFiniteWarning unless ``tag`` was warned about already."""
        if tag not in self._warned:
            self._warned.add(tag)
            warnings.warn(message + " (warned once per tag)", NonFiniteWarning, stacklevel=5)

    def nan_pixels(self, tag: str, count: int) -> None:
        self.warn_once(tag, f"{tag!r}: {count} NaN pixel values drawn as 0")


def tf1_histogram(tag: str, values: Any) -> LegacyHistogram:
    from ._histogram import tf1_histogram as compute

    return tagged(tag, compute, as_array(values, tag))


def tensorboardx_histogram(tag: str, values: Any, bins: Any, max_bins: Any) -> LegacyHistogram:
    """Histogram fields for ``add_histogram(bins=..., max_bins=...)``."""
    from ._histogram import binned_histogram
    from ._histogram import tf1_histogram as compute

    _check_count(tag, "bins", bins)
    _check_count(tag, "max_bins", max_bins)
    array = as_array(values, tag)
    if isinstance(bins, str) and bins == "tensorflow" and max_bins is None:
        return tagged(tag, compute, array)
    return tagged(tag, binned_histogram, array, bins, max_bins)


def legacy_value(tag: str, histogram: LegacyHistogram) -> bytes:
    return legacy_histogram_value(
        tag,
        min=histogram.min,
        max=histogram.max,
        num=histogram.num,
        sum=histogram.sum,
        sum_squares=histogram.sum_squares,
        bucket_limit=histogram.bucket_limit,
        bucket=histogram.bucket,
    )


def tf2_value(
    tag: str, values: Any, buckets: Any, description: str | None
) -> tuple[bytes, NonFinite]:
    """TF2 ``[k, 3]`` histogram value of ``values``; ``buckets=None`` means 30."""
    from ._histogram import DEFAULT_BUCKET_COUNT, tf2_buckets

    _check_count(tag, "buckets", buckets)
    if buckets is None:
        buckets = DEFAULT_BUCKET_COUNT
    elif isinstance(buckets, (int, np.integer)) and not isinstance(buckets, bool) and buckets < 0:
        buckets = 0  # as TF: a negative bucket count gives no buckets
    counts, nonfinite = tagged(tag, tf2_buckets, as_array(values, tag), buckets)
    return histogram_value(tag, counts, description=description), nonfinite


def raw_histogram_value(
    tag: str,
    min: Any,
    max: Any,
    num: Any,
    sum: Any,
    sum_squares: Any,
    bucket_limits: Any,
    bucket_counts: Any,
) -> bytes:
    """Validate the fields of ``add_histogram_raw`` and build the legacy value."""
    fields = {"min": min, "max": max, "num": num, "sum": sum, "sum_squares": sum_squares}
    numbers: dict[str, float] = {}
    for name, value in fields.items():
        try:
            numbers[name] = float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{tag!r}: {name} must be a real number, got {value!r}") from exc
    if not numbers["num"] >= 0 or not math.isfinite(numbers["num"]):
        raise ValueError(f"{tag!r}: num must be a finite count >= 0, got {numbers['num']}")
    limits = tagged(tag, np.asarray, bucket_limits, dtype=np.float64)
    counts = tagged(tag, np.asarray, bucket_counts, dtype=np.float64)
    if limits.ndim != 1 or counts.ndim != 1:
        raise ValueError(
            f"{tag!r}: bucket_limits and bucket_counts must be 1-D, got shapes "
            f"{limits.shape} and {counts.shape}"
        )
    if limits.size != counts.size:
        raise ValueError(
            f"{tag!r}: len(bucket_limits) != len(bucket_counts) "
            f"({limits.size} != {counts.size}); TensorBoard cannot read such a histogram"
        )
    if limits.size == 0:
        raise ValueError(f"{tag!r}: a histogram needs at least one bucket")
    if np.isnan(limits).any() or (np.diff(limits) < 0).any():
        raise ValueError(f"{tag!r}: bucket_limits must be non-decreasing numbers")
    if not np.isfinite(counts).all() or (counts < 0).any():
        raise ValueError(f"{tag!r}: bucket_counts must be finite and >= 0")
    return legacy_histogram_value(tag, bucket_limit=limits, bucket=counts, **numbers)
