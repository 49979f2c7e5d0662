"""The scalar hot paths (issue 22) give the bytes of the general path, byte for byte.

``add_scalar`` and ``scalar()`` pack a whole event with one ``struct`` call from per-tag cached
bytes when the call is the common one (a float, a small positive int step, no titles, a tag seen
before); every other call takes the general path. These tests pin that both agree with protobuf's
own serializer at every boundary of the packed layouts (step varint lengths, +0.0 and -0.0 wall
times, float32 saturation, NaN) and that the background writer's batch framing equals
``frame_record`` record by record.
"""

from __future__ import annotations

import math
import os

import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, proto
from npsummary._format.record import frame_record, frame_records, iter_records
from npsummary._summaries.scalar import (
    PACKED_STEP_LIMIT,
    ScalarEncoder,
    SimpleScalarEncoder,
    pack_event,
)

STEPS = [
    0,
    1,
    127,
    128,
    16383,
    16384,
    PACKED_STEP_LIMIT - 1,
    PACKED_STEP_LIMIT,
    2**40,
    -1,
    -(2**63),
]
# protobuf's pure-Python backend before 4.x (3.20, CI's floor) drops a -0.0 double as if it were
# the default 0.0, on writing and reading; upb and newer backends keep it, and so do our bytes.
# Where the installed protobuf drops it, it cannot be the judge of a -0.0 wall time.
KEEPS_NEGATIVE_ZERO = bool(proto.Event(wall_time=-0.0).SerializeToString())
WALLS = [0.0, 1.5, 1.7e9 + 0.125] + ([-0.0] if KEEPS_NEGATIVE_ZERO else [])
VALUES = [0.0, -0.0, 0.1, -2.5, 3.4028234e38, math.inf, -math.inf]


def _simple_event(tag: str, value: float, step: int, wall: float) -> bytes:
    event = proto.Event(wall_time=wall, step=step)
    event.summary.value.add(tag=tag, simple_value=value)
    return bytes(event.SerializeToString())


@pytest.mark.parametrize("tag", ["loss", "", "x" * 200, "é/ü"])
def test_pack_event_equals_protobuf_for_simple_values(tag: str) -> None:
    encoder = SimpleScalarEncoder()
    for step in STEPS:
        for wall in WALLS:
            for value in VALUES:
                expected = _simple_event(tag, value, step, wall)
                assert pack_event(encoder.entry(tag), value, step, wall) == expected
                assert encoder.event(tag, value, step, wall) == expected


def test_pack_event_equals_the_piecewise_tf2_encoding() -> None:
    encoder = ScalarEncoder()
    for description, display_name in [(None, None), ("a *note*", None), (None, "Loss")]:
        entry = encoder.entry("loss", description, display_name)
        for step in STEPS:
            for wall in WALLS:
                event = proto.Event.FromString(pack_event(entry, 0.25, step, wall))
                assert (event.step, event.wall_time) == (step, wall)
                assert math.copysign(1, event.wall_time) == math.copysign(1, wall)
                (value,) = event.summary.value
                assert value.tag == "loss" and value.tensor.tensor_content == b"\x00\x00\x80>"
                assert value.metadata.summary_description == (description or "")
                assert value.metadata.display_name == (display_name or "")


def test_add_scalar_hot_path_writes_what_the_general_path_writes() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    calls = [
        ("loss", 0.5, 1, None),  # first call of a tag: general path, fills the cache
        ("loss", 0.5, 1, None),  # hot path
        ("loss", -1.25, 200, None),
        ("loss", 7.0, 20000, None),
        ("loss", 1e39, 3, None),  # beyond float32: saturated by the general path
        ("loss", math.nan, 4, None),
        ("loss", 2.0, PACKED_STEP_LIMIT, None),
        ("loss", 2.0, 5, 123.5),  # explicit wall time
        ("acc", 1.0, 0, None),
    ]
    for tag, value, step, wall in calls:
        writer.add_scalar(tag, value, step, walltime=wall)
    events = [proto.Event.FromString(p) for p in sink.payloads]
    assert len(events) == len(calls)
    for event, (tag, value, step, wall) in zip(events, calls, strict=True):
        (got,) = event.summary.value
        assert (got.tag, event.step) == (tag, step)
        if wall is not None:
            assert event.wall_time == wall
        expected = min(value, math.inf) if value < 3.5e38 else math.inf
        assert got.simple_value == expected or (math.isnan(value) and math.isnan(got.simple_value))
    # Byte-identical to the general encoder (wall times taken from what was written).
    encoder = SimpleScalarEncoder()
    for payload, event in zip(sink.payloads, events, strict=True):
        (got,) = event.summary.value
        assert payload == encoder.event(got.tag, got.simple_value, event.step, event.wall_time)


def test_add_scalar_hot_path_keeps_the_checks() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_scalar("loss", 0.5, 1)
    with pytest.raises(TypeError, match="loss"):
        writer.add_scalar("loss", "0.5", 2)
    with pytest.raises(ValueError, match="loss"):
        writer.add_scalar("loss", 0.5, float("nan"))
    writer.add_scalar("loss", 0.5, 3)
    assert [proto.Event.FromString(p).step for p in sink.payloads] == [1, 3]


def test_add_scalar_hot_path_refuses_writes_after_the_sink_closed(
    tmp_path: os.PathLike[str],
) -> None:
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("loss", 0.5, 1)
    sink = writer.sink
    sink.close()
    with pytest.raises(ValueError, match="closed"):
        writer.add_scalar("loss", 0.5, 2)


def test_tf2_scalar_hot_path_keeps_tf_semantics() -> None:
    sink = MemorySink()
    writer = npsummary.create_file_writer(sink)
    with writer.as_default():
        assert npsummary.scalar("loss", 0.5, step=1)
        assert npsummary.scalar("loss", 0.5, step=1)  # hot path
        with pytest.raises(ValueError, match="No step set"):
            npsummary.scalar("loss", 0.5)
        with npsummary.record_if(False):
            assert npsummary.scalar("loss", 0.5, step=2) is False
        with npsummary.name_scope("train"):
            assert npsummary.scalar("loss", 0.25, step=3)
            assert npsummary.scalar("loss", 0.25, step=4)
    events = [proto.Event.FromString(p) for p in sink.payloads if b"scalars" in p]
    assert [(e.summary.value[0].tag, e.step) for e in events] == [
        ("loss", 1),
        ("loss", 1),
        ("train/loss", 3),
        ("train/loss", 4),
    ]
    assert sink.payloads[-1] == ScalarEncoder().event("train/loss", 0.25, 4, events[-1].wall_time)


def test_tf2_scalar_hot_path_bytes_at_every_step_width() -> None:
    sink = MemorySink()
    writer = npsummary.create_file_writer(sink)
    steps = [1, 5, 127, 128, 16383, 16384, PACKED_STEP_LIMIT - 1, PACKED_STEP_LIMIT, 0]
    with writer.as_default():
        for step in steps:
            assert npsummary.scalar("loss", -0.75, step=step)
    payloads = [p for p in sink.payloads if b"scalars" in p]
    encoder = ScalarEncoder()
    for payload, step in zip(payloads, steps, strict=True):
        wall = proto.Event.FromString(payload).wall_time
        assert payload == encoder.event("loss", -0.75, step, wall)


def test_frame_records_equals_frame_record() -> None:
    payloads = [os.urandom(n % 300) for n in range(900)]
    data = frame_records(payloads)
    assert data == b"".join(frame_record(p) for p in payloads)
    assert list(iter_records(data)) == payloads
