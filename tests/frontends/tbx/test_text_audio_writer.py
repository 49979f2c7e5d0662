"""SummaryWriter.add_text and add_audio, read back with TensorBoard's reader."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest

from conftest import read_run
from npsummary import MemorySink, SummaryWriter

tensor_util = pytest.importorskip("tensorboard.util.tensor_util")


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
        assert samples.max() == 32767 and samples.min() == -32768
        assert acc.SummaryMetadata(tag).plugin_data.plugin_name == "audio"


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
    assert writer.sink.payloads == []
