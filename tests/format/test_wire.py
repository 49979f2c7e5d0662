"""Hand-written wire encoders produce exactly the bytes protobuf's serializer produces."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npsummary
from conftest import examples
from npsummary import MemorySink, SummaryWriter, proto
from npsummary._common.convert import INT64_MAX, INT64_MIN
from npsummary._format.record import frame_record
from npsummary._format.wire import (
    encode_event,
    encode_file_version_event,
    encode_length_delimited,
    encode_varint,
    scalar_value_prefix,
)
from npsummary._format.wire import encode_summary as summary_bytes
from npsummary._frontends.tf2 import api as tf2
from npsummary._summaries.scalar import ScalarEncoder, scalar_value

# docs/FORMAT.md §3.4: tf.summary.scalar("loss", 0.5, step=3) as TF 2.21 writes it (46 B payload).
TF2_SCALAR_EVENT = bytes.fromhex(
    "09732b39c235c3da41"  # wall_time
    "1003"  # step = 3
    "2a210a1f"  # summary { value {
    "0a046c6f7373"  # tag "loss"
    "420a0801120022040000003f"  # tensor { DT_FLOAT, shape {}, content f32 0.5 }
    "4a0b0a090a07" + b"scalars".hex()  # metadata { plugin_data { plugin_name "scalars" } }
)
TF2_SCALAR_WALL_TIME: float = struct.unpack("<d", bytes.fromhex("732b39c235c3da41"))[0]
TF2_SCALAR_RECORD = (
    bytes.fromhex("2e00000000000000c5cb57fa") + TF2_SCALAR_EVENT + bytes.fromhex("42bbfcb5")
)

tags = st.text(max_size=40)
steps = st.one_of(
    st.integers(INT64_MIN, INT64_MAX),
    st.sampled_from([0, 1, -1, 127, 128, INT64_MIN, INT64_MAX, 2**31, -(2**31)]),
)
wall_times = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.7e9, 5e-324]),
)
float32s = st.floats(width=32)


def _tb_event(**kwargs: Any) -> Any:
    event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    return event_pb2.Event(**kwargs)


def _scalar_value_message(module: Any, tag: str, value: float, md: Any = None) -> Any:
    """A TF2 scalar ``Summary.Value`` built field by field with a protobuf module."""
    summary = module.Summary()
    v = summary.value.add(tag=tag)
    v.tensor.dtype = 1  # DT_FLOAT
    v.tensor.tensor_shape.SetInParent()
    v.tensor.tensor_content = struct.pack("<f", value)
    v.metadata.plugin_data.plugin_name = "scalars"
    if md is not None:
        v.metadata.MergeFrom(md)
    return v


def test_event_proto_golden_bytes() -> None:
    assert len(TF2_SCALAR_EVENT) == 46
    assert frame_record(TF2_SCALAR_EVENT) == TF2_SCALAR_RECORD


# --- varints --------------------------------------------------------------------------------


@pytest.mark.fuzz
@given(st.integers(INT64_MIN, INT64_MAX))
def test_varint_matches_protobuf(value: int) -> None:
    encoded = proto.Event(step=value).SerializeToString()
    if value:
        assert encoded == b"\x10" + encode_varint(value)
    assert len(encode_varint(value)) == (
        10 if value < 0 else max(1, math.ceil(value.bit_length() / 7))
    )


@pytest.mark.fuzz
@given(st.integers(1, 2**29 - 1), st.binary(max_size=300))
def test_length_delimited(field: int, payload: bytes) -> None:
    encoded = encode_length_delimited(field, payload)
    assert encoded == encode_varint(field << 3 | 2) + encode_varint(len(payload)) + payload


# --- Event envelope -------------------------------------------------------------------------


@pytest.mark.fuzz
@settings(max_examples=examples(300))
@given(wall_times, steps, st.lists(st.tuples(tags, float32s), max_size=3))
def test_encode_event_matches_serializer(
    wall_time: float, step: int, values: list[tuple[str, float]]
) -> None:
    ours = proto.Event(wall_time=wall_time, step=step)
    theirs = _tb_event(wall_time=wall_time, step=step)
    for event in (ours, theirs):
        event.summary.SetInParent()
    encoded = []
    for tag, value in values:
        ours.summary.value.append(_scalar_value_message(proto, tag, value))
        encoded.append(scalar_value(tag, value))
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    for tag, value in values:
        theirs.summary.value.append(_scalar_value_message(summary_pb2, tag, value))
    summary = summary_bytes(encoded)
    assert summary == ours.summary.SerializeToString()
    payload = encode_event(wall_time, step, summary)
    assert payload == ours.SerializeToString()
    assert payload == theirs.SerializeToString()
    parsed = type(theirs).FromString(payload)
    assert parsed == theirs


@pytest.mark.fuzz
@settings(max_examples=examples(200))
@given(wall_times, tags)
def test_file_version_event_matches_serializer(wall_time: float, writer: str) -> None:
    theirs = _tb_event(wall_time=wall_time, file_version="brain.Event:2")
    theirs.source_metadata.writer = writer
    ours = proto.Event(wall_time=wall_time, file_version="brain.Event:2")
    ours.source_metadata.writer = writer
    payload = encode_file_version_event(wall_time, writer)
    assert payload == theirs.SerializeToString()
    assert payload == ours.SerializeToString()


def test_tf_first_event_shape() -> None:
    # docs/FORMAT.md §2.3: TF's first record, with our writer name instead of TF's.
    payload = encode_file_version_event(1796003592.0, "tensorflow.core.util.events_writer")
    assert payload == (
        b"\x09"
        + struct.pack("<d", 1796003592.0)
        + b"\x1a\x0dbrain.Event:2"
        + b"\x52\x24\x0a\x22tensorflow.core.util.events_writer"
    )
    assert len(payload) == 62


# --- scalar values --------------------------------------------------------------------------


@pytest.mark.fuzz
@settings(max_examples=examples(300))
@given(tags, float32s)
def test_scalar_value_matches_serializer(tag: str, value: float) -> None:
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    encoded = scalar_value(tag, value)
    assert encoded == _scalar_value_message(summary_pb2, tag, value).SerializeToString()
    assert encoded == _scalar_value_message(proto, tag, value).SerializeToString()
    prefix = scalar_value_prefix(tag)
    assert encoded.startswith(prefix)
    assert encoded[len(prefix) : len(prefix) + 4] == struct.pack("<f", value)


@pytest.mark.fuzz
@settings(max_examples=examples(100))
@given(tags, float32s, st.none() | st.text(max_size=30), st.none() | st.text(max_size=30))
def test_scalar_encoder_metadata_matches_serializer(
    tag: str, value: float, description: str | None, display_name: str | None
) -> None:
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    md = summary_pb2.SummaryMetadata()
    if description:
        md.summary_description = description
    if display_name:
        md.display_name = display_name
    expected = _scalar_value_message(summary_pb2, tag, value, md).SerializeToString()
    encoder = ScalarEncoder()
    assert encoder.encode(tag, value, description, display_name) == expected
    # Served from the per-tag cache the second time, still exact.
    assert encoder.encode(tag, value, description, display_name) == expected


def test_scalar_encoder_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ScalarEncoder, "_MAX_CACHED", 4)
    encoder = ScalarEncoder()
    for i in range(10):
        assert encoder.encode(f"t{i}", 1.0) == scalar_value(f"t{i}", 1.0)
    assert len(encoder._parts) <= 4


def test_non_finite_scalar_bytes() -> None:
    for value in (math.inf, -math.inf):
        assert scalar_value("x", value).endswith(
            np.float32(value).tobytes() + bytes.fromhex("4a0b0a090a07") + b"scalars"
        )
    nan = scalar_value("x", math.nan)
    stored = np.frombuffer(nan[len(scalar_value_prefix("x")) :][:4], "<f4")[0]
    assert math.isnan(stored)


# --- the docs/FORMAT.md §3.4 TF2 scalar, end to end -------------------------------------------


def test_summary_writer_reproduces_tensorboardx_scalar_event() -> None:
    # SummaryWriter writes tensorboardX's form (simple_value), not TF2's: the event tensorboardX's
    # FileWriter.add_summary builds from tensorboardX.summary.scalar, byte for byte.
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    tbx_event_pb2 = pytest.importorskip("tensorboardX.proto.event_pb2")
    expected = tbx_event_pb2.Event(
        wall_time=TF2_SCALAR_WALL_TIME, step=3, summary=tbx_summary.scalar("loss", 0.5)
    ).SerializeToString()
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_scalar("loss", 0.5, 3, walltime=TF2_SCALAR_WALL_TIME)
    writer.add_scalar("loss", np.float64(0.5), np.int64(3), walltime=TF2_SCALAR_WALL_TIME)
    assert sink.payloads == [expected, expected]


def test_tf2_scalar_reproduces_tf2_scalar_event(monkeypatch: pytest.MonkeyPatch) -> None:
    class FrozenTime:
        @staticmethod
        def time() -> float:
            return TF2_SCALAR_WALL_TIME

    monkeypatch.setattr(tf2, "time", FrozenTime)
    sink = MemorySink()
    writer = npsummary.create_file_writer(sink)
    with writer.as_default(step=3):
        assert npsummary.scalar("loss", 0.5) is True
    with writer.as_default():
        assert npsummary.scalar("loss", np.float32(0.5), step=3) is True
    assert sink.payloads == [TF2_SCALAR_EVENT, TF2_SCALAR_EVENT]


def test_tensorboard_parses_tf2_scalar_as_tf_does() -> None:
    event = _tb_event()
    event.ParseFromString(TF2_SCALAR_EVENT)
    assert event.step == 3
    assert event.wall_time == TF2_SCALAR_WALL_TIME
    (value,) = event.summary.value
    assert value.tag == "loss"
    assert value.metadata.plugin_data.plugin_name == "scalars"
    assert value.tensor.dtype == 1
    assert value.tensor.HasField("tensor_shape")
    assert struct.unpack("<f", value.tensor.tensor_content) == (0.5,)
