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

from . import proto
from ._wire import encode_length_delimited, scalar_value_prefix

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

_DTYPES: dict[str, int] = {
    "float16": proto.DT_HALF,
    "float32": proto.DT_FLOAT,
    "float64": proto.DT_DOUBLE,
    "int8": proto.DT_INT8,
    "int16": proto.DT_INT16,
    "int32": proto.DT_INT32,
    "int64": proto.DT_INT64,
    "uint8": proto.DT_UINT8,
    "uint16": proto.DT_UINT16,
    "uint32": proto.DT_UINT32,
    "uint64": proto.DT_UINT64,
    "bool": proto.DT_BOOL,
    "complex64": proto.DT_COMPLEX64,
    "complex128": proto.DT_COMPLEX128,
}


def metadata(
    plugin_name: str,
    content: bytes = b"",
    *,
    description: str | None = None,
    display_name: str | None = None,
) -> Any:
    """Return a ``SummaryMetadata`` for ``plugin_name``; ``data_class`` stays unset, as in TF."""
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
    """Encodes scalar values, caching the bytes that depend only on the tag and its metadata."""

    _MAX_CACHED = 65536

    def __init__(self) -> None:
        self._parts: dict[tuple[str, str | None, str | None], tuple[bytes, bytes]] = {}

    def encode(
        self,
        tag: str,
        value: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> bytes:
        key = (tag, description, display_name)
        parts = self._parts.get(key)
        if parts is None:
            md = metadata(PLUGIN_SCALARS, description=description, display_name=display_name)
            parts = (
                scalar_value_prefix(tag),
                encode_length_delimited(9, md.SerializeToString()),
            )
            if len(self._parts) >= self._MAX_CACHED:
                self._parts.clear()
            self._parts[key] = parts
        return parts[0] + _FLOAT.pack(value) + parts[1]


def tensor_proto(array: np.ndarray) -> Any:
    """Return a ``TensorProto`` holding ``array`` as TensorFlow serializes it."""
    tensor = proto.TensorProto()
    tensor.tensor_shape.SetInParent()
    for size in array.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    kind = array.dtype.kind
    if kind in "SUO":
        tensor.dtype = proto.DT_STRING
        flat = array.reshape(-1)
        tensor.string_val.extend(
            [item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in flat]
        )
        return tensor
    dtype = _DTYPES.get(array.dtype.name)
    if dtype is None:
        raise TypeError(f"cannot store an array of dtype {array.dtype} in a tensor summary")
    tensor.dtype = dtype
    little_endian = array.dtype.newbyteorder("<")
    tensor.tensor_content = np.ascontiguousarray(array, dtype=little_endian).tobytes()
    return tensor


def tensor_value(tag: str, tensor: Any, md: Any) -> bytes:
    """Serialized ``Summary.Value{tag, tensor, metadata}``."""
    value = proto.SummaryValue(tag=tag)
    value.tensor.CopyFrom(tensor)
    value.metadata.CopyFrom(md)
    return bytes(value.SerializeToString())
