"""One ``Summary.Value`` into the reader's model, whichever writer produced it.

Kinds follow TensorBoard: a legacy oneof decides for itself (``simple_value`` is a scalar,
``histo`` a histogram, ``image`` an image, ``audio`` audio); a tensor takes the plugin named by
the *first* metadata seen for its tag in the run (TF1's ``FileWriter`` strips metadata from
repeats), and a plugin this module does not model is kept as a raw tensor of that plugin.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from .. import proto
from .._common.convert import is_numeric
from ._histograms import legacy_to_buckets
from ._tensor import tensor_to_array

__all__ = ["KINDS", "PLUGIN_KINDS", "convert", "decode_media"]

KINDS = ("scalars", "histograms", "images", "audio", "text", "pr_curves", "hparams", "tensors")
PLUGIN_KINDS = {
    "scalars": "scalars",
    "histograms": "histograms",
    "images": "images",
    "audio": "audio",
    "text": "text",
    "pr_curves": "pr_curves",
    "hparams": "hparams",
}
_LEGACY_KINDS = {
    "simple_value": "scalars",
    "histo": "histograms",
    "image": "images",
    "audio": "audio",
}


def kind_of(oneof: str | None, plugin: str) -> str:
    """The reader's kind for a value with legacy field ``oneof`` and tag plugin ``plugin``."""
    legacy = _LEGACY_KINDS.get(oneof or "")
    if legacy is not None:
        return legacy
    return PLUGIN_KINDS.get(plugin, "tensors")


def _scalar(value: Any, oneof: str | None) -> float:
    if oneof == "simple_value":
        return float(value.simple_value)
    arr = tensor_to_array(value.tensor)
    if arr.size != 1 or not is_numeric(arr.dtype):
        raise ValueError(f"a scalar holds {arr.size} values of dtype {arr.dtype}")
    return float(arr.reshape(-1)[0])


def _histogram(value: Any, oneof: str | None) -> np.ndarray:
    if oneof == "histo":
        return legacy_to_buckets(value.histo).astype(np.float64)
    arr = tensor_to_array(value.tensor)
    if arr.size == 0:
        return np.zeros((0, 3))
    if arr.ndim != 2 or arr.shape[1] != 3 or not is_numeric(arr.dtype):
        raise ValueError(f"a histogram tensor has shape {list(arr.shape)}")
    return arr.astype(np.float64)


def _image(value: Any, oneof: str | None) -> tuple[int, int, list[bytes]]:
    if oneof == "image":
        im = value.image
        return int(im.width), int(im.height), [bytes(im.encoded_image_string)]
    arr = tensor_to_array(value.tensor)
    if arr.dtype != object or arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"an image tensor has shape {list(arr.shape)} and dtype {arr.dtype}")
    items = arr.tolist()
    return int(items[0]), int(items[1]), [bytes(x) for x in items[2:]]


def _wav_rate(wav: bytes) -> float:
    if len(wav) >= 28 and wav[:4] == b"RIFF" and wav[12:16] == b"fmt ":
        return float(struct.unpack_from("<I", wav, 24)[0])
    return math.nan


def _audio(value: Any, oneof: str | None) -> tuple[float, list[bytes], list[str]]:
    if oneof == "audio":
        au = value.audio
        return float(au.sample_rate), [bytes(au.encoded_audio_string)], [""]
    arr = tensor_to_array(value.tensor)
    if arr.dtype != object or arr.ndim not in (1, 2):
        raise ValueError(f"an audio tensor has shape {list(arr.shape)} and dtype {arr.dtype}")
    rows = arr.reshape(arr.shape[0], -1)
    clips = [bytes(x) for x in rows[:, 0].tolist()]
    labels = [bytes(x).decode("utf-8", "replace") for x in rows[:, 1].tolist()]
    if rows.shape[1] < 2:
        labels = [""] * len(clips)
    rate = _wav_rate(clips[0]) if clips else math.nan
    return rate, clips, labels


def _text(value: Any) -> np.ndarray:
    """The strings of a text tensor: a fixed-width ``str`` array, or an ``object`` array of
    ``str`` when fixed width would cost over four times the text itself (one long string among
    many short ones: 100 KB of text made an 800 MB array)."""
    arr = tensor_to_array(value.tensor)
    if arr.dtype != object:
        raise ValueError(f"a text tensor has dtype {arr.dtype}")
    flat = [bytes(x).decode("utf-8", "replace") for x in arr.reshape(-1).tolist()]
    if not flat:
        return np.zeros(arr.shape, str)
    longest = max(len(t) for t in flat)
    if longest * len(flat) > 4 * sum(len(t) for t in flat) + 4096:
        out = np.empty(len(flat), object)
        out[:] = flat
        return out.reshape(arr.shape)
    return np.array(flat, dtype=str).reshape(arr.shape)


def _pr_curve(value: Any) -> np.ndarray:
    arr = tensor_to_array(value.tensor)
    if arr.ndim != 2 or arr.shape[0] != 6 or not is_numeric(arr.dtype):
        raise ValueError(f"a PR curve tensor has shape {list(arr.shape)}")
    return arr.astype(np.float64)


def convert(kind: str, value: Any, oneof: str | None) -> Any:
    """The model of one value of ``kind`` (see :mod:`._series`).

    Raises:
        ValueError: the value does not hold what its kind needs.
    """
    if kind == "scalars":
        return _scalar(value, oneof)
    if kind == "histograms":
        return _histogram(value, oneof)
    if kind == "images":
        return _image(value, oneof)
    if kind == "audio":
        return _audio(value, oneof)
    if kind == "text":
        return _text(value)
    if kind == "pr_curves":
        return _pr_curve(value)
    if kind == "hparams":
        try:
            return proto.HParamsPluginData.FromString(value.metadata.plugin_data.content)
        except Exception:  # DecodeError, or RuntimeError on some protobuf backends
            raise ValueError("hparams plugin content does not decode") from None
    return tensor_to_array(value.tensor)


def decode_media(kind: str, item: Any, max_image_pixels: int) -> Any:
    """An image or audio model with its bytes decoded (PNG/GIF into pixels, WAV into samples).

    Raises:
        ValueError: bytes that do not decode, or an image over ``max_image_pixels`` pixels.
    """
    if kind == "images":
        from .._format.pngread import decode_image

        width, height, images = item
        return width, height, [decode_image(b, max_pixels=max_image_pixels) for b in images]
    if kind == "audio":
        from .._format.wavread import decode_wav

        rate, clips, labels = item
        return rate, [decode_wav(b)[0] for b in clips], labels
    return item
