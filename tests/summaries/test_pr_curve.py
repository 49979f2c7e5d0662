"""PR curves: tensorboardX's numbers (hypothesis), the libraries' rule for ``num_thresholds``,
weights, and clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples, only_event_file, read_events
from npsummary import MemorySink, SummaryWriter, proto
from npsummary._summaries.pr_curve import pr_curve_raw_value, pr_curve_value


def _curve(value_bytes: bytes) -> tuple[np.ndarray, int]:
    value = proto.SummaryValue.FromString(value_bytes)
    shape = [d.size for d in value.tensor.tensor_shape.dim]
    content = proto.PrCurvePluginData.FromString(value.metadata.plugin_data.content)
    assert value.metadata.plugin_data.plugin_name == "pr_curves"
    assert value.tensor.dtype == proto.DT_FLOAT
    return np.array(value.tensor.float_val, dtype=np.float32).reshape(shape), content.num_thresholds


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(1, 60).flatmap(
        lambda n: st.tuples(
            hnp.arrays(np.int64, n, elements=st.integers(0, 1)),
            hnp.arrays(np.float32, n, elements=st.floats(0, 1, width=32)),
            st.one_of(st.none(), hnp.arrays(np.float64, n, elements=st.floats(0, 10))),
        )
    ),
    st.integers(2, 127),
)
def test_matches_tensorboardx(data: tuple[Any, Any, Any], num_thresholds: int) -> None:
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    labels, predictions, weights = data
    theirs = tbx_summary.pr_curve("t", labels, predictions, num_thresholds, weights)
    ours = pr_curve_value("t", labels, predictions, num_thresholds, weights)
    assert ours == theirs.value[0].SerializeToString()


@pytest.mark.parametrize("asked", [1, 2, 127, 128, 1000, 2**70])
def test_thresholds_as_the_libraries_write_them(logdir: Path, asked: int) -> None:
    """From 1, and at most 127 written (tensorboardX's and torch's ``pr_curve`` cap it), for
    the curve and the raw rows alike."""
    rng = np.random.default_rng(0)
    labels, predictions = rng.integers(0, 2, 500), rng.random(500)
    with SummaryWriter(str(logdir)) as writer:
        writer.add_pr_curve("pr", labels, predictions, 1, num_thresholds=asked)
        rows = (np.arange(5.0),) * 6
        writer.add_pr_curve_raw("raw", *rows, 1, num_thresholds=asked)
    values = {v.tag: v for e in read_events(only_event_file(logdir)) for v in e.summary.value}
    written = min(asked, 127)
    curve, stored = _curve(values["pr"].SerializeToString())
    assert curve.shape == (6, written) and stored == written
    expected, _ = _curve(pr_curve_value("pr", labels, predictions, written))
    np.testing.assert_array_equal(curve, expected)
    raw_curve, raw_stored = _curve(values["raw"].SerializeToString())
    assert raw_curve.shape == (6, 5) and raw_stored == written


def test_weights_count_each_prediction() -> None:
    labels = np.array([1, 1, 0, 0])
    predictions = np.array([0.9, 0.2, 0.8, 0.1])
    curve, _ = _curve(pr_curve_value("t", labels, predictions, 3, np.array([2.0, 1.0, 3.0, 0.5])))
    # thresholds 0, 0.5, 1: TP = weighted positives with p >= t; FP likewise for negatives.
    np.testing.assert_allclose(curve[0], [3.0, 2.0, 0.0])
    np.testing.assert_allclose(curve[1], [3.5, 3.0, 0.0])


def test_raw_rows_and_num_thresholds_stored_as_given() -> None:
    rows = [np.arange(5.0)] * 6
    curve, num_thresholds = _curve(pr_curve_raw_value("raw", tuple(rows), 300))
    assert curve.shape == (6, 5)
    assert num_thresholds == 300


@pytest.mark.parametrize(
    ("labels", "predictions", "kwargs", "error", "match"),
    [
        ([0, 1, 2], [0.1, 0.2, 0.3], {}, ValueError, "labels must be 0 or 1"),
        ([0, 1], [0.1, np.nan], {}, ValueError, "NaN"),
        ([0, 1], [0.1, np.inf], {}, ValueError, "NaN or infinity"),
        ([0, 1], [0.1, 1.5], {}, ValueError, r"\[0, 1\]"),
        ([0, 1, 1], [0.1, 0.2], {}, ValueError, "same number"),
        ([0, 1], [0.1, 0.2], {"num_thresholds": 0}, ValueError, "num_thresholds"),
        ([0, 1], [0.1, 0.2], {"num_thresholds": 2.5}, TypeError, "num_thresholds"),
        ([0, 1], [0.1, 0.2], {"weights": [1.0, -1.0]}, ValueError, "weights"),
        ([0, 1], [0.1, 0.2], {"weights": [1.0, 1.0, 1.0]}, ValueError, "weights"),
        (["a", "b"], [0.1, 0.2], {}, TypeError, "labels"),
    ],
)
def test_bad_input_raises_naming_the_tag(
    labels: Any, predictions: Any, kwargs: dict[str, Any], error: type, match: str
) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match=match) as info:
        writer.add_pr_curve("my_pr", np.array(labels), np.array(predictions), 0, **kwargs)
    assert "my_pr" in str(info.value)
    assert sink.payloads == []
    writer.add_pr_curve("my_pr", [0, 1], [0.2, 0.7], 0)


def test_bad_raw_rows_raise() -> None:
    writer = SummaryWriter(MemorySink())
    good = np.arange(4.0)
    with pytest.raises(ValueError, match="one non-zero length"):
        writer.add_pr_curve_raw("raw", good, good, good, good, good, np.arange(3.0))
    with pytest.raises(ValueError, match="1-D"):
        writer.add_pr_curve_raw("raw", good.reshape(2, 2), good, good, good, good, good)
    with pytest.raises(ValueError, match="NaN"):
        writer.add_pr_curve_raw("raw", good, good, good, good, good, np.full(4, np.nan))
