"""Hand-written protobuf wire encoding for the two hottest messages: the Event envelope and the
TF2 scalar value.

Everything else is built with the protobuf classes from :mod:`npsummary.proto`. These encoders emit
fields in field-number order, exactly as protobuf's own serializer does, so the bytes are identical
to ``Event(...).SerializeToString()`` (the tests check this). They exist because a scalar event is
logged millions of times per run: the tag and metadata bytes of a scalar never change, so they are
encoded once per tag and only the 4 value bytes, the step and the wall time are encoded per call.

Field numbers (see the .proto files): Event{1 wall_time double, 2 step int64, 3 file_version string,
5 summary Summary, 10 source_metadata SourceMetadata{1 writer string}}; Summary{1 value repeated
Summary.Value}; Summary.Value{1 tag string, 8 tensor TensorProto, 9 metadata SummaryMetadata};
TensorProto{1 dtype enum, 2 tensor_shape, 4 tensor_content bytes}.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

__all__ = [
    "FLOAT32_TENSOR_HEADER",
    "encode_event",
    "encode_file_version_event",
    "encode_length_delimited",
    "encode_metadata",
    "encode_summary",
    "encode_value",
    "encode_varint",
    "legacy_scalar_value",
    "scalar_value_prefix",
    "wall_time_field",
]

_DOUBLE = struct.Struct("<d")
# proto3 omits a double field whose value is +0.0 (bit pattern all zeros); -0.0 is written.
_DOUBLE_ZERO = bytes(8)


def wall_time_field(wall_time: float) -> bytes:
    packed = _DOUBLE.pack(wall_time)
    return b"" if packed == _DOUBLE_ZERO else b"\x09" + packed


_ONE_BYTE_VARINTS = [bytes((i,)) for i in range(128)]


def encode_varint(value: int) -> bytes:
    """Encode an int64 (negative values as 10-byte two's complement) as a base-128 varint."""
    if 0 <= value < 0x80:
        return _ONE_BYTE_VARINTS[value]
    if 0 < value < 0x4000:
        return bytes(((value & 0x7F) | 0x80, value >> 7))
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_length_delimited(field_number: int, payload: bytes) -> bytes:
    """Encode a bytes, string or sub-message field (wire type 2)."""
    return encode_varint(field_number << 3 | 2) + encode_varint(len(payload)) + payload


def encode_event(wall_time: float, step: int, summary: bytes) -> bytes:
    """Return a serialized ``Event{wall_time, step, summary}`` given a serialized ``Summary``.

    ``step`` 0 and ``wall_time`` +0.0 are omitted, as proto3 omits default scalars.
    """
    parts = [wall_time_field(wall_time)]
    if step:
        parts.append(b"\x10")
        parts.append(encode_varint(step))
    parts.append(b"\x2a")
    parts.append(encode_varint(len(summary)))
    parts.append(summary)
    return b"".join(parts)


def encode_file_version_event(wall_time: float, writer: str) -> bytes:
    """Return the serialized first event of a file: ``file_version`` plus ``source_metadata``."""
    source_metadata = encode_length_delimited(1, writer.encode()) if writer else b""
    return (
        wall_time_field(wall_time)
        + encode_length_delimited(3, b"brain.Event:2")
        + encode_length_delimited(10, source_metadata)
    )


#: TensorProto{dtype: DT_FLOAT, tensor_shape: {}, tensor_content: <4 bytes follow>} minus the
#: 4 value bytes: ``08 01`` dtype, ``12 00`` empty shape, ``22 04`` content of length 4.
FLOAT32_TENSOR_HEADER = b"\x08\x01\x12\x00\x22\x04"


def scalar_value_prefix(tag: str) -> bytes:
    """Bytes of a ``Summary.Value`` up to the float32 payload of its tensor.

    The full value is ``prefix + <4 little-endian float32 bytes> + encoded metadata field``.
    An empty tag is omitted, as proto3 omits empty strings.
    """
    tensor_length = len(FLOAT32_TENSOR_HEADER) + 4
    return (
        (encode_length_delimited(1, tag.encode()) if tag else b"")
        + b"\x42"
        + encode_varint(tensor_length)
        + FLOAT32_TENSOR_HEADER
    )


def encode_metadata(
    plugin_name: str,
    content: bytes = b"",
    display_name: str | None = None,
    description: str | None = None,
) -> bytes:
    """Serialized ``SummaryMetadata{plugin_data{plugin_name, content}, display_name,
    summary_description}``; empty fields are omitted, ``data_class`` is never set (as in TF)."""
    plugin_data = encode_length_delimited(1, plugin_name.encode())
    if content:
        plugin_data += encode_length_delimited(2, content)
    out = encode_length_delimited(1, plugin_data)
    if display_name:
        out += encode_length_delimited(2, display_name.encode())
    if description:
        out += encode_length_delimited(3, description.encode())
    return out


def encode_summary(values: Iterable[bytes]) -> bytes:
    """Join serialized ``Summary.Value`` messages into a serialized ``Summary``."""
    return b"".join([encode_length_delimited(1, value) for value in values])


def encode_value(tag: str, field_number: int, payload: bytes, metadata: bytes | None) -> bytes:
    """Serialized ``Summary.Value{tag, <field_number>: payload, metadata}``.

    ``field_number`` picks the member of the ``value`` oneof (4 image, 5 histo, 6 audio,
    8 tensor) whose serialized message is ``payload``; a oneof member is written even when
    empty. ``metadata`` ``None`` leaves the field out; ``b""`` writes it present but empty.
    """
    out = encode_length_delimited(1, tag.encode()) if tag else b""
    out += encode_length_delimited(field_number, payload)
    if metadata is not None:
        out += encode_length_delimited(9, metadata)
    return out


_FLOAT = struct.Struct("<f")


def legacy_scalar_value(tag: str, value: float) -> bytes:
    """Serialized ``Summary.Value{tag, simple_value}`` (TF1 and tensorboardX scalars).

    ``simple_value`` is a oneof member, so it is written even when it is 0.0.
    """
    head = encode_length_delimited(1, tag.encode()) if tag else b""
    return head + b"\x15" + _FLOAT.pack(value)
