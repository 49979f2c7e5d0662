"""The reader's PNG and WAV decoders against our encoders, Pillow and hand-built files."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary._format.png import encode_png
from npsummary._format.pngread import decode_png
from npsummary._format.wav import encode_wav
from npsummary._format.wavread import decode_wav


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    hnp.arrays(
        np.uint8,
        st.tuples(st.integers(1, 9), st.integers(1, 9), st.sampled_from([1, 2, 3, 4])),
    )
)
def test_decodes_our_encoder(pixels: np.ndarray) -> None:
    assert np.array_equal(decode_png(encode_png(pixels)), pixels)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png(width: int, height: int, depth: int, color: int, raw: bytes, extra: bytes = b"") -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", ihdr)
        + extra
        + _chunk(b"IDAT", zlib.compress(raw))
        + _chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("filter_type", [0, 1, 2, 3, 4])
def test_every_filter_against_pillow(filter_type: int) -> None:
    image_mod = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(filter_type)
    raw = bytearray()
    for _ in range(5):
        raw.append(filter_type)
        raw += rng.integers(0, 256, 7 * 3, dtype=np.uint8).tobytes()
    data = _png(7, 5, 8, 2, bytes(raw))
    expected = np.asarray(image_mod.open(io.BytesIO(data)).convert("RGB"))
    assert np.array_equal(decode_png(data), expected)


def test_palette_sixteen_bit_and_pillow_files() -> None:
    image_mod = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 256, (6, 5, 4), dtype=np.uint8)
    buf = io.BytesIO()
    image_mod.fromarray(rgba).save(buf, format="PNG")
    assert np.array_equal(decode_png(buf.getvalue()), rgba)
    pal = image_mod.fromarray(rgba[:, :, :3]).quantize(8)
    buf = io.BytesIO()
    pal.save(buf, format="PNG")
    assert np.array_equal(decode_png(buf.getvalue()), np.asarray(pal.convert("RGB")))
    bits = image_mod.fromarray(rgba[:, :, 0] > 127).convert("1")
    buf = io.BytesIO()
    bits.save(buf, format="PNG")
    assert np.array_equal(decode_png(buf.getvalue())[:, :, 0], np.asarray(bits.convert("L")))
    deep = rng.integers(0, 65536, (3, 4), dtype=np.uint16)
    raw = b"".join(b"\x00" + row.astype(">u2").tobytes() for row in deep)
    assert np.array_equal(decode_png(_png(4, 3, 16, 0, raw))[:, :, 0], deep)
    palette = _chunk(b"PLTE", bytes(range(6))) + _chunk(b"tRNS", b"\x80")
    two = decode_png(_png(2, 1, 8, 3, b"\x00\x00\x01", palette))
    assert two.tolist() == [[[0, 1, 2, 128], [3, 4, 5, 255]]]


def test_bad_png_is_a_value_error() -> None:
    good = encode_png(np.zeros((2, 2, 3), np.uint8))
    for bad in (b"", b"GIF89a", good[:-5], good[:20] + b"\xff" + good[21:]):
        with pytest.raises(ValueError):
            decode_png(bad)
    bomb = _png(1 << 14, 1 << 14, 8, 0, b"")  # header promises far more than the data holds
    with pytest.raises(ValueError):
        decode_png(bomb)


def test_wav_round_trip_and_formats() -> None:
    rng = np.random.default_rng(2)
    samples = rng.uniform(-1, 1, (100, 2)).astype(np.float32)
    got, rate = decode_wav(encode_wav(samples, 22050))
    assert rate == 22050 and got.shape == (100, 2)
    assert np.abs(got - samples).max() <= 1 / 32768
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI", b"RIFF", 0, b"WAVE", b"fmt ", 16, 3, 1, 8000, 0, 4, 32, b"data", 8
    )
    got, _ = decode_wav(header + np.array([0.5, -0.25], "<f4").tobytes())
    assert got[:, 0].tolist() == [0.5, -0.25]
    with pytest.raises(ValueError):
        decode_wav(b"RIFF")


@pytest.mark.fuzz
@settings(max_examples=examples(80), deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.sampled_from([1, 2, 3, 4, 6, 8]),
    st.lists(st.integers(0, 4), min_size=1, max_size=5),
    st.integers(0, 2**32 - 1),
)
def test_wavefront_unfilter_equals_the_bytewise_one(
    height: int, width: int, bpp: int, kinds: list[int], seed: int
) -> None:
    from npsummary._format import pngread

    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 256, (height, width * bpp), dtype=np.uint8)
    row_kinds = np.array([kinds[y % len(kinds)] for y in range(height)], np.uint8)
    expected = pngread._unfilter_rows(rows, row_kinds, bpp)
    assert np.array_equal(pngread._unfilter_wavefront(rows, row_kinds, bpp), expected)


@pytest.mark.parametrize("kinds", [[4], [3], [0, 1, 2, 3, 4]])
def test_wavefront_over_several_strips(monkeypatch: pytest.MonkeyPatch, kinds: list[int]) -> None:
    from npsummary._format import pngread

    monkeypatch.setattr(pngread, "_STRIP_BYTES", 300)  # strips of a few rows
    rng = np.random.default_rng(len(kinds))
    rows = rng.integers(0, 256, (37, 5 * 3), dtype=np.uint8)
    row_kinds = np.array([kinds[y % len(kinds)] for y in range(37)], np.uint8)
    expected = pngread._unfilter_rows(rows, row_kinds, 3)
    assert np.array_equal(pngread._unfilter_wavefront(rows, row_kinds, 3), expected)


def test_large_paeth_image_is_not_unfiltered_byte_by_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20 item 6: an 8192x4096 Paeth PNG took minutes in a per-byte Python loop."""
    from npsummary._format import pngread

    def refuse(*args: object) -> None:
        raise AssertionError("per-byte loop used for a large Paeth image")

    monkeypatch.setattr(pngread, "_paeth_row", refuse)
    monkeypatch.setattr(pngread, "_average_row", refuse)
    rng = np.random.default_rng(0)
    residuals = rng.integers(0, 256, (256, 1 + 256 * 3), dtype=np.uint8)
    residuals[:, 0] = np.arange(256) % 2 + 3  # Average and Paeth rows
    data = _png(256, 256, 8, 2, residuals.tobytes())
    expected = np.asarray(pytest.importorskip("PIL.Image").open(io.BytesIO(data)).convert("RGB"))
    assert np.array_equal(decode_png(data), expected)


def test_decoded_size_is_bounded_by_a_limit_the_caller_sets() -> None:
    from npsummary._format.gif import encode_gif
    from npsummary._format.pngread import MAX_IMAGE_PIXELS, decode_image

    data = _png(4, 3, 8, 0, b"\x00" * 15)
    assert decode_png(data, max_pixels=12).shape == (3, 4, 1)
    with pytest.raises(ValueError, match=r"4x3 pixels exceeds the limit of 11 pixels"):
        decode_png(data, max_pixels=11)
    header = struct.pack(">IIBBBBB", 1 << 14, 1 << 13, 8, 2, 0, 0, 0)
    huge = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IEND", b"")
    with pytest.raises(ValueError, match="exceeds the limit of 67,108,864 pixels"):
        decode_png(huge)
    assert MAX_IMAGE_PIXELS == 1 << 26
    gif = encode_gif(np.zeros((3, 4, 5, 3), np.uint8), 5)
    assert np.asarray(decode_image(gif, max_pixels=60)).shape == (3, 4, 5, 3)
    with pytest.raises(ValueError, match="3 frames of 5x4 exceeds the limit of 59 pixels"):
        decode_image(gif, max_pixels=59)
