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

from .._format.wire import (
    encode_length_delimited,
    encode_varint,
    legacy_scalar_value,
    scalar_value_prefix,
    wall_time_field,
)
from .metadata import DT_DOUBLE, DT_FLOAT, PLUGIN_SCALARS, metadata_bytes

__all__ = [
    "ScalarEncoder",
    "SimpleScalarEncoder",
    "legacy_scalar_value",
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


class ScalarEncoder:
    """Encodes TF2 scalar values and whole scalar events with per-tag cached bytes."""

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
        prefix, suffix, headers = self._get(tag, description, display_name)
        step_field = b"\x10" + encode_varint(step) if step else b""
        return b"".join(
            (wall_time_field(wall_time), step_field, headers, prefix, _FLOAT.pack(value), suffix)
        )


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
