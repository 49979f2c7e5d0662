"""The legacy scalar encoders are byte-for-byte what protobuf serializes for the same messages
(TensorBoard's own classes), for any tag, value, step, wall time and titles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npsummary._summaries.scalar import SimpleScalarEncoder, torch_scalar_value

event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")

titles = st.one_of(st.none(), st.text(max_size=20))


def _expected_value(tag: str, value: float, description: str | None, display: str | None) -> Any:
    out = summary_pb2.Summary.Value(tag=tag, simple_value=value)
    if display or description:
        out.metadata.display_name = display or ""
        out.metadata.summary_description = description or ""
    return out


@pytest.mark.fuzz
@given(
    st.text(max_size=40),
    st.floats(width=32, allow_nan=False),
    st.integers(0, 2**63 - 1),
    st.floats(min_value=0, max_value=4e9),
    titles,
    titles,
)
def test_event_bytes_equal_protobufs(
    tag: str, value: float, step: int, wall: float, description: str | None, display: str | None
) -> None:
    encoder = SimpleScalarEncoder()
    expected_value = _expected_value(tag, value, description, display)
    event = event_pb2.Event(wall_time=wall, step=step)
    event.summary.value.append(expected_value)
    got = encoder.event(tag, value, step, wall, description, display)
    assert got == event.SerializeToString()
    assert encoder.encode(tag, value, description, display) == expected_value.SerializeToString()


@pytest.mark.fuzz
@given(st.text(max_size=40), st.floats(allow_nan=False), st.booleans())
def test_torch_scalar_parses_back(tag: str, value: float, double: bool) -> None:
    parsed = summary_pb2.Summary.Value.FromString(
        torch_scalar_value(tag, value, double_precision=double)
    )
    assert parsed.tag == tag
    assert parsed.metadata.plugin_data.plugin_name == "scalars"
    if double:
        assert parsed.tensor.dtype == 2 and parsed.tensor.double_val[0] == value
    else:
        with np.errstate(over="ignore"):
            assert parsed.tensor.float_val[0] == np.float32(value)
