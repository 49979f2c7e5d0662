"""The PNG encoder's threads (issue 29). Large images are filtered in a worker thread while the
caller deflates: the stream must be the one a single thread writes. Images on which level 6 is
slow are deflated as two parts at once: the joined stream must be a valid zlib stream (zlib
checks its Adler-32) holding exactly the filtered scanlines. In both, the pixels must decode
exactly, and an error in either thread must reach the caller with no thread left running."""

from __future__ import annotations

import io
import struct
import threading
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


def _noise(height: int, width: int, channels: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, 256, (height, width, channels), dtype=np.uint8)


@pytest.mark.parametrize(
    "shape", [(600, 600, 3), (257, 1100, 4), (5000, 210, 1), (64, 6000, 3), (1500, 400, 2)]
)
@pytest.mark.parametrize("make", [_smooth, _noise])
def test_threaded_stream_is_the_single_thread_stream(
    shape: tuple[int, int, int], make: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    pixels = make(*shape)  # type: ignore[operator]
    assert shape[0] * (shape[1] * shape[2] + 1) >= _png._THREAD_BYTES  # the threaded path
    data = encode_png(pixels)
    assert zlib.decompress(_idat(data)) == _filtered(pixels)  # also checks the Adler-32
    with Image.open(io.BytesIO(data)) as image:
        decoded = np.asarray(image)
    assert np.array_equal(decoded.reshape(pixels.shape), pixels)
    monkeypatch.setattr(_png, "_THREAD_BYTES", 2**62)
    assert encode_png(pixels) == data


def test_strided_input() -> None:
    chw = np.ascontiguousarray(_smooth(700, 600, 3).transpose(2, 0, 1)).transpose(1, 2, 0)
    data = encode_png(chw)
    assert zlib.decompress(_idat(data)) == _filtered(np.ascontiguousarray(chw))


@pytest.mark.parametrize("failing_call", [2, 5, 9])
def test_worker_error_reaches_the_caller(
    failing_call: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    real = _png._RowFilter.filter

    def filter_or_fail(self: _png._RowFilter, start: int, stop: int) -> np.ndarray:
        calls.append(start)
        if len(calls) == failing_call:  # in the worker thread: the first block is the caller's
            raise MemoryError("no room")
        return real(self, start, stop)

    monkeypatch.setattr(_png._RowFilter, "filter", filter_or_fail)
    before = threading.active_count()
    with pytest.raises(MemoryError, match="no room"):
        encode_png(_smooth(1200, 400, 3))
    assert threading.active_count() == before
    assert not any(t.name == "npsummary-png" for t in threading.enumerate())


def test_caller_error_stops_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    class FailingCompressor:
        def __init__(self, *args: object) -> None:
            self.calls = 0

        def compress(self, data: bytes) -> bytes:
            self.calls += 1
            if self.calls == 3:
                raise zlib.error("disk of the mind is full")
            return b""

        def flush(self) -> bytes:
            return b""

    monkeypatch.setattr(zlib, "compressobj", FailingCompressor)
    with pytest.raises(zlib.error, match="full"):
        encode_png(_smooth(3000, 400, 3))  # 28 blocks: the worker is blocked on a full queue
    assert not any(t.name == "npsummary-png" for t in threading.enumerate())


def _heavy(height: int, width: int, channels: int) -> np.ndarray:
    """A picture level 6 is slow on: smooth waves (the split path)."""
    y, x = np.mgrid[0:height, 0:width] / max(height, width)
    planes = [np.sin(2 * np.pi * (k + 2) * (x + y * y)) for k in range(channels)]
    return np.rint(127.5 + 127.5 * np.stack(planes, -1)).astype(np.uint8)


@pytest.mark.parametrize("shape", [(400, 400, 3), (257, 300, 4), (1300, 101, 1), (60, 2500, 3)])
def test_two_parts_hold_the_filtered_scanlines(shape: tuple[int, int, int]) -> None:
    pixels = _heavy(*shape)
    filt = _png._RowFilter(pixels)
    assert _png._slow_to_deflate(filt, filt.filter(*filt.blocks()[0]).reshape(-1).data)
    data = encode_png(pixels)
    filtered = _filtered(pixels)
    assert zlib.decompress(_idat(data)) == filtered  # also checks the Adler-32
    compressor = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_FILTERED)
    assert len(_idat(data)) <= len(compressor.compress(filtered) + compressor.flush())
    with Image.open(io.BytesIO(data)) as image:
        decoded = np.asarray(image)
    assert np.array_equal(decoded.reshape(pixels.shape), pixels)


def test_error_in_the_first_part_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    real = zlib.compressobj

    def failing_level_6(level: int, *args: object) -> object:
        if level == 6:  # the worker's part
            raise MemoryError("no room for the hash table")
        return real(level, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(zlib, "compressobj", failing_level_6)
    with pytest.raises(MemoryError, match="hash table"):
        encode_png(_heavy(400, 400, 3))
    assert not any(t.name == "npsummary-png" for t in threading.enumerate())
