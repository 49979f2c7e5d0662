"""Histograms and distributions through both APIs, read back with TensorBoard's own code."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import npsummary
from conftest import read_run
from npsummary import EventSink, MemorySink, NonFiniteWarning, SummaryWriter
from npsummary._histogram import TF1_BUCKET_LIMITS, tf1_histogram
from npsummary.proto import Event
from npsummary.reader import compress_histogram

tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
summary_v2 = pytest.importorskip("tensorboard.plugins.histogram.summary_v2")

RNG = np.random.default_rng(1234)
DATA = RNG.normal(0.0, 0.05, size=5000).astype(np.float32)


def _payloads(sink: EventSink) -> list[bytes]:
    """What a writer built on a MemorySink wrote (its ``sink`` property is typed EventSink)."""
    return cast(MemorySink, sink).payloads


def _events(sink: EventSink) -> list[Any]:
    return [Event.FromString(p) for p in _payloads(sink)]


def test_tf2_histogram_equals_tensorboard_reference(logdir: Path) -> None:
    writer = npsummary.create_file_writer(str(logdir))
    with writer.as_default(step=3):
        assert npsummary.histogram("weights", DATA, description="w") is True
        assert npsummary.histogram("coarse", DATA, buckets=5) is True
        assert npsummary.distribution("dist", DATA) is True
    writer.close()
    acc = read_run(logdir)
    for tag, k in (("weights", 30), ("coarse", 5), ("dist", 30)):
        (event,) = acc.Tensors(tag)
        assert event.step == 3
        ours = tensor_util.make_ndarray(event.tensor_proto)
        reference = tensor_util.make_ndarray(summary_v2.histogram_pb(tag, DATA, k).value[0].tensor)
        assert ours.shape == (k, 3)
        np.testing.assert_array_equal(ours, reference)
        assert acc.SummaryMetadata(tag).plugin_data.plugin_name == "histograms"
    assert acc.SummaryMetadata("weights").summary_description == "w"


def _tensorboardx_buckets(data: np.ndarray) -> tuple[list[float], list[float]]:
    # tensorboardX's and torch's make_histogram: np.histogram over default_bins, then one empty
    # bucket kept left of the first non-empty one, trailing empties dropped.
    counts, limits = np.histogram(
        data.astype(np.float64), bins=SummaryWriter(MemorySink()).default_bins
    )
    nonzero = np.flatnonzero(counts)
    start, end = int(nonzero[0]), int(nonzero[-1]) + 1
    kept = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    return limits[start : end + 1].tolist(), kept.astype(np.float64).tolist()


def test_add_histogram_default_bins_are_tensorboardx_buckets() -> None:
    data = np.array([0, 0.5, 1, 1, -2, 100, 1e-13, -0.0], dtype=np.float32)
    writer = SummaryWriter(MemorySink())
    writer.add_histogram("h", data, 7)
    (event,) = _events(writer.sink)
    histo = event.summary.value[0].histo
    limits, counts = _tensorboardx_buckets(data)
    assert (list(histo.bucket_limit), list(histo.bucket)) == (limits, counts)
    assert 0.0 in histo.bucket[1:-1]  # interior empty buckets are kept, as theirs
    # TF1's C++ op (npsummary.v1.histogram) collapses them instead: docs/FORMAT.md §5a.
    h = tf1_histogram(data)
    assert h.bucket.tolist() == [0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0]
    assert h.bucket_limit[-1] == TF1_BUCKET_LIMITS[-1]


def test_add_histogram_bins_options() -> None:
    writer = SummaryWriter(MemorySink())
    writer.add_histogram("int_bins", DATA, 0, bins=10)
    writer.add_histogram("edges", DATA, 0, bins=[-1.0, 0.0, 1.0])
    writer.add_histogram("auto", DATA, 0, bins="auto")
    writer.add_histogram("grouped", DATA, 0, bins=64, max_bins=8)
    events = _events(writer.sink)
    histos = {e.summary.value[0].tag: e.summary.value[0].histo for e in events}
    counts, edges = np.histogram(DATA.astype(np.float64), bins=10)
    assert sum(histos["int_bins"].bucket) == DATA.size
    assert list(histos["int_bins"].bucket)[1:] == counts.tolist()
    assert histos["int_bins"].bucket_limit[-1] == pytest.approx(edges[-1])
    assert sum(histos["edges"].bucket) == DATA.size
    assert sum(histos["auto"].bucket) == DATA.size
    assert len(histos["grouped"].bucket) <= 9


def test_nonfinite_values_are_left_out_and_warned_once_per_tag() -> None:
    writer = SummaryWriter(MemorySink())
    data = np.array([1.0, np.nan, np.inf, -np.inf, 2.0])
    with pytest.warns(NonFiniteWarning, match=r"'h': 1 NaN, 1 \+Inf and 1 -Inf"):
        writer.add_histogram("h", data, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writer.add_histogram("h", data, 1)  # same tag: no second warning
        writer.add_histogram("quiet", data, 1, nonfinite="ignore")
    (first, second, quiet) = _events(writer.sink)
    for event in (first, second, quiet):
        histo = event.summary.value[0].histo
        assert histo.num == 2 == sum(histo.bucket)
        assert (histo.min, histo.max, histo.sum) == (1.0, 2.0, 3.0)


def test_nonfinite_raise_writes_nothing_and_writer_stays_usable() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(ValueError, match="'h': 1 NaN"):
        writer.add_histogram("h", [1.0, float("nan")], 0, nonfinite="raise")
    assert _payloads(writer.sink) == []
    writer.add_histogram("h", [1.0, 2.0], 1)
    assert len(_payloads(writer.sink)) == 1
    with pytest.raises(ValueError, match="nonfinite must be one of"):
        writer.add_histogram("h", [1.0], 1, nonfinite="drop")  # type: ignore[arg-type]


def test_all_nan_and_empty_inputs_do_not_raise() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.warns(NonFiniteWarning):
        writer.add_histogram("nan", np.full(10, np.nan), 0)
    writer.add_histogram("empty", np.array([], dtype=np.float32), 0)
    tf_writer = npsummary.create_file_writer(MemorySink())
    with tf_writer.as_default(step=0):
        assert npsummary.histogram("empty", [])
    for event in _events(writer.sink):
        histo = event.summary.value[0].histo
        assert histo.num == 0
        assert list(histo.bucket) == [0.0]
    (tf2,) = _events(tf_writer._live().sink)
    rows = np.frombuffer(tf2.summary.value[0].tensor.tensor_content, "<f8").reshape(-1, 3)
    assert rows.shape == (30, 3) and not rows.any()


@pytest.mark.parametrize(
    "bad, error",
    [("text", TypeError), (np.array(["a"]), TypeError), (np.array([1j]), TypeError)],
)
def test_bad_histogram_input_names_the_tag(bad: Any, error: type[Exception]) -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(error, match="'hist'"):
        writer.add_histogram("hist", bad, 0)
    assert _payloads(writer.sink) == []


def test_add_histogram_raw_validates() -> None:
    writer = SummaryWriter(MemorySink())
    writer.add_histogram_raw("r", 0.0, 2.0, 3, 3.0, 5.0, [1.0, 2.0], [1, 2], 5)
    (event,) = _events(writer.sink)
    histo = event.summary.value[0].histo
    assert list(histo.bucket_limit) == [1.0, 2.0] and list(histo.bucket) == [1.0, 2.0]
    assert event.step == 5
    bad_calls: list[dict[str, Any]] = [
        dict(bucket_limits=[1.0, 2.0], bucket_counts=[1]),
        dict(bucket_limits=[2.0, 1.0], bucket_counts=[1, 1]),
        dict(bucket_limits=[1.0], bucket_counts=[-1]),
        dict(bucket_limits=[], bucket_counts=[]),
        dict(bucket_limits=[1.0], bucket_counts=[float("nan")]),
    ]
    for kwargs in bad_calls:
        with pytest.raises(ValueError, match="'r'"):
            writer.add_histogram_raw("r", 0, 1, 1, 1, 1, global_step=1, **kwargs)
    with pytest.raises(TypeError, match="'r': min"):
        writer.add_histogram_raw("r", "low", 1, 1, 1, 1, [1.0], [1.0])
    assert len(_payloads(writer.sink)) == 1


def test_add_variable_summaries_one_pass_one_event(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_variable_summaries("layer1/weights", DATA, 4)
    acc = read_run(logdir)
    expected = {
        "layer1/weights/mean": np.mean(DATA.astype(np.float64)),
        "layer1/weights/stddev": np.std(DATA.astype(np.float64)),
        "layer1/weights/max": DATA.max(),
        "layer1/weights/min": DATA.min(),
    }
    for tag, value in expected.items():
        (event,) = acc.Tensors(tag)
        assert event.step == 4
        got = tensor_util.make_ndarray(event.tensor_proto).item()
        assert got == pytest.approx(float(np.float32(value)), rel=1e-6)
    (histogram,) = acc.Tensors("layer1/weights/histogram")
    rows = tensor_util.make_ndarray(histogram.tensor_proto)
    assert rows[:, 2].sum() == DATA.size


def test_distribution_percentiles_match_tensorboard_compressor() -> None:
    compressor = pytest.importorskip("tensorboard.plugins.distribution.compressor")
    buckets = tensor_util.make_ndarray(summary_v2.histogram_pb("d", DATA).value[0].tensor)
    ours = compress_histogram(buckets)
    theirs = [tuple(c) for c in compressor.compress_histogram(buckets)]
    assert ours == theirs
