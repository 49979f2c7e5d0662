"""Histograms, in the two formats TensorBoard reads (docs/FORMAT.md §5).

* Legacy ``histo`` (TF1, tensorboardX, torch): a ``HistogramProto`` of min, max, num, sum,
  sum_squares and buckets given by their right edges; no metadata. Both loaders convert it to
  the histograms plugin's ``[k, 3]`` form when they read it.
* TF2 (``tf.summary.histogram``): a DT_DOUBLE ``[k, 3]`` tensor of ``(left, right, count)``
  rows with ``histograms`` plugin metadata.

The bucketing itself is :mod:`npsummary._histogram` (pure, streaming, imported on first use);
this module checks the arguments, names the tag in every error, and builds the values.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .._common.convert import (
    as_data_array,
    as_float64_array,
    as_real_array,
    check_int,
    check_process_group,
    is_dtensor,
    tagged,
    to_float,
)
from .._common.errors import BinCountCappedWarning, warn_user
from .._format.wire import encode_value
from .metadata import PLUGIN_HISTOGRAMS, metadata_bytes
from .tensor import tensor_bytes, tensor_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._histogram import LegacyHistogram, NonFinite, VariableStats
    from .._histogram.merge import Plan
    from .spread import Spread

__all__ = [
    "MAX_BUCKETS",
    "histogram_fields_value",
    "legacy_histogram_value",
    "raw_histogram_value",
    "tensorboardx_histogram",
    "tf1_histogram_value",
    "tf2_histogram_value",
    "variable_summaries",
]

#: Most buckets one histogram may have. TensorBoard redraws every histogram with 30 bins, and a
#: bucket count of 1e9 would allocate tens of gigabytes; 100,000 buckets is a 2.4 MB value.
MAX_BUCKETS = 100_000
_HISTO_FIELD = 5


def histogram_fields_value(
    tag: str,
    *,
    min: float,
    max: float,
    num: float,
    sum: float,
    sum_squares: float,
    bucket_limit: Any,
    bucket: Any,
) -> bytes:
    """Serialized ``Summary.Value{tag, histo}``; ``bucket_limit[i]`` is bucket i's right edge."""
    from .. import proto

    histo = proto.HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares)
    histo.bucket_limit.extend(np.asarray(bucket_limit, dtype=np.float64).tolist())
    histo.bucket.extend(np.asarray(bucket, dtype=np.float64).tolist())
    return encode_value(tag, _HISTO_FIELD, histo.SerializeToString(), None)


def legacy_histogram_value(tag: str, histogram: LegacyHistogram) -> bytes:
    """Serialized legacy value of a computed histogram."""
    return histogram_fields_value(
        tag,
        min=histogram.min,
        max=histogram.max,
        num=histogram.num,
        sum=histogram.sum,
        sum_squares=histogram.sum_squares,
        bucket_limit=histogram.bucket_limit,
        bucket=histogram.bucket,
    )


def _bucket_count(tag: str, name: str, value: Any) -> int:
    return check_int(value, name, tag=tag, maximum=MAX_BUCKETS)


def is_spread(values: Any, process_group: Any) -> bool:
    """Whether a histogram of ``values`` is a collective call (a DTensor, or a process group):
    every rank of the group must make it, writer or not."""
    return process_group is not None or is_dtensor(values)


def _spread(tag: str, values: Any, process_group: Any) -> Spread | None:
    """This rank's part of spread ``values`` (see :mod:`.spread`), or None for local data."""
    if not is_spread(values, process_group):
        return None
    from .spread import spread_values

    return spread_values(tag, values, check_process_group(process_group, tag))


_DEVICE_LIBRARIES = ("torch", "jax", "jaxlib", "cupy")
_DEVICE: dict[str, Any] = {}


def _on_device(tag: str, values: Any, plan: Callable[[], Plan]) -> Any:
    """``plan``'s result for an array bucketed on its device (a torch tensor off the CPU, a
    CuPy array, a JAX array on an accelerator or sharded), or None for the host cores."""
    if type(values).__module__.partition(".")[0] not in _DEVICE_LIBRARIES:
        return None
    device = _DEVICE.get("module")
    if device is None:  # imported once: this check runs on every torch tensor's histogram
        from .._histogram import device as imported

        device = _DEVICE["module"] = imported
    library = device.device_library(values)
    if library is None:
        return None
    return tagged(tag, device.histogram_on_device, library, values, plan())


