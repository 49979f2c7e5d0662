"""WAV decoding with NumPy: the reader's half of :mod:`.wav`.

Reads RIFF/WAVE files with integer PCM (8, 16, 24 or 32 bits) or IEEE float (32 or 64 bits)
samples, including ``WAVE_FORMAT_EXTENSIBLE``. Returns float32 samples ``[frames, channels]``
scaled to ``[-1, 1)`` (integer PCM divided by ``2**(bits-1)``; 8-bit PCM is unsigned) and the
sample rate. A malformed file raises :class:`ValueError`.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["decode_wav"]

_PCM = 1
_FLOAT = 3
_EXTENSIBLE = 0xFFFE


def _chunks(data: bytes) -> dict[bytes, bytes]:
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file (no RIFF/WAVE header)")
    found: dict[bytes, bytes] = {}
    pos = 12
    while pos + 8 <= len(data):
        kind, size = struct.unpack_from("<4sI", data, pos)
        body = data[pos + 8 : pos + 8 + size]
        found.setdefault(kind, body)
        pos += 8 + size + (size & 1)
    return found


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Decode a WAV file into ``(samples [frames, channels] float32, sample_rate)``.

    Raises:
        ValueError: not a WAV file, or a sample format this decoder does not read.
    """
    chunks = _chunks(bytes(data))
    fmt = chunks.get(b"fmt ")
    if fmt is None or len(fmt) < 16 or b"data" not in chunks:
        raise ValueError("WAV file without fmt and data chunks")
    tag, channels, rate, _, _, bits = struct.unpack_from("<HHIIHH", fmt)
    if tag == _EXTENSIBLE and len(fmt) >= 26:
        (tag,) = struct.unpack_from("<H", fmt, 24)
    if channels == 0 or bits % 8 or bits == 0:
        raise ValueError(f"WAV file with {channels} channels of {bits} bits")
    width = bits // 8
    body = chunks[b"data"]
    frames = len(body) // (width * channels)
    body = body[: frames * width * channels]
    if tag == _FLOAT and bits in (32, 64):
        samples = np.frombuffer(body, "<f4" if bits == 32 else "<f8").astype(np.float32)
    elif tag == _PCM and bits == 8:
        samples = (np.frombuffer(body, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif tag == _PCM and bits in (16, 32):
        ints = np.frombuffer(body, "<i2" if bits == 16 else "<i4")
        samples = (ints / float(1 << (bits - 1))).astype(np.float32)
    elif tag == _PCM and bits == 24:
        raw = np.frombuffer(body, np.uint8).reshape(-1, 3).astype(np.int32)
        ints = (raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)) << 8 >> 8
        samples = (ints / float(1 << 23)).astype(np.float32)
    else:
        raise ValueError(f"unsupported WAV sample format {tag} with {bits} bits")
    return samples.reshape(frames, channels), int(rate)
