"""Scalar events decoded for a whole batch at once, from the bytes, in NumPy.

Almost every record of a large logdir is one scalar event, and all writers lay it out the same
way: ``Event{1 wall_time, 2 step (omitted when 0), 5 summary{1 value{1 tag, ...}}}`` where the
value is a legacy ``simple_value`` (tensorboardX, torch, TF1), a rank-0 DT_FLOAT tensor with
metadata after it (TF2, npsummary), or torch's ``add_scalar(new_style=True)`` tensor (no shape;
``float_val``, or ``double_val`` with ``double_precision=True``)::

    09 <wall:8> [10 <step varint>] 2a <len> 0a <len> 0a <taglen> <tag> 15 <float:4>
    09 <wall:8> [10 <step varint>] 2a <len> 0a <len> 0a <taglen> <tag>
        42 0a 08 01 12 00 (22|2a) 04 <float:4> <metadata...>
    ... 0a <taglen> <tag> 42 08 08 01 2a 04 <float:4> <metadata...>
    ... 0a <taglen> <tag> 42 0c 08 02 32 08 <double:8> <metadata...>

Records of this shape are matched with array operations; their value bytes, with the 4 float
bytes zeroed, are grouped (a hash, then an exact comparison). One record per group is parsed
with protobuf and checked to be a float scalar whose float lives exactly at the matched offset
(a sentinel float written there must come back), so every record of the group decodes exactly
as protobuf would decode it. Records that do not match, or whose group fails the check, are
left to the general path, which parses them with protobuf one by one.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .. import proto

__all__ = ["FastScalars", "match_scalars"]

IntArray = npt.NDArray[np.int64]
_MAX_VALUE_BYTES = 256
_PAD = 512  # > 9 + 3 * 11 + 2 + 255 + 8 bytes read past a start, and > _MAX_VALUE_BYTES
_SENTINEL = 1234.5
_SENTINEL_BYTES = struct.pack("<f", _SENTINEL)
_SENTINEL_DOUBLE_BYTES = struct.pack("<d", _SENTINEL)


def _word(head: bytes) -> np.uint64:
    """Up to 8 bytes as the little-endian uint64 they read as from a record."""
    word: np.uint64 = np.uint64(int.from_bytes(head, "little"))
    return word


# The 8 bytes after the tag, compared as one uint64 per record. TF2: tensor field, length 10,
# DT_FLOAT, empty shape, then tensor_content (22) or float_val (2a), length 4: the two differ
# only in bit 3 of byte 6, which _TF2_EITHER sets before comparing.
_TF2_WORD = _word(bytes([0x42, 0x0A, 0x08, 0x01, 0x12, 0x00, 0x2A, 0x04]))
_TF2_EITHER = np.uint64(0x08 << 48)
# torch's new_style tensors: no tensor_shape, the value in packed float_val / double_val; their
# first 6 bytes decide.
_LOW6 = np.uint64((1 << 48) - 1)
_TORCH_FLOAT_WORD = _word(bytes([0x42, 0x08, 0x08, 0x01, 0x2A, 0x04]))
_TORCH_DOUBLE_WORD = _word(bytes([0x42, 0x0C, 0x08, 0x02, 0x32, 0x08]))


@dataclass
class FastScalars:
    """Scalars decoded from a batch: record ``index[i]`` holds ``values[i]`` of tag
    ``tags[group[i]]`` (with ``metadata[group[i]]``, serialized, or None for legacy values);
    float32 values are widened to float64 exactly, DT_DOUBLE ones are kept as they are."""

    index: IntArray
    group: IntArray
    steps: IntArray
    wall_times: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    tags: list[str]
    metadata: list[bytes | None]


def _varint(u8: npt.NDArray[np.uint8], pos: IntArray) -> tuple[IntArray, IntArray]:
    """Values and byte lengths of the varints at ``pos`` (length 11 marks an unterminated one).
    ``u8`` must extend at least 10 bytes past every position."""
    first = u8[pos]
    value = (first & 0x7F).astype(np.uint64)
    length = np.ones(pos.shape, np.int64)
    active = np.flatnonzero(first >= 0x80)
    for k in range(1, 10):
        if not active.size:
            break
        b = u8[pos[active] + k]
        value[active] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        length[active] += 1
        active = active[b >= 0x80]
    length[active] = 11
    return value.view(np.int64), length


def _shape(u8: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> dict[str, IntArray]:
    """Match the two layouts; returns positions for the records that match (``ok``).

    Every position read is at most ``_PAD`` bytes past a record's start (a tag length is one
    byte, varints at most 10), so ``u8`` is the buffer followed by ``_PAD`` zero bytes and no
    index needs clipping; records whose fields run past their end simply fail to match."""
    ok = (ends - starts >= 16) & (u8[starts] == 0x09)
    p = starts + 9
    step = np.zeros_like(starts)
    step_len = np.zeros_like(starts)
    has_step = np.flatnonzero(u8[p] == 0x10)
    if has_step.size:
        value, length = _varint(u8, p[has_step] + 1)
        step[has_step] = value
        step_len[has_step] = length
        p[has_step] += 1 + length
    ok &= u8[p] == 0x2A
    summary_len, n1 = _varint(u8, p + 1)
    p2 = p + 1 + n1
    ok &= (p2 + summary_len == ends) & (u8[p2] == 0x0A)
    value_len, n2 = _varint(u8, p2 + 1)
    vs = p2 + 1 + n2
    ok &= (vs + value_len == ends) & (u8[vs] == 0x0A) & (value_len <= _MAX_VALUE_BYTES)
    tag_len = u8[vs + 1].astype(np.int64)
    ok &= tag_len < 0x80
    after = vs + 2 + tag_len
    legacy = (u8[after] == 0x15) & (after + 5 == ends)
    # One uint64 per record (a contiguous gather): whole-word compares instead of a reduction
    # over a short axis, which costs ten times as much.
    head = np.lib.stride_tricks.sliding_window_view(u8, 8)[after].view("<u8").reshape(-1)
    tensor = ((head | _TF2_EITHER) == _TF2_WORD) & (after + 12 <= ends)
    low6 = head & _LOW6
    torch_float = (low6 == _TORCH_FLOAT_WORD) & (after + 10 <= ends)
    double = (low6 == _TORCH_DOUBLE_WORD) & (after + 14 <= ends)
    ok &= legacy | tensor | torch_float | double
    offset = np.where(legacy, after + 1, np.where(tensor, after + 8, after + 6))
    ok &= step_len <= 10
    return {
        "ok": ok,
        "double": double,
        "step": step,
        "step_len": step_len,
        "vs": vs,
        "vl": value_len,
        "offset": offset,
    }


def _group_rows(rows: npt.NDArray[np.uint8], lengths: IntArray) -> tuple[IntArray, IntArray]:
    """Group identical rows: (index of each group's first row, group of each row)."""
    words = rows.view("<u8")
    h = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for j in range(words.shape[1]):
        h = (h ^ words[:, j]) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not (words == words[first[inverse]]).all():  # a hash collision: group exactly
        keyed = np.ascontiguousarray(np.column_stack([lengths.astype(np.uint64), words]))
        void = keyed.view(np.dtype((np.void, keyed.shape[1] * 8))).reshape(-1)
        _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    return first.astype(np.int64), inverse.astype(np.int64)


def _check_group(value: bytes, offset: int, double: bool) -> tuple[str, bytes | None] | None:
    """Tag and serialized metadata of a representative value, if the float (``double``: the
    DT_DOUBLE) at ``offset`` is really its scalar; else None."""
    if double:
        probe = value[:offset] + _SENTINEL_DOUBLE_BYTES + value[offset + 8 :]
    else:
        probe = value[:offset] + _SENTINEL_BYTES + value[offset + 4 :]
    try:
        parsed = proto.SummaryValue.FromString(probe)
    except Exception:  # any parse failure sends the group to the general path
        return None
    kind = parsed.WhichOneof("value")
    if kind == "simple_value":
        return (parsed.tag, None) if parsed.simple_value == _SENTINEL else None
    dtype = proto.DT_DOUBLE if double else proto.DT_FLOAT
    if kind != "tensor" or parsed.tensor.dtype != dtype or parsed.tensor.tensor_shape.dim:
        return None
    t = parsed.tensor
    got = list(t.double_val if double else t.float_val)
    if t.tensor_content:
        if got or len(t.tensor_content) != 4:
            return None
        got = [struct.unpack("<f", t.tensor_content)[0]]
    if got != [_SENTINEL]:
        return None
    return parsed.tag, parsed.metadata.SerializeToString() if parsed.HasField("metadata") else b""


def match_scalars(buf: bytes, starts: IntArray, ends: IntArray) -> FastScalars:
    """Decode the records of ``buf`` that are single-scalar events (see the module docstring)."""
    u8 = np.frombuffer(buf + bytes(_PAD), np.uint8)
    windows = np.lib.stride_tricks.sliding_window_view
    m = _shape(u8, starts, ends)
    idx = np.flatnonzero(m["ok"])
    if not idx.size:
        empty = np.zeros(0, np.int64)
        return FastScalars(empty, empty, empty, np.zeros(0), np.zeros(0), [], [])
    vs, vl, offset, double = m["vs"][idx], m["vl"][idx], m["offset"][idx], m["double"][idx]
    width = int(-(-int(vl.max()) // 8) * 8)
    rows = windows(u8, width)[vs]  # a copy: fancy indexing
    rows *= np.arange(width)[None, :] < vl[:, None]
    rel = offset - vs
    line = np.arange(idx.size)
    for j in range(4):
        rows[line, rel + j] = 0
    wide = line[double]
    for j in range(4, 8):
        rows[wide, rel[wide] + j] = 0
    first, group = _group_rows(rows, vl)
    tags: list[str] = []
    metas: list[bytes | None] = []
    good = np.ones(first.size, bool)
    for g, r in enumerate(first.tolist()):
        start = int(vs[r])
        checked = _check_group(buf[start : start + int(vl[r])], int(rel[r]), bool(double[r]))
        if checked is None:
            good[g] = False
            tags.append("")
            metas.append(None)
        else:
            tags.append(checked[0])
            metas.append(checked[1])
    keep = good[group]
    if not keep.all():
        idx, group, offset, double = idx[keep], group[keep], offset[keep], double[keep]
    values = windows(u8, 4)[offset].view("<f4").reshape(-1).astype(np.float64)
    if double.any():
        values[double] = windows(u8, 8)[offset[double]].view("<f8").reshape(-1)
    walls = windows(u8, 8)[starts[idx] + 1].view("<f8").reshape(-1)
    return FastScalars(idx, group, m["step"][idx], walls, values, tags, metas)
