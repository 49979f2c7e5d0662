"""16-bit PCM WAV encoding, as TensorFlow, torch and tensorboardX write it.

Input: float samples of shape ``[frames, channels]``, nominally in ``[-1, 1]``. The samples become
int16 by one of three conversions, each the library's own, exactly:

* ``"tensorflow"`` (``tf.audio.encode_wav``, ``tensorflow/core/lib/wav/wav_io.cc``): each sample
  is rounded to float32, then ``clamp(round(x * 32768), -32768, 32767)`` with ``round`` half away
  from zero (C ``roundf``), so out-of-range values saturate, +inf gives 32767, -inf -32768 and
  NaN 0.
* ``"torch"`` (``torch.utils.tensorboard.summary.audio``): ``x`` clipped to ``[-1, 1]``, times
  32767 in the samples' own precision (float32 stays float32), truncated toward zero; NaN gives
  0. Two departures, both where torch writes damaged samples: torch skips its clipping when a
  NaN is present and then wraps out-of-range samples (here they saturate), and multiplies
  float16 samples in float16, which rounds them and wraps 1.0 (here float16 is read as float32,
  as everywhere in npsummary).
* ``"soundfile"`` (tensorboardX, through ``soundfile.write``: libsndfile 1.2's PCM_16 writer):
  a 32-bit sample ``clamp(rint(x * 2**31))`` (half to even), of which the top 16 bits are kept
  (``>> 16``, rounding toward -inf); NaN gives -32768.

Output: a 44-byte canonical RIFF header (``RIFF <36 + data size> WAVE``, a 16-byte ``fmt `` chunk
with format 1 = PCM, the channel count, sample rate, byte rate ``rate * channels * 2``, block align
``channels * 2`` and 16 bits per sample, then ``data <data size>``) followed by the interleaved
little-endian int16 samples: byte-identical to each library's output (the three write the same
header).
"""

from __future__ import annotations

import struct

import numpy as np

from .._common.convert import check_numeric

__all__ = ["HEADER_SIZE", "encode_wav", "float_to_int16"]

HEADER_SIZE = 44
_UINT32_MAX = (1 << 32) - 1
_CHUNK = 1 << 20  # samples converted per step, bounding temporaries


def float_to_int16(samples: np.ndarray, conversion: str = "tensorflow") -> np.ndarray:
    """Convert float samples to int16 by ``conversion`` (see the module docstring)."""
    if conversion == "torch":
        work = np.asarray(samples)
        if work.dtype.kind == "f" and work.dtype.itemsize <= 4:
            work = work.astype(np.float32, copy=False)  # float16 is read as float32
        elif work.dtype.kind != "f" or work.dtype.itemsize != 8:
            work = work.astype(np.float64)
        scaled: np.ndarray = np.clip(work, -1.0, 1.0) * work.dtype.type(32767)  # same precision
        np.nan_to_num(scaled, copy=False, nan=0.0)
        return scaled.astype(np.int16)  # truncates toward zero
    if conversion == "soundfile":
        # libsndfile makes a 32-bit sample and keeps its top half: exact in float64, since the
        # factor is a power of two; rint rounds half to even, as lrint does.
        scaled = np.rint(np.asarray(samples, dtype=np.float64) * 2147483648.0)
        np.nan_to_num(scaled, copy=False, nan=-2147483648.0)
        np.clip(scaled, -2147483648.0, 2147483647.0, out=scaled)
        return (scaled.astype(np.int64) >> 16).astype(np.int16)
    if conversion != "tensorflow":
        raise ValueError(f"unknown WAV conversion {conversion!r}")
    scaled = np.asarray(samples, dtype=np.float32).astype(np.float64) * 32768.0
    # Exact in float64: a float32 times 2**15 plus 0.5 needs far fewer than 53 bits.
    rounded = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
    np.nan_to_num(rounded, copy=False, nan=0.0)
    np.clip(rounded, -32768.0, 32767.0, out=rounded)
    return rounded.astype(np.int16)


def encode_wav(samples: np.ndarray, sample_rate: int, conversion: str = "tensorflow") -> bytes:
    """Encode ``samples`` (``[frames, channels]`` floats) as a 16-bit PCM WAV file, converting
    them to int16 as ``conversion`` says (``"tensorflow"``, ``"torch"`` or ``"soundfile"``).

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
        chunk = float_to_int16(flat[start : start + _CHUNK], conversion)
        parts.append(chunk.astype("<i2").tobytes())
    return b"".join(parts)
