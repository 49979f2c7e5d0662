"""One bad record never aborts a read (issue 20 items 6 and 11).

A value whose plugin content does not decode (hparams, a cut-short PNG or WAV, an image over the
pixel limit) is skipped and counted in ``stats.bad_values``, with a problem line naming the
file, run, tag and step; ``strict=True`` raises :class:`CorruptRecordError` naming the same.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import reader
from npsummary._format.png import encode_png
from npsummary._format.record import CorruptRecordError, frame_record
from npsummary._format.wav import encode_wav
from npsummary.proto import Event

WALL = 1_700_000_000.0


def _record(step: int, tag: str, **fields: Any) -> bytes:
    ev = Event(wall_time=WALL, step=step)
    value = ev.summary.value.add(tag=tag)
    for name, content in fields.items():
        if name == "plugin":
            plugin, data = content
            value.metadata.plugin_data.plugin_name = plugin
            value.metadata.plugin_data.content = data
        elif name == "image":
            value.image.encoded_image_string = content
            value.image.width = value.image.height = 8
        elif name == "audio":
            value.audio.encoded_audio_string = content
            value.audio.sample_rate = 8000
        else:
            setattr(value, name, content)
    return bytes(frame_record(ev.SerializeToString()))


def _run(root: Path, name: str, *records: bytes) -> Path:
    path = root / name / "events.out.tfevents.1.host"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(records))
    return path


def _good(root: Path) -> None:
    _run(root, "good", *[_record(s, "loss", simple_value=s / 2) for s in range(3)])


def _hparams_bad(root: Path) -> Path:
    return _run(
        root,
        "hp",
        _record(0, "_hparams_/session_start_info", plugin=("hparams", b"\xff\xff\xff")),
        _record(1, "loss", simple_value=1.0),
    )


def test_undecodable_hparams_content_is_skipped_and_counted(tmp_path: Path) -> None:
    _good(tmp_path)
    path = _hparams_bad(tmp_path)
    data = reader.load(tmp_path)
    assert data.stats.bad_values == 1
    assert data.scalars[("good", "loss")].values.tolist() == [0.0, 0.5, 1.0]
    assert data.scalars[("hp", "loss")].values.tolist() == [1.0]
    line = next(p for p in data.stats.problems if "hparams" in p)
    assert str(path) in line and "'hp'" in line and "step 0" in line
    assert reader.hparams(tmp_path) == {}
    with pytest.raises(CorruptRecordError, match=r"run 'hp', hparams tag '_hparams_/sess.*step 0"):
        reader.load(tmp_path, strict=True)


def _png(width: int, height: int) -> bytes:
    return encode_png(np.zeros((height, width, 3), np.uint8))


def test_cut_short_png_with_decode_keeps_every_other_run(tmp_path: Path) -> None:
    _good(tmp_path)
    whole = _png(8, 8)
    path = _run(
        tmp_path,
        "img",
        _record(0, "pic", image=whole),
        _record(1, "pic", image=whole[: len(whole) // 2]),
        _record(2, "pic", image=whole),
    )
    data = reader.load(tmp_path, decode=True)
    series = data.images[("img", "pic")]
    assert series.steps.tolist() == [0, 2]
    assert all(im[0].shape == (8, 8, 3) for im in series.images)
    assert data.stats.bad_values == 1 and ("good", "loss") in data.scalars
    assert any(str(path) in p and "'pic'" in p and "step 1" in p for p in data.stats.problems)
    with pytest.raises(CorruptRecordError, match=r"events\.out.*run 'img', images tag 'pic'"):
        reader.load(tmp_path, decode=True, strict=True)
    assert reader.load(tmp_path).images[("img", "pic")].steps.tolist() == [0, 1, 2]


def test_bad_wav_with_decode_is_skipped_and_counted(tmp_path: Path) -> None:
    good = encode_wav(np.zeros((16, 1), np.float32), 8000)
    _run(
        tmp_path,
        "au",
        _record(0, "clip", audio=good),
        _record(1, "clip", audio=b"RIFF\x00\x00\x00\x00WAVEjunk"),
    )
    data = reader.load(tmp_path, decode=True)
    assert data.audio[("au", "clip")].steps.tolist() == [0]
    assert data.stats.bad_values == 1
    with pytest.raises(CorruptRecordError, match="run 'au', audio tag 'clip', step 1"):
        reader.load(tmp_path, decode=True, strict=True)


def _png_header_only(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + body))
        return struct.pack(">I", len(body)) + kind + body + crc

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x04" * 16)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def test_image_over_the_pixel_limit_is_refused_naming_run_tag_and_step(tmp_path: Path) -> None:
    _run(tmp_path, "big", _record(7, "huge", image=_png_header_only(1 << 15, 1 << 15)))
    _run(tmp_path, "small", _record(3, "pic", image=_png(16, 16)))
    data = reader.load(tmp_path, decode=True)
    assert ("big", "huge") not in data.images and data.stats.bad_values == 1
    assert any("'big'" in p and "'huge'" in p and "step 7" in p for p in data.stats.problems)
    assert "max_image_pixels" in " ".join(data.stats.problems)
    with pytest.raises(CorruptRecordError, match=r"run 'big', images tag 'huge', step 7.*limit"):
        reader.load(tmp_path, decode=True, strict=True)
    # the caller lowers (or raises) the documented limit
    low = reader.images(tmp_path, decode=True, runs="small", max_image_pixels=255)
    assert low == {}
    ok = reader.images(tmp_path, decode=True, runs="small", max_image_pixels=256)
    assert ok[("small", "pic")].images[0][0].shape == (16, 16, 3)
    assert reader.MAX_IMAGE_PIXELS == 1 << 26
    with pytest.raises(ValueError, match="max_image_pixels"):
        reader.load(tmp_path, max_image_pixels=0)


def test_corrupt_metadata_on_bulk_decoded_scalars_is_counted(tmp_path: Path) -> None:
    """Scalar tensors in runs of 64+ go through the bulk decoder; bad metadata there must not
    raise protobuf's DecodeError out of load."""
    records = []
    for step in range(80):
        ev = Event(wall_time=WALL, step=step)
        value = ev.summary.value.add(tag="acc")
        value.tensor.dtype = 1
        value.tensor.float_val.append(0.25)
        # metadata field 9 with a truncated submessage: a plugin_data whose length runs past
        value.metadata.plugin_data.plugin_name = "scalars"
        raw = bytearray(ev.SerializeToString())
        records.append(raw)
    data = bytearray()
    for raw in records:
        at = raw.find(b"scalars")
        raw[at - 1] = 0x7F  # the string's length now runs past its message
        data += frame_record(bytes(raw))
    _run(tmp_path, "r", bytes(data))
    got = reader.load(tmp_path)
    assert ("r", "acc") not in got.scalars
    assert got.stats.corrupt_records == 80