def tensorboardx_histogram(
    tag: str, values: Any, bins: Any, max_bins: Any, process_group: Any = None
) -> LegacyHistogram:
    """Histogram of ``values`` for ``add_histogram(bins=..., max_bins=...)``.

    ``bins`` is ``'tensorflow'`` (tensorboardX's and torch's ``default_bins`` edges, with the
    buckets they write), a NumPy rule name, a bin count or explicit edges; every argument is
    converted here, so a broken one is a ``TypeError`` naming the tag. A DTensor, or values
    with a ``process_group``, give the histogram of every rank's values (:mod:`.spread`).
    """
    from .._histogram import binned_histogram

    if max_bins is not None:
        max_bins = _bucket_count(tag, "max_bins", max_bins)
    if isinstance(bins, str):
        pass
    elif isinstance(bins, (int, np.integer)) and not isinstance(bins, (bool, np.bool_)):
        bins = _bucket_count(tag, "bins", bins)
    else:
        bins = as_real_array(bins, tag, "bins")
        if bins.ndim == 0:
            bins = _bucket_count(tag, "bins", bins)
    from .._histogram.merge import MERGEABLE_RULES, tbx_plan

    histogram: LegacyHistogram
    spread = _spread(tag, values, process_group)
    if spread is not None:
        histogram = spread.histogram(tag, tagged(tag, tbx_plan, bins, max_bins))
    else:
        # rules needing the quantiles of the data are computed on the host
        host_rule = isinstance(bins, str) and bins != "tensorflow" and bins not in MERGEABLE_RULES
        on_device = None if host_rule else _on_device(tag, values, lambda: tbx_plan(bins, max_bins))
        if on_device is not None:
            histogram = on_device
        else:
            histogram = tagged(tag, binned_histogram, as_data_array(values, tag), bins, max_bins)
    if histogram.capped:
        warn_user(f"{tag!r}: {histogram.capped}", BinCountCappedWarning)
    return histogram


def tf1_histogram_value(
    tag: str, values: Any, process_group: Any = None
) -> tuple[bytes, NonFinite]:
    """Legacy value of TF1's histogram of ``values`` (``tf.compat.v1.summary.histogram``: the
    sum computed exactly; spread values: the sum of each rank's sums), and the non-finite
    values it left out."""
    from .._histogram import tf1_histogram
    from .._histogram.merge import tf1_plan

    spread = _spread(tag, values, process_group)
    if spread is not None:
        histogram = spread.histogram(tag, tf1_plan())
    else:
        histogram = _on_device(tag, values, tf1_plan)
        if histogram is None:
            array = as_data_array(values, tag)
            histogram = tagged(tag, tf1_histogram, array, exact_sum=True)
    return legacy_histogram_value(tag, histogram), histogram.nonfinite


def variable_summaries(tag: str, values: Any) -> tuple[VariableStats, bytes]:
    """Mean, stddev, min and max of ``values`` and the legacy value of their TF1 histogram
    (tagged ``{tag}/histogram``), from one pass over the data (``add_variable_summaries``)."""
    from .._histogram import variable_stats

    stats = tagged(tag, variable_stats, as_data_array(values, tag))
    return stats, legacy_histogram_value(f"{tag}/histogram", stats.histogram)


def tf2_histogram_value(
    tag: str, values: Any, buckets: Any, description: str | None, process_group: Any = None
) -> tuple[bytes, NonFinite]:
    """TF2 ``[k, 3]`` histogram value of ``values``; ``buckets=None`` means 30, and a negative
    count gives no buckets, as in TensorFlow. Spread values: as :func:`tensorboardx_histogram`."""
    from .._histogram import DEFAULT_BUCKET_COUNT, tf2_buckets

    count = DEFAULT_BUCKET_COUNT if buckets is None else _bucket_count(tag, "buckets", buckets)
    from .._histogram.merge import tf2_plan

    spread = _spread(tag, values, process_group)
    if spread is not None:
        counts, nonfinite = spread.histogram(tag, tf2_plan(max(count, 0)))
    else:
        on_device = _on_device(tag, values, lambda: tf2_plan(max(count, 0)))
        if on_device is not None:
            counts, nonfinite = on_device
        else:
            counts, nonfinite = tagged(tag, tf2_buckets, as_data_array(values, tag), max(count, 0))
    md = metadata_bytes(PLUGIN_HISTOGRAMS, description=description)
    rows = np.asarray(counts, dtype=np.float64).reshape(-1, 3)
    return tensor_value(tag, tensor_bytes(rows), md), nonfinite


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
    numbers = {name: to_float(value, tag, name) for name, value in fields.items()}
    if not numbers["num"] >= 0 or not math.isfinite(numbers["num"]):
        raise ValueError(f"{tag!r}: num must be a finite count >= 0, got {numbers['num']}")
    limits = as_float64_array(bucket_limits, tag, "bucket_limits")
    counts = as_float64_array(bucket_counts, tag, "bucket_counts")
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
    return histogram_fields_value(tag, bucket_limit=limits, bucket=counts, **numbers)
