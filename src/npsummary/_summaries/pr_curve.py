"""PR curves in TensorBoard's ``pr_curves`` format, as tensorboardX and torch write them.

A value has plugin ``pr_curves`` metadata (``PrCurvePluginData{version 0, num_thresholds}``) and a
DT_FLOAT ``[6, num_thresholds]`` tensor in ``float_val`` whose rows are true positives, false
positives, true negatives, false negatives, precision and recall at the thresholds
``i / (num_thresholds - 1)``. TensorBoard's plugin takes the thresholds from the tensor's width.

The curve is computed as tensorboardX's ``compute_curve`` does (TensorBoard's own ``pr_curve``
algorithm): each prediction falls in bucket ``floor(p * (num_thresholds - 1))``; weighted label
counts per bucket are summed from the top, so column ``i`` counts predictions ``>= i / (n - 1)``.
The SummaryWriter and the module-level builders take ``num_thresholds`` as both libraries do
(:func:`library_thresholds`: from 1, at most 127 written). Labels outside {0, 1} and predictions
that are not finite or not in [0, 1] raise instead of producing a wrong curve.

Format notes: docs/FORMAT.md §4.7.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._common.convert import as_numeric_array, check_int
from .metadata import PLUGIN_PR_CURVES
from .tensor import fill_float_tensor

__all__ = [
    "LIBRARY_MAX_THRESHOLDS",
    "MAX_THRESHOLDS",
    "compute_curve",
    "library_thresholds",
    "pr_curve_raw_value",
    "pr_curve_value",
]

#: Largest ``num_thresholds`` accepted (the tensor holds 6 floats per threshold).
MAX_THRESHOLDS = 1 << 20
#: tensorboardX and torch write at most this many thresholds (their ``pr_curve`` caps it).
LIBRARY_MAX_THRESHOLDS = 127
_MINIMUM_COUNT = 1e-7
_CHUNK = 1 << 20


def check_num_thresholds(tag: str, num_thresholds: Any) -> int:
    return check_int(num_thresholds, "num_thresholds", tag=tag, minimum=1, maximum=MAX_THRESHOLDS)


def library_thresholds(tag: str, num_thresholds: Any) -> int:
    """``num_thresholds`` as tensorboardX's and torch's ``pr_curve`` take it (their writers'
    ``add_pr_curve``/``add_pr_curve_raw`` and module-level builders): any int from 1 (every
    prediction in one bucket), of which at most :data:`LIBRARY_MAX_THRESHOLDS` are written."""
    return min(
        check_int(num_thresholds, "num_thresholds", tag=tag, minimum=1), LIBRARY_MAX_THRESHOLDS
    )


def _flat(tag: str, name: str, data: Any) -> np.ndarray:
    return as_numeric_array(data, tag, name).reshape(-1)


def _check_inputs(
    tag: str, labels: Any, predictions: Any, weights: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    label_array = _flat(tag, "labels", labels)
    prediction_array = _flat(tag, "predictions", predictions)
    if label_array.size != prediction_array.size:
        raise ValueError(
            f"{tag!r}: labels and predictions must have the same number of elements, got "
            f"{label_array.size} and {prediction_array.size}"
        )
    if not np.all((label_array == 0) | (label_array == 1)):
        bad = label_array[(label_array != 0) & (label_array != 1)][:3]
        raise ValueError(f"{tag!r}: labels must be 0 or 1 (or bool), found {bad.tolist()}")
    if not np.all(np.isfinite(prediction_array)):
        raise ValueError(f"{tag!r}: predictions contain NaN or infinity")
    if prediction_array.size and (prediction_array.min() < 0 or prediction_array.max() > 1):
        raise ValueError(
            f"{tag!r}: predictions must lie in [0, 1], got the range "
            f"[{prediction_array.min()}, {prediction_array.max()}]"
        )
    weight_array = None
    if weights is not None:
        weight_array = _flat(tag, "weights", weights)
        if weight_array.size == 1:
            weight_array = np.broadcast_to(weight_array, prediction_array.shape)
        if weight_array.size != prediction_array.size:
            raise ValueError(
                f"{tag!r}: weights must be a scalar or have one value per prediction, got "
                f"{weight_array.size} for {prediction_array.size} predictions"
            )
        if not np.all(np.isfinite(weight_array)) or np.any(weight_array < 0):
            raise ValueError(f"{tag!r}: weights must be finite and non-negative")
    return label_array, prediction_array, weight_array


def compute_curve(
    labels: np.ndarray, predictions: np.ndarray, num_thresholds: int, weights: Any = None
) -> np.ndarray:
    """The ``[6, num_thresholds]`` float64 curve of checked 1-D inputs (chunked, bounded memory).

    Bucket indices use the predictions' own dtype, as tensorboardX does, so float32 predictions
    give the same buckets as there.
    """
    tp_buckets = np.zeros(num_thresholds)
    fp_buckets = np.zeros(num_thresholds)
    for start in range(0, predictions.size, _CHUNK):
        stop = start + _CHUNK
        index = np.floor(predictions[start:stop] * (num_thresholds - 1)).astype(np.int64)
        positive = labels[start:stop].astype(np.float64)
        weight = 1.0 if weights is None else np.asarray(weights[start:stop], dtype=np.float64)
        tp_buckets += np.bincount(index, positive * weight, minlength=num_thresholds)
        fp_buckets += np.bincount(index, (1.0 - positive) * weight, minlength=num_thresholds)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _value(tag: str, data: np.ndarray, num_thresholds: int) -> bytes:
    from .. import proto

    value = proto.SummaryValue(tag=tag)
    plugin_data = value.metadata.plugin_data
    plugin_data.plugin_name = PLUGIN_PR_CURVES
    plugin_data.content = proto.PrCurvePluginData(
        version=0, num_thresholds=num_thresholds
    ).SerializeToString()
    fill_float_tensor(value.tensor, data)
    return bytes(value.SerializeToString())


def pr_curve_value(
    tag: str,
    labels: Any,
    predictions: Any,
    num_thresholds: Any = 127,
    weights: Any = None,
) -> bytes:
    """Serialized PR-curve value computed from binary ``labels`` and ``predictions`` in [0, 1].

    ``num_thresholds`` from 1 (every prediction in one bucket) to :data:`MAX_THRESHOLDS`; the
    front ends pass :func:`library_thresholds`.

    Raises:
      TypeError: non-numeric input or a non-int ``num_thresholds``.
      ValueError: lengths differ, a label is not 0/1, a prediction is not finite or outside
        [0, 1], a weight is negative or not finite, or ``num_thresholds`` is out of range.
    """
    n = check_num_thresholds(tag, num_thresholds)
    label_array, prediction_array, weight_array = _check_inputs(tag, labels, predictions, weights)
    return _value(tag, compute_curve(label_array, prediction_array, n, weight_array), n)


_RAW_NAMES = (
    "true_positive_counts",
    "false_positive_counts",
    "true_negative_counts",
    "false_negative_counts",
    "precision",
    "recall",
)


def pr_curve_raw_value(tag: str, rows: tuple[Any, ...], num_thresholds: Any = 127) -> bytes:
    """Serialized PR-curve value from the six precomputed rows (each 1-D, one length).

    ``num_thresholds`` is stored in the metadata as given; TensorBoard plots the rows' length.
    ``num_thresholds``: as in :func:`pr_curve_value`.

    Raises:
      TypeError: a row is not numeric; ValueError: a row is not 1-D, the lengths differ, or a
        row holds NaN or infinity.
    """
    n = check_num_thresholds(tag, num_thresholds)
    arrays = []
    for name, row in zip(_RAW_NAMES, rows, strict=True):
        array = as_numeric_array(row, tag, name)
        if array.ndim != 1:
            raise ValueError(f"{tag!r}: {name} must be 1-D, got shape {array.shape}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{tag!r}: {name} contains NaN or infinity")
        arrays.append(array)
    if len({array.size for array in arrays}) > 1:
        sizes = ", ".join(f"{n}: {a.size}" for n, a in zip(_RAW_NAMES, arrays, strict=True))
        raise ValueError(
            f"{tag!r}: the six PR-curve rows must have one non-zero length, got {sizes}"
        )
    lengths = {array.size for array in arrays}
    if max(lengths) > MAX_THRESHOLDS:
        raise ValueError(
            f"{tag!r}: PR-curve rows hold at most {MAX_THRESHOLDS} thresholds, got {max(lengths)}"
        )
    if len(lengths) != 1 or 0 in lengths:
        raise ValueError(
            f"{tag!r}: the six PR-curve rows must have one non-zero length, got "
            f"{[array.size for array in arrays]}"
        )
    return _value(tag, np.stack(arrays).astype(np.float64), n)
