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

Records are grouped by payload length and step length (a radix sort of a 16-bit key); within
a group every position is a fixed column, so each record costs a handful of array operations:
its step varint, one gather of its bytes as rows of whole words, a hash of those words with the
wall time, step and float columns masked, and reads of the wall time and float columns. Rows with
equal masked bytes form a group (16-bit hash buckets, then an exact comparison with the bucket's
first row). The first record of each group is checked in Python: the event envelope (wall time,
step, one summary holding one value, nothing after it), then the value parsed with protobuf with
two sentinel floats written at the matched offset, which must both come back as a float scalar,
so every record of the group decodes exactly as protobuf would decode it. Records that do not
match, or whose group fails the check, are left to the general path, which parses them with
protobuf one by one.
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import proto

__all__ = ["FastScalars", "match_scalars"]

IntArray = npt.NDArray[np.int64]
#: Answers of :func:`_check_group` by (value with its float zeroed, offset, double).
Checked = dict[tuple[bytes, int, bool], "tuple[str, bytes | None] | None"]
U64Array = npt.NDArray[np.uint64]
_MAX_VALUE_BYTES = 256
# Longest payload with such a value: wall time 9, step 11, two 3-byte field headers.
_MAX_LENGTH = 9 + 11 + 3 + 3 + _MAX_VALUE_BYTES
_STEP_LENGTHS = 11  # 0 (no step field) to 10 bytes: the key is length * 11 + step length
_MANY_GROUPS = 512  # past this many (length, step length) groups, tiny ones are left to protobuf
_SENTINELS = (1234.5, -0.15625)  # exact in float32; both must come back from the checked offset
_FEW_GROUPS = 64  # up to this many (tag, metadata) groups: pieces keep every group's number


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
    #: When not None, the rows are in group order: ``group_counts[g]`` rows of group ``g``,
    #: then those of ``g + 1``, each group's in record order.
    group_counts: list[int] | None = None

    def rows(self, i: int, j: int, first_record: int) -> FastScalars:
        """Rows ``i .. j - 1``, their records numbered from ``first_record`` (the same groups)."""
        return FastScalars(
            self.index[i:j] - first_record,
            self.group[i:j],
            self.steps[i:j],
            self.wall_times[i:j],
            self.values[i:j],
            self.tags,
            self.metadata,
        )

    def subset(self, lo: int, hi: int) -> FastScalars:
        """The scalars of records ``lo .. hi - 1``, numbered from ``lo``. With many groups,
        only those present, renumbered (a collector passes over a group with no rows)."""
        a, b = np.searchsorted(self.index, [lo, hi]).tolist()
        if len(self.tags) <= _FEW_GROUPS:
            return self.rows(a, b, lo)
        groups, inverse = np.unique(self.group[a:b], return_inverse=True)
        return FastScalars(
            self.index[a:b] - lo,
            inverse.reshape(-1).astype(np.int64),
            self.steps[a:b],
            self.wall_times[a:b],
            self.values[a:b],
            [self.tags[g] for g in groups.tolist()],
            [self.metadata[g] for g in groups.tolist()],
        )

    def pieces(self, bounds: list[int]) -> list[FastScalars]:
        """The scalars of each piece of the records (piece ``k``: records ``bounds[k] ..
        bounds[k + 1] - 1``, ascending; pieces may be empty), numbered from its first record.
        With few groups the rows are put in (piece, group) order by one sort for all of them
        (``group_counts`` set), so that no piece's collector sorts its own."""
        groups = len(self.tags)
        if groups > _FEW_GROUPS:
            return [self.subset(a, b) for a, b in itertools.pairwise(bounds)]
        firsts = np.array(bounds[:-1], np.int64)
        # The piece of each row: the last whose first record is at or before it (empty
        # pieces, which share their first with the next, are passed over).
        piece = np.searchsorted(firsts, self.index, side="right") - 1
        key = piece * groups + self.group
        if firsts.size * groups <= 1 << 16:
            key = key.astype(np.uint16)  # a stable sort of 16-bit keys is a radix sort
        order = np.argsort(key, kind="stable")
        index = self.index[order] - firsts[piece[order]]
        group, steps = self.group[order], self.steps[order]
        walls, values = self.wall_times[order], self.values[order]
        counts = np.bincount(key, minlength=firsts.size * groups).reshape(firsts.size, groups)
        ends = np.cumsum(counts.sum(axis=1)).tolist()
        out: list[FastScalars] = []
        start = 0
        for end, piece_counts in zip(ends, counts.tolist(), strict=True):
            out.append(
                FastScalars(
                    index[start:end],
                    group[start:end],
                    steps[start:end],
                    walls[start:end],
                    values[start:end],
                    self.tags,
                    self.metadata,
                    piece_counts,
                )
            )
            start = end
        return out


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


