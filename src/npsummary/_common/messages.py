"""Protobuf messages given by users, and the size limit of the messages we write.

Users hand us ``Summary``, ``Event`` and ``SummaryMetadata`` messages from any library (ours,
TensorBoard's, tensorboardX's, torch's) or their serialized bytes; these functions turn them
into validated bytes, or raise a ``TypeError``/``ValueError`` that names what was wrong.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_EVENT_BYTES", "check_event_size", "parse_message", "serialized_message"]


#: Protobuf cannot parse a message of 2 GiB or more (nor can TensorBoard, and our reader stops
#: at such a record, losing every later one): the largest event we write, with room to spare for
#: its wall time, step and field headers.
MAX_EVENT_BYTES = (1 << 31) - 1 - 64


def check_event_size(nbytes: int, tag: str) -> None:
    """Refuse, before any encoding, an event whose payload would be ``nbytes`` bytes when that
    is more than :data:`MAX_EVENT_BYTES`; the ``ValueError`` names the tag and the size."""
    if nbytes > MAX_EVENT_BYTES:
        raise ValueError(
            f"{tag!r}: the event would be {nbytes} bytes ({nbytes / 2**30:.2f} GiB); an event "
            f"must stay under 2 GiB ({MAX_EVENT_BYTES} bytes), protobuf's limit, or no reader "
            "can parse it"
        )


def serialized_message(message: Any, what: str) -> bytes:
    """The bytes of a protobuf message (any library's: ours, TensorBoard's, tensorboardX's) or
    of already serialized bytes; anything else is a ``TypeError`` naming ``what``."""
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    serialize = getattr(message, "SerializeToString", None)
    if callable(serialize):
        try:
            return bytes(serialize())
        except Exception as exc:
            raise ValueError(f"{what}: cannot serialize {type(message).__name__}: {exc}") from exc
    raise TypeError(f"{what} must be a protobuf message or bytes, got {type(message).__name__}")


def parse_message(cls: Any, data: bytes, what: str) -> Any:
    """``cls.FromString(data)``, with protobuf's DecodeError turned into a ``ValueError``."""
    try:
        return cls.FromString(data)
    except Exception as exc:  # DecodeError; its class differs between protobuf backends
        raise ValueError(f"{what} is not a serialized {cls.DESCRIPTOR.name}: {exc}") from None
