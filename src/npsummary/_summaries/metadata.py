"""Plugin names, TensorFlow dtype numbers and ``SummaryMetadata`` bytes (docs/FORMAT.md §4).

TensorBoard routes a tag to a dashboard by the ``plugin_name`` in the metadata of the tag's
first value; ``content`` is plugin-specific. ``data_class`` is never set, as TensorFlow's own
writers leave it unset.
"""

from __future__ import annotations

from typing import Any

from .._common.messages import message_bytes, parse_message
from .._format.wire import encode_metadata

__all__ = [
    "AUDIO_CONTENT_WAV",
    "DTYPE_NUMBERS",
    "DT_DOUBLE",
    "DT_FLOAT",
    "DT_STRING",
    "PLUGIN_AUDIO",
    "PLUGIN_CUSTOM_SCALARS",
    "PLUGIN_HISTOGRAMS",
    "PLUGIN_HPARAMS",
    "PLUGIN_IMAGES",
    "PLUGIN_MESH",
    "PLUGIN_PR_CURVES",
    "PLUGIN_SCALARS",
    "PLUGIN_TENSOR",
    "PLUGIN_TEXT",
    "metadata_bytes",
    "metadata_message",
    "written_metadata",
]

PLUGIN_SCALARS = "scalars"
PLUGIN_HISTOGRAMS = "histograms"
PLUGIN_IMAGES = "images"
PLUGIN_TEXT = "text"
PLUGIN_AUDIO = "audio"
PLUGIN_HPARAMS = "hparams"
PLUGIN_PR_CURVES = "pr_curves"
PLUGIN_CUSTOM_SCALARS = "custom_scalars"
PLUGIN_MESH = "mesh"
PLUGIN_TENSOR = "tensor"  # torch's add_tensor

#: Serialized ``AudioPluginData{version: 0, encoding: WAV}``.
AUDIO_CONTENT_WAV = b"\x10\x0b"

DT_FLOAT = 1
DT_DOUBLE = 2
DT_STRING = 7

#: TensorFlow ``DataType`` numbers by NumPy dtype name (tensorflow/core/framework/types.proto).
DTYPE_NUMBERS: dict[str, int] = {
    "float32": DT_FLOAT,
    "float64": DT_DOUBLE,
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


def metadata_bytes(
    plugin_name: str,
    content: bytes = b"",
    *,
    description: str | None = None,
    display_name: str | None = None,
) -> bytes:
    """Serialized ``SummaryMetadata`` for ``plugin_name``; empty fields are omitted."""
    return encode_metadata(plugin_name, content, display_name, description)


def metadata_message(metadata: Any, tag: str, name: str) -> Any:
    """A user's ``SummaryMetadata`` (any library's message, or its bytes) as our message.

    Raises ``TypeError`` for anything else and ``ValueError`` for bytes that do not parse,
    naming ``tag`` and the argument ``name``.
    """
    from .. import proto

    data = message_bytes(metadata, "SummaryMetadata", f"{tag!r}: {name}")
    return parse_message(proto.SummaryMetadata, data, f"{tag!r}: {name}")


def written_metadata(metadata: Any, tag: str, name: str) -> bytes | None:
    """A user's ``SummaryMetadata`` as ``tf.summary.write`` stores it: ``None``, or a message
    that serializes to nothing, leaves the field out (``None``); bytes that do not parse give
    the field present but empty (``b""``), because TF's writer ignores whether its
    ``ParseFromString`` succeeded; anything else is the message, re-serialized.

    Raises ``TypeError`` for what is neither a ``SummaryMetadata`` message nor bytes, naming
    ``tag`` and the argument ``name``.
    """
    from .. import proto

    if metadata is None:
        return None
    data = message_bytes(metadata, "SummaryMetadata", f"{tag!r}: {name}")
    try:
        serialized = proto.SummaryMetadata.FromString(data).SerializeToString()
    except Exception:  # DecodeError; its class differs between protobuf backends
        return b""
    return bytes(serialized) if serialized else None