_HIGH = np.uint64(0x8080808080808080)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONES = np.uint64(0x0101010101010101)


def _short_varints(u8: npt.NDArray[np.uint8], pos: IntArray) -> tuple[IntArray, IntArray]:
    """As :func:`_varint`, reading each varint as one little-endian word: branch-free for the
    varints of up to 8 bytes (steps below 2**56); the longer ones go through :func:`_varint`."""
    word = np.ndarray((u8.size - 7,), "<u8", u8, strides=(1,))[pos]  # the 8 bytes at each
    stops = ~word & _HIGH  # the high bit of every byte that ends a varint
    last = stops & (~stops + np.uint64(1))  # the first of them
    mask = (last << np.uint64(1)) - np.uint64(1)  # the varint's bytes (0 - 1: all eight)
    x = word & mask & _LOW7
    # Squeeze out the continuation bits: 7-bit groups to 14, 28, then 56 bits.
    x = (x & np.uint64(0x007F007F007F007F)) | ((x & np.uint64(0x7F007F007F007F00)) >> np.uint64(1))
    x = (x & np.uint64(0x00003FFF00003FFF)) | ((x & np.uint64(0x3FFF00003FFF0000)) >> np.uint64(2))
    x = (x & np.uint64(0x000000000FFFFFFF)) | ((x & np.uint64(0x0FFFFFFF00000000)) >> np.uint64(4))
    length = (((mask & _ONES) * _ONES) >> np.uint64(56)).astype(np.int64)
    value = x.view(np.int64)
    long = np.flatnonzero(last == 0)
    if long.size:
        value[long], length[long] = _varint(u8, pos[long])
    return value, length


def _check_group(value: bytes, offset: int, double: bool) -> tuple[str, bytes | None] | None:
    """Tag and serialized metadata of a representative value, if the float (``double``: the
    DT_DOUBLE) at ``offset`` is really its scalar; else None."""
    checked = None
    for sentinel in _SENTINELS:
        checked = _check_sentinel(value, offset, double, sentinel)
        if checked is None:
            return None
    return checked


def _check_sentinel(
    value: bytes, offset: int, double: bool, sentinel: float
) -> tuple[str, bytes | None] | None:
    if double:
        probe = value[:offset] + struct.pack("<d", sentinel) + value[offset + 8 :]
    else:
        probe = value[:offset] + struct.pack("<f", sentinel) + value[offset + 4 :]
    try:
        parsed = proto.SummaryValue.FromString(probe)
    except Exception:  # any parse failure sends the group to the general path
        return None
    kind = parsed.WhichOneof("value")
    if kind == "simple_value":
        return (parsed.tag, None) if parsed.simple_value == sentinel else None
    dtype = proto.DT_DOUBLE if double else proto.DT_FLOAT
    if kind != "tensor" or parsed.tensor.dtype != dtype or parsed.tensor.tensor_shape.dim:
        return None
    t = parsed.tensor
    got = list(t.double_val if double else t.float_val)
    if t.tensor_content:
        if got or len(t.tensor_content) != 4:
            return None
        got = [struct.unpack("<f", t.tensor_content)[0]]
    if got != [sentinel]:
        return None
    return parsed.tag, parsed.metadata.SerializeToString() if parsed.HasField("metadata") else b""


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    """Value of the varint at ``at`` and the position after it (-1, -1 if it runs off)."""
    value = shift = 0
    while at < len(data) and shift < 70:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7
    return -1, -1


def _check_record(
    record: bytes, step_len: int, offset: int, double: bool, checked: Checked
) -> tuple[str, bytes | None] | None:
    """Tag and metadata (as :func:`_check_group`) of a representative record, if it is a
    single-scalar event of the module docstring's layout with its float at ``offset``."""
    n = len(record)
    p = 9
    if record[0] != 0x09:
        return None
    if step_len:
        if record[9] != 0x10:
            return None
        p = 10 + step_len
    if record[p] != 0x2A:
        return None
    summary_len, p2 = _read_varint(record, p + 1)
    if p2 < 0 or p2 + summary_len != n or record[p2] != 0x0A:
        return None
    value_len, vs = _read_varint(record, p2 + 1)
    if vs < 0 or vs + value_len != n or value_len > _MAX_VALUE_BYTES or record[vs] != 0x0A:
        return None
    if record[vs + 1] >= 0x80 or not vs < offset <= n - (8 if double else 4):
        return None
    value = bytearray(record[vs:])
    size = 8 if double else 4
    value[offset - vs : offset - vs + size] = bytes(size)
    key = (bytes(value), offset - vs, double)  # the answer does not depend on the float
    if key not in checked:
        checked[key] = _check_group(*key)
    return checked[key]


