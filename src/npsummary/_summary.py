"""Pure builders of ``Summary.Value`` protos, in the formats TensorFlow 2 writes.

Every builder returns the *serialized* value; :func:`summary_bytes` joins values into a serialized
``Summary``. Formats (TensorBoard plugin name, tensor dtype and shape):

* scalar — ``scalars``; DT_FLOAT rank-0 tensor with an explicit empty shape and 4 bytes of
  ``tensor_content``. The only scalar form both TensorBoard loaders read (the Rust loader drops
  DT_DOUBLE and integer scalars).
* generic tensors — numeric arrays as little-endian ``tensor_content``; strings in ``string_val``.

Metadata (plugin name, description) is written with every value, as TF2 does: both loaders key a
tag's type on its first value, and a tag whose first value lacks metadata is invisible.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import numpy as np

from ._format.wire import (
    encode_length_delimited,
    encode_metadata,
    encode_varint,
    scalar_value_prefix,
    wall_time_field,
)

__all__ = [
    "PLUGIN_AUDIO",
    "PLUGIN_HISTOGRAMS",
    "PLUGIN_IMAGES",
    "PLUGIN_SCALARS",
    "PLUGIN_TEXT",
    "ScalarEncoder",
    "metadata",
    "scalar_value",
    "summary_bytes",
    "tensor_proto",
    "tensor_value",
]

PLUGIN_SCALARS = "scalars"
PLUGIN_HISTOGRAMS = "histograms"
PLUGIN_IMAGES = "images"
PLUGIN_TEXT = "text"
PLUGIN_AUDIO = "audio"

_FLOAT = struct.Struct("<f")

# TensorFlow DataType enum values by NumPy dtype name (tensorflow/core/framework/types.proto).
_DTYPES: dict[str, int] = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "complex128": 18,
    "float16": 19,
    "uint16": 17,
    "uint32": 22,
    "uint64": 23,
}
_DT_STRING = 7


def metadata(
    plugin_name: str,
    content: bytes = b"",
    *,
    description: str | None = None,
    display_name: str | None = None,
) -> Any:
    """Return a ``SummaryMetadata`` for ``plugin_name``; ``data_class`` stays unset, as in TF."""
    from . import proto

    md = proto.SummaryMetadata()
    md.plugin_data.plugin_name = plugin_name
    if content:
        md.plugin_data.content = content
    if description:
        md.summary_description = description
    if display_name:
        md.display_name = display_name
    return md


def summary_bytes(values: Iterable[bytes]) -> bytes:
    """Join serialized ``Summary.Value`` messages into a serialized ``Summary``."""
    return b"".join([encode_length_delimited(1, value) for value in values])


def scalar_value(
    tag: str, value: float, *, description: str | None = None, display_name: str | None = None
) -> bytes:
    """Serialized TF2 scalar value (see module docstring); ``value`` is rounded to float32."""
    return ScalarEncoder().encode(tag, value, description, display_name)


class ScalarEncoder:
    """Encodes scalar values and events, caching the bytes that depend only on the tag and its
    metadata: per call only the wall time, the step and 4 value bytes are encoded."""

    _MAX_CACHED = 65536

    def __init__(self) -> None:
        # key -> (Summary.Value bytes before the float, Summary.Value bytes after it,
        #         Event.summary field header + Summary.value field header)
        self._parts: dict[tuple[str, str | None, str | None], tuple[bytes, bytes, bytes]] = {}

    def _get(
        self, tag: str, description: str | None, display_name: str | None
    ) -> tuple[bytes, bytes, bytes]:
        key = (tag, description, display_name)
        parts = self._parts.get(key)
        if parts is None:
            md = encode_metadata(PLUGIN_SCALARS, b"", display_name, description)
            prefix, suffix = scalar_value_prefix(tag), encode_length_delimited(9, md)
            value_length = len(prefix) + 4 + len(suffix)
            summary_length = 1 + len(encode_varint(value_length)) + value_length
            headers = (
                b"\x2a" + encode_varint(summary_length) + b"\x0a" + encode_varint(value_length)
            )
            parts = (prefix, suffix, headers)
            if len(self._parts) >= self._MAX_CACHED:
                self._parts.clear()
            self._parts[key] = parts
        return parts

    def encode(
        self,
        tag: str,
        value: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> bytes:
        """Serialized ``Summary.Value`` of one scalar."""
        prefix, suffix, _ = self._get(tag, description, display_name)
        return prefix + _FLOAT.pack(value) + suffix

    def event(
        self,
        tag: str,
        value: float,
        step: int,
        wall_time: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> bytes:
        """Serialized ``Event{wall_time, step, summary{value: [scalar]}}``."""
        prefix, suffix, headers = self._get(tag, description, display_name)
        step_field = b"\x10" + encode_varint(step) if step else b""
        return b"".join(
            (wall_time_field(wall_time), step_field, headers, prefix, _FLOAT.pack(value), suffix)
        )


def tensor_proto(array: np.ndarray, tag: str = "") -> Any:
    """Return a ``TensorProto`` holding ``array`` as TensorFlow serializes it."""
    from . import proto

    tensor = proto.TensorProto()
    tensor.tensor_shape.SetInParent()
    for size in array.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    kind = array.dtype.kind
    if kind in "SUO":
        tensor.dtype = _DT_STRING
        flat = array.reshape(-1)
        tensor.string_val.extend(
            [item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in flat]
        )
        return tensor
    dtype = _DTYPES.get(array.dtype.name)
    if dtype is None:
        raise TypeError(
            f"{tag!r}: cannot store an array of dtype {array.dtype} in a tensor summary"
        )
    tensor.dtype = dtype
    little_endian = array.dtype.newbyteorder("<")
    tensor.tensor_content = np.ascontiguousarray(array, dtype=little_endian).tobytes()
    return tensor


def tensor_value(tag: str, tensor: Any, md: Any) -> bytes:
    """Serialized ``Summary.Value{tag, tensor, metadata}``."""
    from . import proto

    value = proto.SummaryValue(tag=tag)
    value.tensor.CopyFrom(tensor)
    value.metadata.CopyFrom(md)
    return bytes(value.SerializeToString())


def histogram_value(tag: str, buckets: np.ndarray, *, description: str | None = None) -> bytes:
    """Serialized TF2 histogram: a DT_DOUBLE ``[k, 3]`` tensor of ``(left, right, count)`` rows."""
    tensor = tensor_proto(np.asarray(buckets, dtype=np.float64).reshape(-1, 3))
    return tensor_value(tag, tensor, metadata(PLUGIN_HISTOGRAMS, description=description))


def legacy_histogram_value(
    tag: str,
    *,
    min: float,
    max: float,
    num: float,
    sum: float,
    sum_squares: float,
    bucket_limit: Any,
    bucket: Any,
) -> bytes:
    """Serialized ``Summary.Value{tag, histo: HistogramProto}`` (TF1 and tensorboardX format).

    ``bucket_limit[i]`` is the exclusive right edge of bucket ``i``. Both TensorBoard loaders
    convert it to the histograms plugin's ``[k, 3]`` form when they read it.
    """
    from . import proto

    value = proto.SummaryValue(tag=tag)
    histo = value.histo
    histo.min = float(min)
    histo.max = float(max)
    histo.num = float(num)
    histo.sum = float(sum)
    histo.sum_squares = float(sum_squares)
    histo.bucket_limit.extend(np.asarray(bucket_limit, dtype=np.float64).tolist())
    histo.bucket.extend(np.asarray(bucket, dtype=np.float64).tolist())
    return bytes(value.SerializeToString())


def image_value(
    tag: str,
    width: int,
    height: int,
    pngs: list[bytes],
    *,
    description: str | None = None,
) -> bytes:
    """Serialized TF2 image summary: a DT_STRING ``[2 + n]`` tensor ``[width, height, png…]``."""
    from . import proto

    tensor = proto.TensorProto(dtype=_DT_STRING)
    tensor.tensor_shape.dim.add().size = 2 + len(pngs)
    tensor.string_val.extend([str(width).encode(), str(height).encode(), *pngs])
    return tensor_value(tag, tensor, metadata(PLUGIN_IMAGES, description=description))
