"""Protobuf messages given by users, and the size limit of the messages we write.

Users hand us ``Summary``, ``Event`` and ``SummaryMetadata`` messages from any library (ours,
TensorBoard's, tensorboardX's, torch's) or their serialized bytes; these functions turn them
into validated bytes, or raise a ``TypeError``/``ValueError`` that names what was wrong.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_EVENT_BYTES", "check_event_size", "message_bytes", "parse_message"]


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


def message_bytes(message: Any, kind: str, what: str) -> bytes:
    """The one conversion of a user's protobuf message: its serialized bytes.

    ``message`` is bytes (``bytes``, ``bytearray``, ``memoryview``: returned as ``bytes``) or a
    message of type ``kind`` (``"Summary"``, ``"Event"``, ``"GraphDef"`` ...) from any library:
    ours, TensorBoard's, tensorboardX's, torch's, TensorFlow's (they share the wire format).
    A message whose descriptor names another type, or anything without ``SerializeToString``,
    is a ``TypeError`` naming ``what``; a serialization that fails is a ``ValueError``. The
    bytes are not parsed here (see :func:`parse_message`).
    """
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    serialize = getattr(message, "SerializeToString", None)
    name = getattr(getattr(message, "DESCRIPTOR", None), "name", kind)
    if not callable(serialize) or name != kind:
        cls = type(message)
        raise TypeError(
            f"{what}: expected a {kind} protobuf message or its serialized bytes, "
            f"got {cls.__module__}.{cls.__qualname__}"
        )
    try:
        return bytes(serialize())
    except Exception as exc:
        raise ValueError(f"{what}: cannot serialize {type(message).__name__}: {exc}") from exc


def parse_message(cls: Any, data: bytes, what: str) -> Any:
    """``cls.FromString(data)``, with protobuf's DecodeError turned into a ``ValueError``."""
    try:
        return cls.FromString(data)
    except Exception as exc:  # DecodeError; its class differs between protobuf backends
        raise ValueError(f"{what} is not a serialized {cls.DESCRIPTOR.name}: {exc}") from None