def _rows(u8: npt.NDArray[np.uint8], starts: IntArray, width: int) -> npt.NDArray[np.uint8]:
    """``width`` bytes from each start (a copy); past the buffer's end, zeros."""
    windows = np.ndarray((u8.size - width + 1, width), np.uint8, u8, strides=(1, 1))
    if int(starts[-1]) + width <= u8.size:  # starts ascend
        rows: npt.NDArray[np.uint8] = windows[starts]
        return rows
    rows = np.zeros((starts.size, width), np.uint8)
    inside = starts + width <= u8.size
    rows[inside] = windows[starts[inside]]
    for i in np.flatnonzero(~inside).tolist():
        tail = u8[int(starts[i]) :]
        rows[i, : tail.size] = tail
    return rows


def _column(rows: npt.NDArray[np.uint8], at: int, dtype: str) -> npt.NDArray[Any]:
    """The little-endian ``dtype`` at byte ``at`` of each row of ``rows`` (C-contiguous, not
    empty, the value inside each row): a strided view, read without a copy of the bytes."""
    view: npt.NDArray[Any] = np.ndarray(
        (rows.shape[0],), dtype, rows, offset=at, strides=(rows.strides[0],)
    )
    return view


def _group_words(masked: U64Array) -> tuple[IntArray, IntArray]:
    """Group identical rows of ``masked``: (a row of each group, group of each row). Most
    often every row is the first (one tag per layout): that is checked first. Otherwise rows
    are bucketed by up to 16 bits of a hash (counted, no sort), then compared with a row of
    their bucket; the rare rows that differ from it (a hash collision) are grouped exactly."""
    m, w = masked.shape
    differs = np.zeros(m, np.uint64)
    for j in range(w):
        differs |= masked[:, j] ^ masked[0, j]
    if not differs.any():
        return np.zeros(1, np.int64), np.zeros(m, np.int64)
    h = np.full(m, 0x9E3779B97F4A7C15, np.uint64)
    for j in range(w):
        h ^= masked[:, j]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    bits = min(16, max(4, m.bit_length()))  # buckets: no more than about twice the rows
    # intp: NumPy < 2 refuses uint64 in bincount (no safe cast to int64); the top bits fit.
    bucket = (h >> np.uint64(64 - bits)).astype(np.intp)
    present = np.flatnonzero(np.bincount(bucket, minlength=1 << bits))
    dense = np.zeros(1 << bits, np.int64)
    dense[present] = np.arange(present.size)
    inverse = dense[bucket]
    first = np.empty(present.size, np.int64)
    first[inverse] = np.arange(m)  # any row of each bucket will do: the comparison decides
    differs = np.zeros(m, np.uint64)
    for j in range(w):
        differs |= masked[:, j] ^ masked[first, j][inverse]
    wrong = np.flatnonzero(differs)
    if wrong.size:
        rows = np.ascontiguousarray(masked[wrong]).view(np.dtype((np.void, 8 * w))).reshape(-1)
        _, firsts, again = np.unique(rows, return_index=True, return_inverse=True)
        inverse[wrong] = first.size + again.reshape(-1)
        first = np.concatenate([first, wrong[firsts]])
    return first, inverse


