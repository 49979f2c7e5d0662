"""Scalars, in both formats TensorBoard reads (docs/FORMAT.md §4.1).

* TF2 (``tf.summary.scalar``): a DT_FLOAT rank-0 tensor with an explicit empty shape and 4
  bytes of ``tensor_content``, with ``scalars`` plugin metadata on every value. Both TensorBoard
  loaders read it (the Rust loader drops DT_DOUBLE and integer scalars).
* Legacy (TF1, tensorboardX, torch): ``simple_value`` (float32) and no metadata; tensorboardX
  adds a ``SummaryMetadata`` holding only ``display_name`` / ``summary_description`` when they
  are given (:class:`SimpleScalarEncoder`).
* torch's ``add_scalar(new_style=True)``: a ``DT_FLOAT`` tensor in ``float_val`` with no shape
  and ``scalars`` plugin metadata; with ``double_precision=True`` a ``DT_DOUBLE`` tensor in
  ``double_val`` (:func:`torch_scalar_value`), which TensorBoard's default Rust loader skips.

A scalar is logged millions of times per run, so :class:`ScalarEncoder` caches the bytes that
depend only on the tag and its metadata: per call only the wall time, the step and 4 value
bytes are encoded.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import NamedTuple

from .._common.convert import _FLOAT32_OVERFLOW
from .._format.wire import (
    encode_length_delimited,
    encode_varint,
    legacy_scalar_value,
    scalar_value_prefix,
    wall_time_field,
)
from .metadata import DT_DOUBLE, DT_FLOAT, PLUGIN_SCALARS, metadata_bytes

__all__ = [
    "FLOAT32_OVERFLOW",
    "PACKED_STEP_LIMIT",
    "ScalarEncoder",
    "ScalarEntry",
    "SimpleScalarEncoder",
    "legacy_scalar_value",
    "pack_event",
    "pack_step_event",
    "scalar_value",
    "torch_scalar_value",
]

_FLOAT = struct.Struct("<f")


def scalar_value(
    tag: str, value: float, *, description: str | None = None, display_name: str | None = None
) -> bytes:
    """Serialized TF2 scalar value; ``value`` is rounded to float32 and must be within its
    range (see :func:`npsummary._common.convert.to_float32_range`)."""
    return ScalarEncoder().encode(tag, value, description, display_name)


_Pack = Callable[..., bytes]


class ScalarEntry(NamedTuple):
    """One tag's cached event layout (:meth:`ScalarEncoder.entry`), which :func:`pack_event`
    and :func:`pack_step_event` fill with a wall time, a step and a float."""

    #: The ``Event.summary`` and ``Summary.value`` headers and the value's fields before the float.
    before: bytes
    #: The value's fields after the float.
    after: bytes
    #: ``pack`` of the struct of a whole event with a step of 0 (omitted).
    pack_no_step: _Pack
    #: ``pack`` of the structs of a whole event with a step of 1, 2 and 3 varint bytes.
    pack_step_1: _Pack
    pack_step_2: _Pack
    pack_step_3: _Pack


#: Smallest magnitude a float32 cast rounds to infinity: a float below it packs as "f".
FLOAT32_OVERFLOW = _FLOAT32_OVERFLOW

#: Steps below this take one ``struct`` call (3 varint bytes); larger or negative steps are
#: encoded piece by piece.
PACKED_STEP_LIMIT = 1 << 21

_STRUCTS: dict[str, struct.Struct] = {}


def _event_struct(step_bytes: int, before: int, after: int) -> struct.Struct:
    """``Event{wall_time, step, <before>, float, <after>}`` as one struct (shared by every tag
    whose cached parts have these lengths)."""
    step = "B" * (step_bytes + 1) if step_bytes else ""
    fmt = f"<Bd{step}{before}sf{after}s"
    packer = _STRUCTS.get(fmt)
    if packer is None:
        if len(_STRUCTS) >= 4096:
            _STRUCTS.clear()
        packer = _STRUCTS[fmt] = struct.Struct(fmt)
    return packer


def pack_step_event(entry: ScalarEntry, value: float, step: int, wall_time: float) -> bytes:
    """:func:`pack_event` where the front ends' hot paths call it: ``0 < step <
    PACKED_STEP_LIMIT`` and a wall time other than 0.0 (``time.time()``). One ``struct`` call,
    with the step's varint bytes as its arguments (9 and 16: the wall time's and step's field
    headers)."""
    if step < 128:
        return entry.pack_step_1(9, wall_time, 16, step, entry.before, value, entry.after)
    if step < 16384:
        return entry.pack_step_2(
            9, wall_time, 16, step & 127 | 128, step >> 7, entry.before, value, entry.after
        )
    return entry.pack_step_3(
        9, wall_time, 16, step & 127 | 128, (step >> 7) & 127 | 128, step >> 14,
        entry.before, value, entry.after,
    )  # fmt: skip


def pack_event(entry: ScalarEntry, value: float, step: int, wall_time: float) -> bytes:
    """Serialized ``Event{wall_time, step, summary{value: [scalar]}}`` from a cached entry;
    ``value`` must be within float32's range (saturated by the caller)."""
    if wall_time != 0.0 and 0 <= step < PACKED_STEP_LIMIT:  # proto3 omits +0.0 (and step 0)
        if step:
            return pack_step_event(entry, value, step, wall_time)
        return entry.pack_no_step(9, wall_time, entry.before, value, entry.after)
    step_field = b"\x10" + encode_varint(step) if step else b""
    return b"".join(
        (wall_time_field(wall_time), step_field, entry.before, _FLOAT.pack(value), entry.after)
    )


