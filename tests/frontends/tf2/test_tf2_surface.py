"""The tf.summary surface beyond scalars: text, audio, write, write_raw_pb, scopes, record_if."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npsummary
from conftest import examples
from npsummary import MemorySink, experimental
from npsummary import proto as P
from npsummary._format.wav import encode_wav, float_to_int16

# tf.audio.encode_wav output from TensorFlow 2.21 (tests/conformance/gen_golden.py probes).
TF_WAV_EDGE_INPUT = np.array(
    [
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        32768,
        -32768,
        65536,
        -65536,
        np.nan,
        np.inf,
        -np.inf,
        0.99999 * 32768,
        1e-30,
        32767.5,
    ],
    dtype=np.float32,
) / np.float32(32768)
TF_WAV_EDGE_HEADER = bytes.fromhex(
    "524946464200000057415645666d74201000000001000100401f0000803e000002001000646174611e000000"
)
TF_WAV_EDGE_SAMPLES = [1, 2, 3, -1, -2, 32767, -32768, 32767, -32768, 0, 32767, -32768, 32767,
                       0, 32767]  # fmt: skip
TF_WAV_STEREO_ZEROS = bytes.fromhex(
    "524946463000000057415645666d74201000000001000200803e000000fa00000400100064617461"
    "0c000000000000000000000000000000"
)


def test_wav_matches_tensorflow_rounding_and_header() -> None:
    wav = encode_wav(TF_WAV_EDGE_INPUT.reshape(-1, 1), 8000)
    assert wav[:44] == TF_WAV_EDGE_HEADER
    assert np.frombuffer(wav[44:], "<i2").tolist() == TF_WAV_EDGE_SAMPLES
    assert encode_wav(np.zeros((3, 2)), 16000) == TF_WAV_STEREO_ZEROS
    assert len(encode_wav(np.zeros((0, 2), np.float32), 16000)) == 44


@pytest.mark.fuzz
@settings(max_examples=examples(200), deadline=None)
@given(st.floats(width=32, allow_nan=False))
def test_wav_sample_is_round_half_away_then_clamp(x: float) -> None:
    y = float(np.float32(x)) * 32768.0
    expected = int(min(max(np.sign(y) * np.floor(abs(y) + 0.5), -32768), 32767))
    assert int(float_to_int16(np.array([x], np.float32))[0]) == expected


@pytest.mark.parametrize(
    ("samples", "rate", "error"),
    [
        (np.zeros(3), 8000, ValueError),
        (np.zeros((3, 0)), 8000, ValueError),
        (np.zeros((3, 1)), 0, ValueError),
        (np.zeros((3, 1)), 2**32, ValueError),
        (np.zeros((3, 1)), 8000.0, TypeError),
        (np.array([["a"]]), 8000, TypeError),
    ],
)
def test_wav_rejects_bad_input(samples: Any, rate: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        encode_wav(samples, rate)


def _values(sink: MemorySink) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    for payload in sink.payloads:
        event = P.Event.FromString(payload)
        out.extend((event.step, value) for value in event.summary.value)
    return out


@pytest.fixture
def sink() -> MemorySink:
    return MemorySink()


def test_text_scalar_and_table(sink: MemorySink) -> None:
    with npsummary.create_file_writer(sink).as_default(step=3):
        assert npsummary.text("note", "hello **md**") is True
        assert npsummary.text("table", np.array([["a", "b"], ["c", "dé"]])) is True
        raw: list[bytes | str] = [b"x", "y"]
        assert npsummary.text("raw", raw, description="d") is True
        with pytest.raises(TypeError, match="note2"):
            npsummary.text("note2", np.arange(3))
    (s0, v0), (_, v1), (_, v2) = _values(sink)
    assert s0 == 3 and v0.tag == "note"
    assert v0.metadata.plugin_data.plugin_name == "text"
    assert v0.tensor.dtype == P.DT_STRING and list(v0.tensor.string_val) == [b"hello **md**"]
    assert v0.tensor.HasField("tensor_shape") and len(v0.tensor.tensor_shape.dim) == 0
    assert [d.size for d in v1.tensor.tensor_shape.dim] == [2, 2]
    assert list(v1.tensor.string_val) == [b"a", b"b", b"c", "dé".encode()]
    assert list(v2.tensor.string_val) == [b"x", b"y"]
    assert v2.metadata.summary_description == "d"


def test_audio_tensor_and_metadata(sink: MemorySink) -> None:
    clips = np.linspace(-1, 1, 4 * 5 * 2, dtype=np.float32).reshape(4, 5, 2)
    with npsummary.create_file_writer(sink).as_default(step=1):
        assert npsummary.audio("sound", clips, 8000, max_outputs=2) is True
        with pytest.raises(ValueError, match="shape"):
            npsummary.audio("bad", clips[0], 8000)
    with pytest.raises(ValueError, match="Unknown encoding"):
        npsummary.audio("x", clips, 8000, encoding="mp3")  # raised even without a writer
    ((_, value),) = _values(sink)
    assert value.metadata.plugin_data.plugin_name == "audio"
    assert value.metadata.plugin_data.content == b"\x10\x0b"
    assert [d.size for d in value.tensor.tensor_shape.dim] == [2, 2]
    wav0, label0, wav1, label1 = value.tensor.string_val
    assert label0 == label1 == b""
    assert wav0 == encode_wav(clips[0], 8000) and wav1 == encode_wav(clips[1], 8000)


def test_write_tensor_callable_and_metadata(sink: MemorySink) -> None:
    calls = []

    def make() -> np.ndarray:
        calls.append(1)
        return np.arange(6, dtype=np.int64).reshape(2, 3)

    md = P.SummaryMetadata()
    md.plugin_data.plugin_name = "custom"
    writer = npsummary.create_file_writer(sink)
    assert npsummary.write("t", make, step=0) is False  # no writer: callable not called
    with writer.as_default(step=2):
        with npsummary.record_if(False):
            assert npsummary.write("t", make) is False
        assert calls == []
        assert npsummary.write("t", make, metadata=md) is True
        assert npsummary.write("f", 1.5, metadata=md.SerializeToString()) is True
        with npsummary.name_scope("scope"):
            assert npsummary.write("s", "str") is True
    assert calls == [1]
    (_, t), (_, f), (_, s) = _values(sink)
    assert t.tag == "t" and t.tensor.dtype == P.DT_INT64
    assert np.frombuffer(t.tensor.tensor_content, "<i8").tolist() == list(range(6))
    assert t.metadata.plugin_data.plugin_name == "custom"
    assert f.tensor.dtype == P.DT_FLOAT and f.metadata == md
    assert s.tag == "s"  # write() ignores name scopes, as in TensorFlow
    assert not s.HasField("metadata") and list(s.tensor.string_val) == [b"str"]


def test_write_keeps_metadata_bytes_as_tensorflow_does(sink: MemorySink) -> None:
    # TF 2.21's tf.summary.write with these bytes (probed): bytes that do not parse give the
    # field present but empty (its writer ignores whether ParseFromString succeeded; CLU's own
    # test_write_summaries passes such bytes); b"" gives no field; a message is re-serialized.
    md = P.SummaryMetadata(display_name="dn")
    md.plugin_data.plugin_name = "p"
    with npsummary.create_file_writer(sink).as_default(step=0):
        assert npsummary.write("ones", 1.0, metadata=np.ones((2, 3)).tobytes()) is True
        assert npsummary.write("ff", 1.0, metadata=b"\xff") is True
        assert npsummary.write("empty", 1.0, metadata=b"") is True
        assert npsummary.write("good", 1.0, metadata=md.SerializeToString()) is True
        with pytest.raises(TypeError, match="'bad': metadata"):
            npsummary.write("bad", 1.0, metadata=3)
    ones, ff, empty, good = (value for _, value in _values(sink))
    assert ones.HasField("metadata") and ones.metadata.SerializeToString() == b""
    assert ff.HasField("metadata") and ff.metadata.SerializeToString() == b""
    assert not empty.HasField("metadata")
    assert good.metadata == md


def test_write_raw_pb_merges_into_one_event(sink: MemorySink) -> None:
    a = P.Summary()
    a.value.add(tag="a", simple_value=1.0)
    b = P.Summary()
    b.value.add(tag="b", simple_value=2.0)
    b.value.add(tag="c", simple_value=3.0)
    with npsummary.create_file_writer(sink).as_default(step=7):
        assert experimental.write_raw_pb(a.SerializeToString()) is True
        assert experimental.write_raw_pb([a.SerializeToString(), b.SerializeToString()]) is True
        with pytest.raises(ValueError, match="index 1"):
            experimental.write_raw_pb([a.SerializeToString(), b"\xff\xff"])
    events = [P.Event.FromString(p) for p in sink.payloads]
    assert [[v.tag for v in e.summary.value] for e in events] == [["a"], ["a", "b", "c"]]
    assert {e.step for e in events} == {7}


def test_name_scope_nesting_and_absolute(sink: MemorySink) -> None:
    with npsummary.create_file_writer(sink).as_default(step=0):
        with npsummary.name_scope("a"):
            with npsummary.name_scope("b") as scope:
                assert scope == "a/b/"
                npsummary.scalar("x", 1.0)
            with npsummary.name_scope("top/"):
                npsummary.text("y", "t")
            with npsummary.name_scope(None):
                npsummary.scalar("z", 1.0)
        npsummary.scalar("w", 1.0)
    assert [v.tag for _, v in _values(sink)] == ["a/b/x", "top/y", "z", "w"]


def test_summary_scope_tag_and_scope() -> None:
    with npsummary.name_scope("outer"):
        with experimental.summary_scope("my summ!") as (tag, scope):
            assert (tag, scope) == ("outer/my summ!", "outer/mysumm/")
        with experimental.summary_scope(None, "dflt") as (tag, scope):
            assert (tag, scope) == ("outer/dflt", "outer/dflt/")
        with experimental.summary_scope("!!") as (tag, scope):
            assert (tag, scope) == ("outer/!!", "outer/summary/")


def test_record_if_bool_callable_and_restore(sink: MemorySink) -> None:
    assert npsummary.should_record_summaries() is False
    writer = npsummary.create_file_writer(sink)
    with writer.as_default():
        assert npsummary.should_record_summaries() is True
        with npsummary.record_if(False):
            assert npsummary.should_record_summaries() is False
            assert npsummary.scalar("x", 1.0) is False  # no step needed when not recording
            with npsummary.record_if(True):
                assert npsummary.should_record_summaries() is True
            assert npsummary.should_record_summaries() is False
        state = {"on": False}
        with npsummary.record_if(lambda: state["on"]):
            assert npsummary.scalar("x", 1.0, step=1) is False
            state["on"] = True
            assert npsummary.scalar("x", 2.0, step=2) is True
        assert npsummary.should_record_summaries() is True
    assert [s for s, _ in _values(sink)] == [2]


def test_record_if_and_name_scope_are_thread_local(sink: MemorySink) -> None:
    seen: dict[str, Any] = {}

    def other() -> None:
        seen["scope"] = npsummary._frontends.context.state.name_scope
        seen["record"] = npsummary._frontends.context.state.record_if

    with npsummary.name_scope("main"), npsummary.record_if(False):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen == {"scope": "", "record": True}


def test_graph_and_trace_explain_why_unsupported() -> None:
    for call in (
        lambda: npsummary.graph(object()),
        npsummary.trace_on,
        lambda: npsummary.trace_export("t"),
        npsummary.trace_off,
    ):
        with pytest.raises(NotImplementedError, match="without TensorFlow"):
            call()
