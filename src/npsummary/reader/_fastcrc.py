"""Payload CRCs of bulk-decoded scalar events, from one CRC per layout.

CRC32C is affine in the message bits: for messages of one length ``L`` that differ only at a few
byte positions ``j``, ``crc(x) = crc(r) ^ XOR_j T[L-1-j][x_j ^ r_j]``, where ``T[k][b]`` is the
CRC register after byte ``b`` followed by ``k`` zero bytes (from a zero register). Scalar events
of one tag and one payload length (:mod:`._fastscalar` groups them) are byte for byte equal
except the wall time, the step varint and the 4 value bytes, so each record's exact CRC follows
from a representative's (one C call) and about 20 table lookups, all in NumPy. The result is the
same CRC a per-record call computes; a record whose stored CRC differs is corrupt.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._fastscalar import FastScalars
from ._framing import raw_crcs

__all__ = ["verify_scalars"]

IntArray = npt.NDArray[np.int64]
_MAX_LENGTH = 512
_SHIFTS: npt.NDArray[np.uint32] | None = None


def _shift_tables() -> npt.NDArray[np.uint32]:
    global _SHIFTS
    if _SHIFTS is None:
        t0 = np.arange(256, dtype=np.uint32)
        for _ in range(8):
            t0 = np.where(t0 & 1, (t0 >> 1) ^ np.uint32(0x82F63B78), t0 >> 1).astype(np.uint32)
        tables = np.empty((_MAX_LENGTH, 256), np.uint32)
        tables[0] = t0
        for k in range(1, _MAX_LENGTH):
            prev = tables[k - 1]
            tables[k] = t0[prev & np.uint32(0xFF)] ^ (prev >> np.uint32(8))
        _SHIFTS = tables
    return _SHIFTS


def verify_scalars(
    buf: bytes, starts: IntArray, ends: IntArray, stored: IntArray, fast: FastScalars
) -> npt.NDArray[np.bool_]:
    """Whether each record of ``fast`` matches its stored (masked) payload CRC.

    Args:
        buf: the chunk.
        starts: payload starts of the batch's records (``fast.index`` indexes them).
        ends: payload ends.
        stored: stored masked CRC of every record of the batch.
        fast: the bulk-decoded records.
    """
    s = starts[fast.index]
    length = ends[fast.index] - s
    if not s.size:
        return np.zeros(0, bool)
    if int(length.max()) > _MAX_LENGTH:  # cannot happen for matched records; be safe
        ok: npt.NDArray[np.bool_] = _mask(raw_crcs(buf, s, s + length)) == stored[fast.index]
        return ok
    key = fast.group * (_MAX_LENGTH + 1) + length
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    rep = first[inverse.reshape(-1)]
    rep_crc = raw_crcs(buf, s[first], s[first] + length[first])[inverse.reshape(-1)]
    u8 = np.frombuffer(buf, np.uint8)
    tables = _shift_tables()
    rs = s[rep]
    delta = np.zeros(s.size, np.uint32)
    # Wall time bytes 1..8, step varint bytes 10..10+k-1, value bytes at value_at..+3.
    columns: list[tuple[IntArray, npt.NDArray[np.bool_] | None]] = [
        (np.full(s.size, c, np.int64), None) for c in range(1, 9)
    ]
    columns += [(np.full(s.size, 10 + c, np.int64), fast.step_len > c) for c in range(10)]
    rel = fast.value_at - s
    columns += [(rel + c, None) for c in range(4)]
    for col, valid in columns:
        if valid is not None:
            if not valid.any():
                continue
            col = np.where(valid, col, 0)
        x = u8[s + col] ^ u8[rs + col]
        delta ^= tables[length - 1 - col, x]
    ok = _mask(rep_crc ^ delta.astype(np.int64)) == stored[fast.index]
    return ok


def _mask(raw: IntArray) -> IntArray:
    masked: IntArray = (((raw >> 15) | (raw << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    return masked