def test_text_memory_is_bounded_by_the_text(tmp_path: Path) -> None:
    """One long string among many short ones made a fixed-width array of 8000x the text."""
    import tracemalloc

    ev = Event(wall_time=WALL, step=0)
    value = ev.summary.value.add(tag="note")
    value.metadata.plugin_data.plugin_name = "text"
    value.tensor.dtype = 7  # DT_STRING
    value.tensor.tensor_shape.dim.add(size=20_001)
    value.tensor.string_val.extend([b"x" * 100_000] + [b"a"] * 20_000)
    _run(tmp_path, "t", bytes(frame_record(ev.SerializeToString())))
    tracemalloc.start()
    try:
        texts = reader.text(tmp_path)[("t", "note")].texts
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20  # the fixed-width array alone was 8 GB
    assert texts[0].shape == (20_001,) and texts[0].tolist()[:2] == ["x" * 100_000, "a"]
    small = Event(wall_time=WALL, step=1)
    v = small.summary.value.add(tag="short")
    v.metadata.plugin_data.plugin_name = "text"
    v.tensor.dtype = 7
    v.tensor.string_val.append(b"hello")
    _run(tmp_path, "s", bytes(frame_record(small.SerializeToString())))
    assert reader.text(tmp_path)[("s", "short")].texts[0].dtype.kind == "U"
