"""SummaryWriter.add_text and add_audio, read back with TensorBoard's reader."""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from conftest import read_run
from npsummary import EventSink, MemorySink, SummaryWriter, TensorboardXSummaryWriter, proto

tensor_util = pytest.importorskip("tensorboard.util.tensor_util")


def _payloads(sink: EventSink) -> list[bytes]:
    """What a writer built on a MemorySink wrote (its ``sink`` property is typed EventSink)."""
    return cast(MemorySink, sink).payloads


def test_add_text_uses_the_tensorboardx_tag(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_text("notes", "**bold** and `code`", 3)
    acc = read_run(logdir)
    (event,) = acc.Tensors("notes/text_summary")
    assert event.step == 3
    assert tensor_util.make_ndarray(event.tensor_proto).tolist() == [b"**bold** and `code`"]
    assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"


def test_add_audio_writes_clipped_16_bit_wav(logdir: Path) -> None:
    t = np.linspace(0, 1, 800, endpoint=False)
    sound = 1.5 * np.sin(2 * np.pi * 5 * t)  # clipped to [-1, 1]
    with SummaryWriter(str(logdir)) as writer:
        writer.add_audio("tone", sound, 1, sample_rate=800)
        writer.add_audio("row", sound[None, :100], 2, sample_rate=800)
        writer.add_audio("stereo", np.stack([sound, -sound], axis=1), 3, sample_rate=800)
    acc = read_run(logdir)
    for tag, channels, frames in (("tone", 1, 800), ("row", 1, 100), ("stereo", 2, 800)):
        (event,) = acc.Tensors(tag)
        wav_bytes = tensor_util.make_ndarray(event.tensor_proto)[0]
        with wave.open(io.BytesIO(wav_bytes)) as wav:
            assert wav.getnchannels() == channels
            assert wav.getframerate() == 800
            assert wav.getsampwidth() == 2
            assert wav.getnframes() == frames
            samples = np.frombuffer(wav.readframes(frames), "<i2")
        assert samples.max() == 32767 and samples.min() == -32767  # torch: trunc(x * 32767)
        assert acc.SummaryMetadata(tag).plugin_data.plugin_name == "audio"


# Samples as torch 2.13's and tensorboardX 2.6.5's add_audio write them (tensorboardX through
# soundfile 0.14 / libsndfile 1.2.2), printed by those libraries for these inputs; the golden
# files of tests/conformance/golden/flavours cover whole clips.
EDGES = [1.0, -1.0, 0.5, -0.5, 1e-10, -1e-10, 0.49999999 / 32768, -0.5 / 32768, 3 / 32768 - 1e-9]
EDGES += [0.9, -0.9]
AS_TORCH = [32767, -32767, 16383, -16383, 0, 0, 0, 0, 2, 29490, -29490]
AS_TENSORBOARDX = [32767, -32768, 16384, -16384, 0, 0, 0, -1, 2, 29491, -29492]


@pytest.mark.parametrize(
    "writer_class, samples, expected",
    [
        (SummaryWriter, EDGES, AS_TORCH),
        (TensorboardXSummaryWriter, EDGES, AS_TENSORBOARDX),
        (SummaryWriter, [np.nan, 0.25, -0.25], [0, 8191, -8191]),
        (TensorboardXSummaryWriter, [np.nan, 0.25, -0.25], [-32768, 8192, -8192]),
    ],
)
def test_each_flavour_converts_samples_as_its_library(
    writer_class: type[SummaryWriter], samples: list[float], expected: list[int]
) -> None:
    sink = MemorySink()
    with writer_class(sink) as writer:
        writer.add_audio("a", np.array(samples), 0, sample_rate=8000)
    events = [proto.Event.FromString(payload) for payload in sink.payloads]
    (value,) = [v for event in events for v in event.summary.value]
    assert value.audio.encoded_audio_string[:4] == b"RIFF"
    got = np.frombuffer(value.audio.encoded_audio_string[44:], "<i2")
    assert got.tolist() == expected


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda w: w.add_text("t", 5, 0), TypeError),
        (lambda w: w.add_audio("a", np.zeros((2, 3, 4)), 0), ValueError),
        (lambda w: w.add_audio("a", np.zeros(10), 0, sample_rate=0), ValueError),
        (lambda w: w.add_audio("a", np.zeros(10), 0, sample_rate=1.5), TypeError),
        (lambda w: w.add_audio("a", np.array(["x"]), 0), TypeError),
    ],
)
def test_bad_text_and_audio_name_the_tag(call, error) -> None:  # type: ignore[no-untyped-def]
    writer = SummaryWriter(MemorySink())
    with pytest.raises(error, match=r"'[ta]'"):
        call(writer)
    assert _payloads(writer.sink) == []


@pytest.mark.parametrize("shape", [(2, 1000), (3, 500), (1000, 3), (1, 2, 400)])
@pytest.mark.parametrize("writer_class", [SummaryWriter, TensorboardXSummaryWriter])
def test_channels_first_audio_is_refused_as_the_libraries_assert(
    shape: tuple[int, ...], writer_class: type[SummaryWriter]
) -> None:
    """(2, L), torchaudio's layout, was written as L channels of 2 frames (issue 29, item 6);
    torch and tensorboardX assert: the error is a ValueError and an AssertionError."""
    writer = writer_class(MemorySink())
    with pytest.raises(ValueError, match=r"'stereo'.*channels last.*clip\.T") as info:
        writer.add_audio("stereo", np.zeros(shape), 0)
    assert isinstance(info.value, AssertionError)
    assert _payloads(writer.sink) == []
    writer.add_audio("stereo", np.zeros((1000, 2)), 0)  # the writer stays usable
    assert len(_payloads(writer.sink)) == 1


@pytest.mark.parametrize("shape", [(1000,), (1, 1000), (1000, 1), (1000, 2), (1, 1, 1000)])
def test_audio_layouts_the_libraries_take(shape: tuple[int, ...]) -> None:
    writer = SummaryWriter(MemorySink())
    writer.add_audio("ok", np.zeros(shape), 0)
    assert len(_payloads(writer.sink)) == 1