class _Matcher:
    """Outputs of one batch, filled one (length, step length, layout) group at a time."""

    def __init__(self, buf: bytes, starts: IntArray, checked: Checked) -> None:
        self.buf = buf
        self.checked = checked
        self.u8 = np.frombuffer(buf, np.uint8)
        self.starts = starts
        n = starts.size
        self.group = np.full(n, -1, np.int64)
        self.walls = np.empty(n)
        self.values = np.empty(n)
        self.steps = np.zeros(n, np.int64)
        self.ids: dict[tuple[str, bytes | None], int] = {}

    def run(self, ends: IntArray) -> None:
        starts, u8 = self.starts, self.u8
        lengths = ends - starts
        ok = (lengths >= 16) & (lengths <= _MAX_LENGTH)
        step_len = np.zeros(starts.size, np.int64)
        # A payload of 16 bytes or more is followed by 4 CRC bytes: a step varint (10 bytes at
        # most, from byte 10) never reads past the buffer.
        has_step = np.flatnonzero(ok & (u8[np.where(ok, starts + 9, 0)] == 0x10))
        if has_step.size:
            value, length = _short_varints(u8, starts[has_step] + 10)
            self.steps[has_step] = value
            step_len[has_step] = length
        ok &= step_len <= 10
        eligible = np.flatnonzero(ok)
        if not eligible.size:
            return
        key = (lengths[eligible] * _STEP_LENGTHS + step_len[eligible]).astype(np.uint16)
        order = np.argsort(key, kind="stable")  # a radix sort; keeps file order within a key
        counts = np.bincount(key)
        bounds = np.concatenate(([0], np.cumsum(counts)))
        keys = np.flatnonzero(counts)
        small = 8 if keys.size > _MANY_GROUPS else 1
        for k in keys.tolist():
            if counts[k] >= small:
                which = eligible[order[bounds[k] : bounds[k + 1]]]
                self._length_group(which, k // _STEP_LENGTHS, k % _STEP_LENGTHS)

    def _length_group(self, which: IntArray, length: int, step_len: int) -> None:
        """Records ``which`` of one payload length and step length: every field of a scalar
        event is at a fixed column, except the tag's length, which picks the layout."""
        p = 10 + step_len if step_len else 9  # the summary field
        n1 = 1 if length - p - 2 < 0x80 else 2
        p2 = p + 1 + n1  # the value field
        n2 = 1 if length - p2 - 2 < 0x80 else 2
        vs = p2 + 1 + n2  # the value's bytes
        if vs + 2 > length:
            return
        width = -(-length // 8) * 8
        rows = _rows(self.u8, self.starts[which], width)
        tag_lens = rows[:, vs + 1]
        for tag_len in np.flatnonzero(np.bincount(tag_lens, minlength=0x80)[:0x80]).tolist():
            if tag_lens.size and (tag_lens[0] == tag_len) and (tag_lens == tag_len).all():
                sub, sub_which = rows, which
            else:
                pick = tag_lens == tag_len
                sub, sub_which = rows[pick], which[pick]
            self._layouts(sub, sub_which, length, step_len, vs + 2 + tag_len)

    def _layouts(
        self, rows: npt.NDArray[np.uint8], which: IntArray, length: int, step_len: int, after: int
    ) -> None:
        """Split by the bytes after the tag: which float, at which offset."""
        if after + 5 == length:  # legacy simple_value: 15 <float>
            self._decode(rows, which, rows[:, after] == 0x15, length, step_len, after + 1, False)
            return
        if after + 10 > length:
            return
        head = _column(rows, after, "<u8").copy()  # a copy: _decode may mask rows in place
        if after + 12 <= length:
            tensor = (head | _TF2_EITHER) == _TF2_WORD
            self._decode(rows, which, tensor, length, step_len, after + 8, False)
        low6 = head & _LOW6
        self._decode(rows, which, low6 == _TORCH_FLOAT_WORD, length, step_len, after + 6, False)
        if after + 14 <= length:
            double = low6 == _TORCH_DOUBLE_WORD
            self._decode(rows, which, double, length, step_len, after + 6, True)

    def _decode(
        self,
        rows: npt.NDArray[np.uint8],
        which: IntArray,
        pick: npt.NDArray[np.bool_],
        length: int,
        step_len: int,
        offset: int,
        double: bool,
    ) -> None:
        """Group the records ``which[pick]`` by their bytes outside the wall time, step and
        float; check one record of each group; decode the groups that pass."""
        if not pick.all():
            if not pick.any():
                return
            rows, which = rows[pick], which[pick]
        size = 8 if double else 4
        self.walls[which] = _column(rows, 1, "<f8")
        self.values[which] = _column(rows, offset, "<f8" if double else "<f4")
        keep = np.zeros(rows.shape[1], np.uint8)
        keep[:length] = 0xFF
        keep[1:9] = 0  # wall time
        keep[10 : 10 + step_len] = 0  # step varint (empty without a step field)
        keep[offset : offset + size] = 0
        # In place: the caller's rows when every one is picked (then no other layout of the
        # caller can pick any), else this call's copy.
        masked = rows.view("<u8")
        masked &= keep.view("<u8")
        first, inverse = _group_words(masked)
        ids = np.empty(first.size, np.int64)
        for g, r in enumerate(which[first].tolist()):
            start = int(self.starts[r])
            record = self.buf[start : start + length]
            answer = _check_record(record, step_len, offset, double, self.checked)
            ids[g] = -1 if answer is None else self.ids.setdefault(answer, len(self.ids))
        self.group[which] = ids[inverse]

    def result(self) -> FastScalars:
        index = np.flatnonzero(self.group >= 0)
        tags = [tag for tag, _ in self.ids]
        metadata = [meta for _, meta in self.ids]
        return FastScalars(
            index,
            self.group[index],
            self.steps[index],
            self.walls[index],
            self.values[index],
            tags,
            metadata,
        )


def match_scalars(
    buf: bytes, starts: IntArray, ends: IntArray, checked: Checked | None = None
) -> FastScalars:
    """Decode the records of ``buf`` that are single-scalar events (see the module docstring);
    ``starts`` ascend. ``checked`` keeps the groups' checks from batch to batch of one read (a
    tag meets the same check in every chunk); it holds a few hundred bytes per tag."""
    matcher = _Matcher(buf, starts, {} if checked is None else checked)
    matcher.run(ends)
    return matcher.result()