class ScalarEncoder:
    """Encodes TF2 scalar values and whole scalar events with per-tag cached bytes.

    ``plain`` maps a tag logged without description or display name to its entry, for the
    front ends' hot paths (see :func:`pack_step_event`); it is filled by :meth:`entry`.
    """

    _MAX_CACHED = 65536

    def __init__(self) -> None:
        # (tag, description, display_name) -> (Summary.Value bytes before the float, after it,
        #                                       Event.summary + Summary.value field headers)
        self._parts: dict[tuple[str, str | None, str | None], tuple[bytes, bytes, bytes]] = {}
        self._entries: dict[tuple[str, str | None, str | None], ScalarEntry] = {}
        self.plain: dict[str, ScalarEntry] = {}

    def _get(
        self, tag: str, description: str | None, display_name: str | None
    ) -> tuple[bytes, bytes, bytes]:
        key = (tag, description, display_name)
        parts = self._parts.get(key)
        if parts is None:
            prefix, suffix = self._value_parts(tag, description, display_name)
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

    def entry(
        self, tag: str, description: str | None = None, display_name: str | None = None
    ) -> ScalarEntry:
        """The cached event layout of a scalar of ``tag`` (for :func:`pack_event`)."""
        key = (tag, description, display_name)
        found = self._entries.get(key)
        if found is None:
            prefix, suffix, headers = self._get(tag, description, display_name)
            before = headers + prefix
            n, m = len(before), len(suffix)
            found = ScalarEntry(
                before,
                suffix,
                _event_struct(0, n, m).pack,
                _event_struct(1, n, m).pack,
                _event_struct(2, n, m).pack,
                _event_struct(3, n, m).pack,
            )
            if len(self._entries) >= self._MAX_CACHED:
                self._entries.clear()
                self.plain.clear()
            self._entries[key] = found
            if description is None and display_name is None:
                self.plain[tag] = found
        return found

    def _value_parts(
        self, tag: str, description: str | None, display_name: str | None
    ) -> tuple[bytes, bytes]:
        """The ``Summary.Value`` bytes before and after the 4 float bytes."""
        md = metadata_bytes(PLUGIN_SCALARS, description=description, display_name=display_name)
        return scalar_value_prefix(tag), encode_length_delimited(9, md)

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
        return pack_event(self.entry(tag, description, display_name), value, step, wall_time)


def _titles_metadata(display_name: str | None, description: str | None) -> bytes:
    """The metadata field tensorboardX writes with titles: no plugin data, just the strings."""
    out = b""
    if display_name:
        out += encode_length_delimited(2, display_name.encode())
    if description:
        out += encode_length_delimited(3, description.encode())
    return encode_length_delimited(9, out) if out else b""


class SimpleScalarEncoder(ScalarEncoder):
    """Encodes legacy ``simple_value`` scalars (tensorboardX's and torch's ``add_scalar``) with
    per-tag cached bytes, as :class:`ScalarEncoder` does for the TF2 form."""

    def _value_parts(
        self, tag: str, description: str | None, display_name: str | None
    ) -> tuple[bytes, bytes]:
        prefix = (encode_length_delimited(1, tag.encode()) if tag else b"") + b"\x15"
        return prefix, _titles_metadata(display_name, description)


def torch_scalar_value(tag: str, value: float, *, double_precision: bool) -> bytes:
    """Serialized scalar as torch's ``add_scalar(new_style=True[, double_precision=True])``
    writes it; ``value`` is stored as given (float32 unless ``double_precision``)."""
    from .. import proto

    out = proto.SummaryValue(tag=tag)
    if double_precision:
        out.tensor.dtype = DT_DOUBLE
        out.tensor.double_val.append(float(value))
    else:
        out.tensor.dtype = DT_FLOAT
        out.tensor.float_val.append(float(value))
    out.metadata.plugin_data.plugin_name = PLUGIN_SCALARS
    return bytes(out.SerializeToString())
