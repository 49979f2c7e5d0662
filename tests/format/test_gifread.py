"""The GIF decoder: round trips through our encoder, frame-by-frame agreement with Pillow on GIFs
Pillow writes (disposal, transparency, interlace, local palettes) and with tensorboardX's
add_video, ValueError on every truncated or corrupt file, and videos read back by the reader."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary import SummaryWriter, reader
from npsummary._format.gif import encode_gif
from npsummary._format.gifread import decode_gif


def _pillow_frames(data: bytes) -> tuple[list[np.ndarray], list[int]]:
    """Every frame as Pillow composes it, in RGBA, and its duration in milliseconds."""
    image_mod = pytest.importorskip("PIL.Image")
    seq = pytest.importorskip("PIL.ImageSequence")
    frames, durations = [], []
    with image_mod.open(io.BytesIO(data)) as im:
        for frame in seq.Iterator(im):
            frames.append(np.asarray(frame.convert("RGBA")))
            durations.append(int(frame.info.get("duration", 0)))
    return frames, durations


def _assert_same_as_pillow(data: bytes) -> np.ndarray:
    ours, durations = decode_gif(data)
    theirs, their_durations = _pillow_frames(data)
    assert len(ours) == len(theirs)
    assert durations.tolist() == their_durations
    for t, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a.shape[-1] == 3:
            np.testing.assert_array_equal(a, b[..., :3], err_msg=f"frame {t}")
            assert (b[..., 3] == 255).all()
        else:  # transparent pixels: only the alpha is defined
            np.testing.assert_array_equal(a[..., 3], b[..., 3], err_msg=f"frame {t} alpha")
            opaque = a[..., 3] == 255
            np.testing.assert_array_equal(a[opaque], b[opaque], err_msg=f"frame {t}")
    return ours


# -- round trips through our encoder ---------------------------------------------------------


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    st.integers(1, 4),
    st.integers(1, 24),
    st.integers(1, 24),
    st.integers(1, 40),
    st.integers(0, 655),
    st.data(),
)
def test_round_trip_lossless(
    t: int, h: int, w: int, colors: int, delay: int, data: st.DataObject
) -> None:
    """At most 256 colours over the clip: the encoder is lossless, so decoding gives it back."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    palette = rng.integers(0, 256, (colors, 3), dtype=np.uint8)
    frames = palette[rng.integers(0, colors, (t, h, w))]
    if data.draw(st.booleans()):  # mostly static clips exercise the encoder's sub-rectangles
        frames[1:] = frames[0]
        frames[1:, : h // 2, : w // 2] = palette[0]
    out, durations = decode_gif(encode_gif(frames, delay))
    np.testing.assert_array_equal(out, frames)
    assert durations.tolist() == [delay * 10] * t


@pytest.mark.fuzz
@settings(max_examples=examples(25), deadline=None)
@given(
    hnp.arrays(
        np.uint8, st.tuples(st.integers(1, 3), st.integers(1, 40), st.integers(1, 40), st.just(3))
    )
)
def test_round_trip_many_colours_agrees_with_pillow(frames: np.ndarray) -> None:
    """Over 256 colours (local palettes, median cut): the decoded frames are what Pillow sees."""
    _assert_same_as_pillow(encode_gif(frames, 7))


def test_large_noise_frames_use_literal_codes() -> None:
    frames = np.random.default_rng(1).integers(0, 256, (2, 96, 128, 3), dtype=np.uint8)
    out = _assert_same_as_pillow(encode_gif(frames, 4))
    assert out.shape == (2, 96, 128, 3)


# -- GIFs written by Pillow ------------------------------------------------------------------


def _pillow_gif(frames: list[np.ndarray], **options: object) -> bytes:
    image_mod = pytest.importorskip("PIL.Image")
    images = [image_mod.fromarray(f) for f in frames]
    buf = io.BytesIO()
    images[0].save(buf, "GIF", save_all=True, append_images=images[1:], **options)
    return buf.getvalue()


def _moving_square(t: int, h: int = 32, w: int = 40) -> list[np.ndarray]:
    frames = []
    for i in range(t):
        f = np.zeros((h, w, 3), np.uint8)
        f[:, :, 2] = 80
        f[4 + i : 12 + i, 3 * i : 3 * i + 9] = (250, 20 * i, 10)
        frames.append(f)
    return frames


@pytest.mark.parametrize("disposal", [0, 1, 2, 3])
@pytest.mark.parametrize("interlace", [True, False])
def test_pillow_disposal_and_interlace(disposal: int, interlace: bool) -> None:
    data = _pillow_gif(
        _moving_square(5), disposal=disposal, interlace=interlace, duration=[30, 40, 50, 60, 70]
    )
    out = _assert_same_as_pillow(data)
    # Pillow marks unchanged pixels transparent in later frames, so the output may be RGBA.
    assert out.shape[:3] == (5, 32, 40)
    np.testing.assert_array_equal(out[0, ..., :3], _moving_square(1)[0])


@pytest.mark.parametrize("disposal", [1, 2, 3])
def test_pillow_transparency(disposal: int) -> None:
    """P frames with a transparent index: RGBA output; a transparent pixel keeps the canvas."""
    image_mod = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(3)
    palette = rng.integers(0, 256, (16, 3), dtype=np.uint8)
    images = []
    for i in range(4):
        index = rng.integers(1, 16, (20, 24), dtype=np.uint8)
        index[i * 3 : i * 3 + 8, i * 4 : i * 4 + 10] = 0  # index 0 is transparent
        im = image_mod.frombytes("P", (24, 20), index.tobytes())
        im.putpalette(palette.tobytes())
        images.append(im)
    buf = io.BytesIO()
    images[0].save(
        buf,
        "GIF",
        save_all=True,
        append_images=images[1:],
        transparency=0,
        disposal=disposal,
        duration=20,
        optimize=False,
    )
    out = _assert_same_as_pillow(buf.getvalue())
    assert out.shape == (4, 20, 24, 4)
    assert (out[0, :8, :10, 3] == 0).all()


def test_pillow_local_palettes() -> None:
    """Each frame with its own palette (more than 256 colours over the clip)."""
    image_mod = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(4)
    images = []
    for _ in range(4):
        palette = rng.integers(0, 256, (256, 3), dtype=np.uint8)
        im = image_mod.frombytes(
            "P", (30, 18), rng.integers(0, 256, 18 * 30, dtype=np.uint8).tobytes()
        )
        im.putpalette(palette.tobytes())
        images.append(im)
    buf = io.BytesIO()
    images[0].save(buf, "GIF", save_all=True, append_images=images[1:], optimize=False)
    data = buf.getvalue()
    assert data.count(b"\x2c") >= 4
    _assert_same_as_pillow(data)


def test_tensorboardx_add_video(tmp_path: Path) -> None:
    """tensorboardX writes videos through moviepy; our reader decodes them as Pillow does."""
    pytest.importorskip("moviepy", reason="tensorboardX's add_video needs moviepy")
    tbx = pytest.importorskip("tensorboardX")
    video = np.random.default_rng(5).integers(0, 256, (1, 6, 3, 16, 20), dtype=np.uint8)
    with tbx.SummaryWriter(str(tmp_path)) as writer:
        writer.add_video("clip", video, 0, fps=5)
    (series,) = reader.images(tmp_path).values()
    gif = series.images[0][0]
    out = _assert_same_as_pillow(gif)
    assert out.shape[:3] == (6, 16, 20)


# -- corrupt input ---------------------------------------------------------------------------


def _small_gif() -> bytes:
    return _pillow_gif(_moving_square(3, 16, 20), disposal=2, duration=40)


def test_every_truncation_raises_value_error() -> None:
    for data in (_small_gif(), encode_gif(np.stack(_moving_square(3, 16, 20)), 5)):
        decode_gif(data)
        for n in range(len(data)):
            with pytest.raises(ValueError):
                decode_gif(data[:n])


@pytest.mark.fuzz
@settings(max_examples=examples(300), deadline=None)
@given(st.data())
def test_corrupt_bytes_raise_value_error_or_decode(data: st.DataObject) -> None:
    raw = bytearray(_small_gif())
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(6, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        frames, durations = decode_gif(bytes(raw))
    except ValueError:
        return
    assert frames.dtype == np.uint8 and frames.ndim == 4 and len(durations) == len(frames)


def test_absurd_sizes_are_refused() -> None:
    header = b"GIF89a" + struct.pack("<HHBBB", 65535, 65535, 0x80, 0, 0) + bytes(6)
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00"
    with pytest.raises(ValueError, match="pixels"):
        decode_gif(header + image + b"\x3b")
    small = b"GIF89a" + struct.pack("<HHBBB", 512, 512, 0x80, 0, 0) + bytes(6)
    with pytest.raises(ValueError, match="pixels"):
        decode_gif(small + image * 200 + b"\x3b")  # 200 frames of 512x512 from 3 KB
    decode_gif(small + image * 4 + b"\x3b")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"GIF89", "signature"),
        (b"\x89PNG\r\n\x1a\n", "signature"),
        (b"GIF89a" + struct.pack("<HHBBB", 4, 4, 0, 0, 0) + b"\x3b", "no image"),
        (
            b"GIF89a"
            + struct.pack("<HHBBB", 4, 4, 0, 0, 0)
            + b"\x2c"
            + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
            + b"\x02\x02\x44\x01\x00\x3b",
            "colour table",
        ),
        (
            b"GIF89a"
            + struct.pack("<HHBBB", 4, 4, 0x80, 0, 0)
            + bytes(6)
            + b"\x2c"
            + struct.pack("<HHHHB", 2, 2, 4, 4, 0)
            + b"\x02\x02\x44\x01\x00\x3b",
            "outside",
        ),
        (
            b"GIF89a"
            + struct.pack("<HHBBB", 4, 4, 0x80, 0, 0)
            + bytes(6)
            + b"\x2c"
            + struct.pack("<HHHHB", 0, 0, 1, 1, 0)
            + b"\x0c\x02\x44\x01\x00\x3b",
            "code size",
        ),
        (b"GIF89a" + struct.pack("<HHBBB", 4, 4, 0x80, 0, 0) + bytes(6) + b"\x99", "block"),
    ],
)
def test_malformed_files_name_the_problem(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_gif(data)


# -- the reader ------------------------------------------------------------------------------


def test_reader_decodes_add_video_frames(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    video = rng.integers(0, 4, (1, 5, 3, 12, 16), dtype=np.uint8) * 60  # lossless palette
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_video("rollout", video, 3, fps=10)
        writer.add_image("still", np.zeros((3, 4, 5), np.uint8), 3)
    raw = reader.images(tmp_path)
    decoded = reader.images(tmp_path, decode=True)
    gif = raw[(".", "rollout")].images[0][0]
    assert isinstance(gif, bytes) and gif[:6] == b"GIF89a"
    frames = decoded[(".", "rollout")].images[0][0]
    np.testing.assert_array_equal(frames, video[0].transpose(0, 2, 3, 1))
    _, durations = reader.decode_gif(gif)
    assert durations.tolist() == [100] * 5
    assert decoded[(".", "still")].images[0][0].shape == (4, 5, 3)


def test_memory_stays_near_the_output() -> None:
    """Peak allocation while decoding: the output, one frame's temporaries and the LZW table."""
    tracemalloc = pytest.importorskip("tracemalloc")
    frames = np.random.default_rng(7).integers(0, 256, (6, 60, 80, 3), dtype=np.uint8)
    data = encode_gif(frames, 3)
    tracemalloc.start()
    try:
        out, _ = decode_gif(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < out.nbytes + 6 * 60 * 80 + len(data) + (1 << 20)
