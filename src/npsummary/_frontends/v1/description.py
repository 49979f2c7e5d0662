"""``tf.compat.v1.summary.get_summary_description``: the description a ``TensorSummary`` op's
``NodeDef`` carries, without TensorFlow.

TF1's ``tensor_summary`` op (``TensorSummary``) stored its ``summary_description`` as the JSON
form of a ``SummaryDescription`` message (one field, ``type_hint``) in the NodeDef's string
attribute ``description``. TF1 parses that JSON back; so does this module, from a ``NodeDef``
message of any package (TensorFlow's, TensorBoard's ``compat.proto``) or its serialized bytes,
which are read with a minimal wire-format reader (npsummary ships no ``NodeDef`` class).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["SummaryDescription", "get_summary_description"]

_WHAT = "get_summary_description"


class SummaryDescription(NamedTuple):
    """TF's ``SummaryDescription`` message: a hint of the summarized tensor's type."""

    type_hint: str = ""


def get_summary_description(node_def: Any) -> SummaryDescription:
    """Return the :class:`SummaryDescription` of a ``TensorSummary`` op's ``NodeDef``.

    Args:
      node_def: a ``NodeDef`` message (anything with ``op`` and an ``attr`` map whose
        ``"description"`` value has a ``s`` field) or its serialized bytes.

    Returns:
      The description parsed from the ``description`` attribute, a named tuple with the
      message's one field, ``type_hint`` (TF1 returns the protobuf message).

    Raises:
      TypeError: ``node_def`` is neither a ``NodeDef``-like object nor bytes.
      ValueError: the op is not ``TensorSummary`` (TF1's message), the bytes are not a
        ``NodeDef``, or the description is missing or not the JSON of a ``SummaryDescription``
        (TF1: ``json_format.ParseError``).
    """
    if isinstance(node_def, (bytes, bytearray, memoryview)):
        op, description = _parse_node_def(bytes(node_def))
    elif hasattr(node_def, "op") and hasattr(node_def, "attr"):
        op = node_def.op
        attr = node_def.attr
        description = attr["description"].s if "description" in attr else b""
    else:
        raise TypeError(
            f"{_WHAT}: expected a NodeDef message or its bytes, got {type(node_def).__name__}"
        )
    if op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {op}")
    return _parse_description(description)


def _parse_description(raw: bytes | str) -> SummaryDescription:
    import json  # ~1 ms to import, for a rarely used function

    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        fields = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(
            f"{_WHAT}: the description attribute is missing or not JSON ({raw!r}): {exc}"
        ) from exc
    if not isinstance(fields, dict):
        raise ValueError(f"{_WHAT}: the description attribute is not a JSON object: {text!r}")
    hint = ""
    for key, value in fields.items():
        # json_format accepts a field's JSON name and its proto name, and refuses any other.
        if key not in ("typeHint", "type_hint"):
            raise ValueError(f"{_WHAT}: SummaryDescription has no field {key!r}")
        if not isinstance(value, str):
            raise ValueError(f"{_WHAT}: type_hint must be a string, got {value!r}")
        hint = value
    return SummaryDescription(type_hint=hint)


# -- serialized NodeDef: op = 2 (string), attr = 5 (map<string, AttrValue>); AttrValue.s = 2 --


def _parse_node_def(data: bytes) -> tuple[str, bytes]:
    op, description = "", b""
    try:
        for field, payload in _fields(data):
            if field == 2 and isinstance(payload, bytes):
                op = payload.decode("utf-8")
            elif field == 5 and isinstance(payload, bytes):
                key, value = _map_entry(payload)
                if key == "description":
                    description = b"".join(
                        p for f, p in _fields(value) if f == 2 and isinstance(p, bytes)
                    )
    except (IndexError, UnicodeDecodeError) as exc:
        raise ValueError(f"{_WHAT}: the bytes are not a serialized NodeDef") from exc
    return op, description


def _map_entry(data: bytes) -> tuple[str, bytes]:
    key, value = "", b""
    for field, payload in _fields(data):
        if field == 1 and isinstance(payload, bytes):
            key = payload.decode("utf-8")
        elif field == 2 and isinstance(payload, bytes):
            value = payload
    return key, value


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    """(field number, payload) of each field; raises IndexError on truncated or bad data."""
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((field, value))
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise IndexError("truncated")
            out.append((field, data[i : i + size]))
            i += size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            if i > len(data):
                raise IndexError("truncated")
        else:
            raise IndexError(f"wire type {wire}")
        if field == 0:
            raise IndexError("field 0")
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise IndexError("varint too long")
