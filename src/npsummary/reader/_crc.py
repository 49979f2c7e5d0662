"""CRC32C of many TFRecord fields at once, exactly, in NumPy.

The reader checks two CRCs per record: the length CRC (of 8 bytes) and the payload CRC. One C
call per payload costs about 250 ns here, almost all of it Python's per-call and per-slice
overhead, which made payload CRCs the largest single cost of a scalar load. CRC32C is affine
over GF(2): for payloads of one length ``L``,

    crc(m) = crc(r) ^ XOR over positions p where m[p] != r[p] of (T[L-1-p][m[p]] ^ T[L-1-p][r[p]])

where ``r`` is any reference payload of that length and ``T[d][b]`` is the CRC register after a
byte ``b`` followed by ``d`` zero bytes. Records of one writer differ from each other in a few
columns only (wall time, step, value, a tag's digits), so the payloads of one length are compared
with their first one, and each record's CRC is the reference's (one C call) corrected by a table
lookup per differing column. Every payload still gets its own exact CRC; groups too small, too
long or too varied to gain are computed with one C call each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from .._format.record import MAX_RECORD_LENGTH

__all__ = ["length_crc_ok", "masked", "payload_crcs"]

IntArray = npt.NDArray[np.int64]
U32Array = npt.NDArray[np.uint32]

_POLY = np.uint32(0x82F63B78)
_MASK_DELTA = 0xA282EAD8
_MIN_GROUP = 32  # fewer payloads of one length: one C call each
_MAX_LENGTH = 512  # longer payloads: one C call each (the call overhead matters less there)
_MAX_COLUMNS = 64  # more differing columns than this: one C call each is cheaper
_SAMPLE = 64  # rows looked at first to decide whether a group can gain


def _byte_table() -> U32Array:
    """``t[b]``: the CRC register (reflected, no initial value) after the single byte ``b``."""
    t = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        t = np.where(t & 1, (t >> 1) ^ _POLY, t >> 1).astype(np.uint32)
    return t


_T0 = _byte_table()
_SHIFTS: U32Array = _T0[None, :]


def _shift_tables(depth: int) -> U32Array:
    """``T[d][b]`` for ``d < depth``: byte ``b`` followed by ``d`` zero bytes (grown on demand;
    the module keeps the largest, ``_MAX_LENGTH`` rows at most, 512 KiB)."""
    global _SHIFTS
    tables = _SHIFTS
    if tables.shape[0] >= depth:
        return tables
    rows = [tables[i] for i in range(tables.shape[0])]
    row = rows[-1]
    while len(rows) < depth:
        row = (row >> np.uint32(8)) ^ _T0[row & np.uint32(0xFF)]
        rows.append(row)
    tables = np.stack(rows)
    _SHIFTS = tables  # one assignment: another thread sees the old or the new table, both valid
    return tables


def _length_tables() -> tuple[U32Array, U32Array]:
    """CRC32C of the 8-byte little-endian length ``l`` (``l < 2**32``) is
    ``lo[l & 0xFFFF] ^ hi[l >> 16]``: CRC is affine, so its constant part rides in ``hi``."""
    t = _shift_tables(8)
    x = np.arange(1 << 16, dtype=np.uint32)
    lo0, lo1 = x & np.uint32(0xFF), x >> np.uint32(8)
    # Byte k of the 8 is followed by 7 - k bytes.
    lo = t[7][lo0] ^ t[6][lo1]
    hi = t[5][lo0] ^ t[4][lo1]
    # The initial value 0xFFFFFFFF acts like four 0xFF bytes xored into the first four, and
    # the final xor flips every bit: both are the constant crc(0) - linear(0).
    const = np.uint32(0xFFFFFFFF)
    for k in range(4):
        const ^= t[7 - k][0xFF]
    hi ^= const
    return lo, hi


_LENGTH_TABLES: tuple[U32Array, U32Array] | None = None


def masked(raw: Any) -> Any:
    """TFRecord's mask of CRC32C values (arrays of int64 or uint32, or an int)."""
    if isinstance(raw, np.ndarray) and raw.dtype == np.uint32:
        return ((raw >> np.uint32(15)) | (raw << np.uint32(17))) + np.uint32(_MASK_DELTA)
    return (((raw >> 15) | (raw << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def length_crc_ok(lengths: U32Array, crcs: U32Array) -> npt.NDArray[np.bool_]:
    """Whether each stored (masked) length CRC matches its length (each < 2**32), and the
    length is one the reader accepts."""
    global _LENGTH_TABLES
    if _LENGTH_TABLES is None:
        _LENGTH_TABLES = _length_tables()
    lo, hi = _LENGTH_TABLES
    raw = lo[lengths & np.uint32(0xFFFF)] ^ hi[lengths >> np.uint32(16)]
    ok: npt.NDArray[np.bool_] = masked(raw) == crcs
    if MAX_RECORD_LENGTH < 0xFFFFFFFF:
        ok &= lengths <= np.uint32(MAX_RECORD_LENGTH)
    return ok


def _crc_function() -> Callable[[Any], int]:
    # The same implementation the writer uses (crc32c, else google_crc32c, else pure Python).
    from .._format import record

    return record._crc32c_impl or record._load_crc32c()


def _one_by_one(buf: bytes, starts: IntArray, ends: IntArray) -> IntArray:
    """One C call per payload, iterated in C (``map``)."""
    view = memoryview(buf)
    return np.fromiter(
        map(_crc_function(), map(view.__getitem__, map(slice, starts.tolist(), ends.tolist()))),
        np.int64,
        count=starts.size,
    )


def _differing_columns(rows: npt.NDArray[np.uint8], length: int) -> IntArray:
    """Columns ``< length`` in which some row differs from the first (rows are whole words)."""
    words = rows.view("<u8")
    ref = words[0]
    acc = np.empty(words.shape[1], np.uint64)
    for j in range(words.shape[1]):  # one column at a time: a 2-D reduction is five times slower
        acc[j] = np.bitwise_or.reduce(words[:, j] ^ ref[j])
    return np.flatnonzero(acc.view(np.uint8)[:length])


def _same_length(u8: npt.NDArray[np.uint8], buf: bytes, starts: IntArray, length: int) -> IntArray:
    """CRCs of the payloads of ``length`` bytes at ``starts`` (see the module docstring). Rows
    are read ``width`` bytes wide, whole words; bytes past ``length`` are ignored."""
    width = -(-length // 8) * 8
    near_end = starts + width > u8.size
    if near_end.any():  # the last record of a buffer: too few bytes after it for a whole word
        out = np.empty(starts.size, np.int64)
        out[near_end] = _one_by_one(buf, starts[near_end], starts[near_end] + length)
        if not near_end.all():
            out[~near_end] = _same_length(u8, buf, starts[~near_end], length)
        return out
    windows = np.ndarray((u8.size - width + 1, width), np.uint8, u8, strides=(1, 1))
    if _differing_columns(windows[starts[:_SAMPLE]], length).size > _MAX_COLUMNS:
        return _one_by_one(buf, starts, starts + length)
    rows = windows[starts]  # a copy: at most the chunk's payload bytes, plus 7 per record
    columns = _differing_columns(rows, length)
    if columns.size > _MAX_COLUMNS:
        return _one_by_one(buf, starts, starts + length)
    tables = _shift_tables(length)
    first = int(starts[0])
    crc = np.uint32(_crc_function()(buf[first : first + length]))
    distance = length - 1 - columns
    crc ^= np.bitwise_xor.reduce(tables[distance, rows[0, columns]], initial=np.uint32(0))
    out = np.full(starts.size, crc, np.uint32)
    for p, d in zip(columns.tolist(), distance.tolist(), strict=True):
        out ^= tables[d].take(rows[:, p])
    return out.astype(np.int64)


def payload_crcs(buf: bytes, starts: IntArray, ends: IntArray) -> IntArray:
    """Raw CRC32C of each payload ``buf[starts[i]:ends[i]]``."""
    n = starts.size
    lengths = ends - starts
    short = lengths < _MAX_LENGTH
    if n < _MIN_GROUP or not short.any():
        return _one_by_one(buf, starts, ends)
    out = np.empty(n, np.int64)
    # Group by length: a stable sort of 16-bit keys is a radix sort, linear in n.
    key = np.where(short, lengths, _MAX_LENGTH).astype(np.uint16)
    order = np.argsort(key, kind="stable")
    counts = np.bincount(key, minlength=_MAX_LENGTH + 1)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    u8 = np.frombuffer(buf, np.uint8)
    alone: list[IntArray] = []
    for length in np.flatnonzero(counts).tolist():
        which = order[bounds[length] : bounds[length + 1]]
        if length == _MAX_LENGTH or which.size < _MIN_GROUP or length == 0:
            alone.append(which)
            continue
        out[which] = _same_length(u8, buf, starts[which], length)
    if alone:
        rest = np.concatenate(alone)
        out[rest] = _one_by_one(buf, starts[rest], ends[rest])
    return out
