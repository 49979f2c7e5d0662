"""Pure builders of audio and text ``Summary.Value`` protos, in TF2 and TF1 form.

Audio (plugin ``audio``, ``AudioPluginData{encoding: WAV}``, content ``10 0b``):

* TF2 (``tf.summary.audio``): clips ``[k, t, c]``; the first ``max_outputs`` are WAV-encoded and
  stored in a DT_STRING tensor of shape ``[n, 2]`` whose rows are ``[wav, b""]`` (the second
  column holds labels, always empty).
* TF1 (``tf.compat.v1.summary.audio``): one ``Summary.Audio{sample_rate, num_channels,
  length_frames, encoded_audio_string, content_type "audio/wav"}`` per clip, no metadata, tags
  ``<tag>/audio/<i>`` (``<tag>/audio`` when ``max_outputs`` is 1).

Text (plugin ``text``, empty content): a DT_STRING tensor of any shape holding UTF-8 bytes, in
both TF2 and TF1 (``tf.compat.v1.summary.text`` writes the same tensor with text metadata).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._convert import as_array, tagged
from ._format.wav import encode_wav
from ._summary import PLUGIN_AUDIO, PLUGIN_TEXT, metadata, tensor_value

__all__ = [
    "AUDIO_CONTENT_WAV",
    "audio_clips",
    "audio_value",
    "legacy_audio_values",
    "string_array",
    "text_value",
]

#: Serialized ``AudioPluginData{version: 0, encoding: WAV}``.
AUDIO_CONTENT_WAV = b"\x10\x0b"
_DT_STRING = 7


def string_array(data: Any, tag: str) -> np.ndarray:
    """Return ``data`` (a str, bytes, or array-like of them) as an object array of bytes."""
    if isinstance(data, (str, bytes)):
        array = np.empty((), dtype=object)
        array[()] = data
    else:
        try:
            array = data if isinstance(data, np.ndarray) else np.asarray(data, dtype=object)
        except Exception as exc:  # a broken __array__ can raise anything
            raise TypeError(
                f"{tag!r}: cannot convert {type(data).__name__} to an array of strings: {exc}"
            ) from exc
        if array.dtype.kind not in "SUO":
            raise TypeError(
                f"{tag!r}: text data must be str, bytes or an array of them, "
                f"got an array of dtype {array.dtype}"
            )
    out = np.empty(array.shape, dtype=object)
    flat_in = array.reshape(-1)
    flat_out = out.reshape(-1)
    for i, item in enumerate(flat_in):
        if isinstance(item, str):
            flat_out[i] = item.encode("utf-8")
        elif isinstance(item, (bytes, np.bytes_)):
            flat_out[i] = bytes(item)
        else:
            raise TypeError(
                f"{tag!r}: text data must contain only str or bytes, got {type(item).__name__}"
            )
    return out


def _string_tensor(strings: np.ndarray) -> Any:
    from . import proto

    tensor = proto.TensorProto(dtype=_DT_STRING)
    tensor.tensor_shape.SetInParent()
    for size in strings.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    tensor.string_val.extend(strings.reshape(-1).tolist())
    return tensor


def text_value(tag: str, strings: np.ndarray, *, description: str | None = None) -> bytes:
    """Serialized text summary of an object array of bytes (see :func:`string_array`)."""
    return tensor_value(
        tag, _string_tensor(strings), metadata(PLUGIN_TEXT, description=description)
    )


def audio_clips(data: Any, max_outputs: Any, tag: str) -> np.ndarray:
    """Validate ``[k, t, c]`` audio and return its first ``max_outputs`` clips as float32."""
    array = as_array(data, tag)
    if array.ndim != 3 or array.shape[2] == 0:
        raise ValueError(
            f"{tag!r}: audio must have shape [k, t, c] with c >= 1, got shape {array.shape}"
        )
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{tag!r}: audio must be real numbers, got dtype {array.dtype}")
    if isinstance(max_outputs, bool) or not isinstance(max_outputs, (int, np.integer)):
        raise TypeError(f"{tag!r}: max_outputs must be an int, got {max_outputs!r}")
    if max_outputs < 0:
        raise ValueError(f"{tag!r}: max_outputs must be non-negative, got {max_outputs}")
    return array[: int(max_outputs)]


def audio_value(
    tag: str, clips: np.ndarray, sample_rate: int, *, description: str | None = None
) -> bytes:
    """Serialized TF2 audio summary of ``clips`` (``[n, t, c]``, see :func:`audio_clips`)."""
    strings = np.empty((len(clips), 2), dtype=object)
    for i, clip in enumerate(clips):
        strings[i, 0] = tagged(tag, encode_wav, clip, sample_rate)
        strings[i, 1] = b""
    md = metadata(PLUGIN_AUDIO, AUDIO_CONTENT_WAV, description=description)
    return tensor_value(tag, _string_tensor(strings), md)


def legacy_audio_values(
    tag: str, clips: np.ndarray, sample_rate: Any, max_outputs: int
) -> list[bytes]:
    """Serialized TF1 ``Summary.Audio`` values, one per clip (see module docstring)."""
    from . import proto

    rate = float(sample_rate)
    out = []
    for i, clip in enumerate(clips):
        value = proto.SummaryValue(tag=f"{tag}/audio/{i}" if max_outputs > 1 else f"{tag}/audio")
        value.audio.sample_rate = rate
        value.audio.num_channels = int(clip.shape[1])
        value.audio.length_frames = int(clip.shape[0])
        value.audio.encoded_audio_string = tagged(tag, encode_wav, clip, int(sample_rate))
        value.audio.content_type = "audio/wav"
        out.append(bytes(value.SerializeToString()))
    return out
