"""Audio, in both formats TensorBoard reads (docs/FORMAT.md §4.5). Clips are encoded as 16-bit
PCM WAV by :mod:`npsummary._format.wav`.

* TF2 (``tf.summary.audio``): clips ``[k, t, c]``; the first ``max_outputs`` are WAV-encoded and
  stored in a DT_STRING tensor of shape ``[n, 2]`` whose rows are ``[wav, b""]`` (the second
  column holds labels, always empty), with ``audio`` plugin metadata
  ``AudioPluginData{encoding: WAV}``.
* Legacy ``Summary.Audio`` (TF1, tensorboardX, torch): ``{sample_rate, num_channels,
  length_frames, encoded_audio_string, content_type "audio/wav"}`` per clip, no metadata. TF1
  tags them ``<tag>/audio/<i>`` (``<tag>/audio`` when ``max_outputs`` is 1); tensorboardX and
  torch write one clip under the tag itself (:func:`legacy_audio_value`), each converting the
  samples to int16 its own way (the ``conversion`` of :func:`npsummary._format.wav.encode_wav`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._common.convert import as_native_array, check_int, check_numeric, tagged
from .._format.wav import encode_wav
from .._format.wire import encode_value
from .metadata import AUDIO_CONTENT_WAV, PLUGIN_AUDIO, metadata_bytes
from .tensor import tensor_bytes, tensor_value

__all__ = ["audio_clips", "audio_value", "legacy_audio_value", "legacy_audio_values"]

_AUDIO_FIELD = 6


def audio_clips(data: Any, max_outputs: Any, tag: str) -> np.ndarray:
    """Validate ``[k, t, c]`` audio and return its first ``max_outputs`` clips."""
    array = as_native_array(data, tag)
    if array.ndim != 3 or array.shape[2] == 0:
        raise ValueError(
            f"{tag!r}: audio must have shape [k, t, c] with c >= 1, got shape {array.shape}"
        )
    check_numeric(array, "audio", tag=tag)
    return array[: check_int(max_outputs, "max_outputs", tag=tag, minimum=0)]


def audio_value(
    tag: str, clips: np.ndarray, sample_rate: int, *, description: str | None = None
) -> bytes:
    """Serialized TF2 audio value of ``clips`` (``[n, t, c]``, see :func:`audio_clips`)."""
    strings = np.empty((len(clips), 2), dtype=object)
    for i, clip in enumerate(clips):
        strings[i, 0] = tagged(tag, encode_wav, clip, sample_rate)
        strings[i, 1] = b""
    md = metadata_bytes(PLUGIN_AUDIO, AUDIO_CONTENT_WAV, description=description)
    return tensor_value(tag, tensor_bytes(strings), md)


def legacy_audio_values(
    tag: str, clips: np.ndarray, sample_rate: float, max_outputs: int
) -> list[bytes]:
    """Serialized TF1 ``Summary.Audio`` values, one per clip (see module docstring)."""
    return [
        legacy_audio_value(
            f"{tag}/audio/{i}" if max_outputs > 1 else f"{tag}/audio", clip, sample_rate, tag
        )
        for i, clip in enumerate(clips)
    ]


def legacy_audio_value(
    value_tag: str,
    clip: np.ndarray,
    sample_rate: float,
    tag: str | None = None,
    conversion: str = "tensorflow",
) -> bytes:
    """Serialized ``Summary.Value{value_tag, audio}`` of one ``[t, c]`` clip, its samples made
    int16 by ``conversion`` (``"tensorflow"``, ``"torch"`` or ``"soundfile"``); errors name
    ``tag`` (default ``value_tag``)."""
    from .. import proto

    audio = proto.SummaryAudio(
        sample_rate=sample_rate,
        num_channels=int(clip.shape[1]),
        length_frames=int(clip.shape[0]),
        content_type="audio/wav",
    )
    audio.encoded_audio_string = tagged(
        tag or value_tag, encode_wav, clip, int(sample_rate), conversion
    )
    return encode_value(value_tag, _AUDIO_FIELD, audio.SerializeToString(), None)
