"""Large PNGs are deflated as two raw streams made at once and joined into one zlib stream
(issue 22): the joined stream must be a valid zlib stream (zlib checks its Adler-32) whose bytes
are exactly the filtered scanlines a single stream holds, and the pixels must decode exactly."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from npsummary._format import png as _png
from npsummary._format.png import encode_png


def _idat(data: bytes) -> bytes:
    out, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        if data[pos + 4 : pos + 8] == b"IDAT":
            out.append(data[pos + 8 : pos + 8 + length])
        pos += 12 + length
    return b"".join(out)


def _filtered(pixels: np.ndarray) -> bytes:
    image = pixels if pixels.ndim == 3 else pixels[:, :, None]
    filt = _png._RowFilter(image)
    return b"".join(bytes(filt.filter(a, b)) for a, b in filt.blocks())


def _smooth(height: int, width: int, channels: int) -> np.ndarray:
    y, x = np.mgrid[0:height, 0:width]
    planes = [(x * 3 + y * (k + 1) + (x * y) // 97) % 256 for k in range(channels)]
    return np.stack(planes, axis=-1).astype(np.uint8)


@pytest.mark.parametrize(
    "shape", [(256, 256, 3), (257, 300, 4), (1000, 131, 1), (64, 2100, 3), (700, 200, 2)]
)
def test_two_streams_hold_the_single_stream_bytes(shape: tuple[int, int, int]) -> None:
    pixels = _smooth(*shape)
    assert shape[0] * (shape[1] * shape[2] + 1) >= _png._PARALLEL_BYTES  # the two-stream path
    data = encode_png(pixels)
    assert zlib.decompress(_idat(data)) == _filtered(pixels)  # also checks the Adler-32
    with Image.open(io.BytesIO(data)) as image:
        decoded = np.asarray(image)
    assert np.array_equal(decoded.reshape(pixels.shape), pixels)


def test_strided_input_and_noise() -> None:
    rng = np.random.default_rng(1)
    noise = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    chw = np.ascontiguousarray(_smooth(300, 400, 3).transpose(2, 0, 1)).transpose(1, 2, 0)
    for pixels in (noise, chw):
        data = encode_png(pixels)
        assert zlib.decompress(_idat(data)) == _filtered(np.ascontiguousarray(pixels))


def test_adler32_combine_matches_zlib() -> None:
    rng = np.random.default_rng(2)
    for n1, n2 in [(0, 0), (1, 0), (0, 5), (65521, 3), (100_000, 200_003)]:
        a, b = rng.bytes(n1), rng.bytes(n2)
        combined = _png._adler32_combine(zlib.adler32(a), zlib.adler32(b), n2)
        assert combined == zlib.adler32(a + b)
