"""16-bit PCM WAV encoding, as TensorFlow's ``tf.audio.encode_wav`` writes it.

Input: float samples of shape ``[frames, channels]``, nominally in ``[-1, 1]``. Each sample is
rounded to float32, then converted exactly as ``tensorflow/core/lib/wav/wav_io.cc`` does:
``int16 = clamp(round(x * 32768), -32768, 32767)`` where ``round`` goes half away from zero
(C ``roundf``), so out-of-range values saturate, +inf gives 32767, -inf -32768 and NaN 0.

Output: a 44-byte canonical RIFF header (``RIFF <36 + data size> WAVE``, a 16-byte ``fmt `` chunk
with format 1 = PCM, the channel count, sample rate, byte rate ``rate * channels * 2``, block align
``channels * 2`` and 16 bits per sample, then ``data <data size>``) followed by the interleaved
little-endian int16 samples. Byte-identical to TensorFlow's output.
"""

from __future__ import annotations

import struct

import numpy as np

from .._common.convert import check_numeric

__all__ = ["HEADER_SIZE", "encode_wav", "float_to_int16"]

HEADER_SIZE = 44
_UINT32_MAX = (1 << 32) - 1
_CHUNK = 1 << 20  # samples converted per step, bounding temporaries


def float_to_int16(samples: np.ndarray) -> np.ndarray:
    """Convert float samples to int16 with TensorFlow's rounding and saturation."""
    scaled = np.asarray(samples, dtype=np.float32).astype(np.float64) * 32768.0
    # Exact in float64: a float32 times 2**15 plus 0.5 needs far fewer than 53 bits.
    rounded = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
    np.nan_to_num(rounded, copy=False, nan=0.0)
    np.clip(rounded, -32768.0, 32767.0, out=rounded)
    return rounded.astype(np.int16)


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """Encode ``samples`` (``[frames, channels]`` floats) as a 16-bit PCM WAV file.

    Raises ``ValueError`` for a wrong rank, zero channels, a sample rate outside ``1..2**32-1``
    or audio too long for a WAV header, and ``TypeError`` for non-numeric samples.
    """
    array = np.asarray(samples)
    if array.ndim != 2:
        raise ValueError(f"audio must have shape [frames, channels], got shape {array.shape}")
    check_numeric(array, "audio samples")
    frames, channels = array.shape
    if channels == 0:
        raise ValueError(f"audio must have at least one channel, got shape {array.shape}")
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer)):
        raise TypeError(f"sample_rate must be an int, got {sample_rate!r}")
    rate = int(sample_rate)
    if not 0 < rate <= _UINT32_MAX:
        raise ValueError(f"sample_rate must be in 1..{_UINT32_MAX}, got {rate}")
    data_size = frames * channels * 2
    byte_rate = rate * channels * 2
    if data_size + HEADER_SIZE - 8 > _UINT32_MAX or byte_rate > _UINT32_MAX or channels > 0xFFFF:
        raise ValueError(
            f"audio of shape {array.shape} at sample_rate {rate} Hz does not fit in a WAV file "
            "(32-bit sizes)"
        )
    header = struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        data_size + HEADER_SIZE - 8,
        b"WAVE",
        b"fmt ",
        16,
        1,
        channels,
        rate,
        byte_rate,
        channels * 2,
        16,
        b"data",
        data_size,
    )
    flat = array.reshape(-1)
    parts = [header]
    for start in range(0, flat.size, _CHUNK):
        parts.append(float_to_int16(flat[start : start + _CHUNK]).astype("<i2").tobytes())
    return b"".join(parts)
