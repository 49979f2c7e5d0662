"""TFRecord framing for the reader: record boundaries of a whole chunk at once, in NumPy.

:mod:`npsummary._format.record` reads one record at a time; a Python loop per record caps a
reader at about a million records per few seconds. Here a chunk of a file (``CHUNK`` bytes, or
one record if larger) is framed with array operations:

1. Every position whose bytes 4..7 are zero is a candidate record start (a payload length fits in
   31 bits, so a real header always has them zero). Its length and length CRC are read there.
2. A candidate is a header when its length CRC checks (one CRC per distinct length).
3. If the headers chain (each record ends where the next begins), they are the records; else
   (corruption, or a header-like byte pattern inside a payload) the chain is walked record by
   record from the first, resynchronising on the next valid header after a corrupt one.
4. Payload CRCs are checked in bulk, exactly, per record (:mod:`._crc`).

A corrupt stretch (a bad length CRC up to the next valid header, or a record whose payload fails
its CRC) is skipped and counted in :class:`ReadStats`; ``strict=True`` raises
:class:`~npsummary._format.record.CorruptRecordError` instead. A file that ends inside a record
(a torn tail: a writer was killed or is still writing) is counted as torn, never as corrupt.
Memory: the chunk, plus arrays of a few bytes per candidate; nothing scales with a declared
length, because no read goes past the file's size.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from .._format.record import CorruptRecordError
from ._crc import length_crc_ok, masked, payload_crcs
from ._io import FileSystem

__all__ = [
    "CHUNK",
    "ReadStats",
    "RecordBatch",
    "payload_ok",
    "raw_crcs",
    "read_batches",
    "read_range",
    "segment_records",
    "skip_to",
    "stored_crcs",
]

CHUNK = 8 << 20
_HEADER = 12
_FRAME = 16
_LEN = struct.Struct("<Q")
_MAX_PROBLEMS = 100

IntArray = npt.NDArray[np.int64]


@dataclass
class ReadStats:
    """What a read met: files and bytes read, records, and every problem, counted.

    Attributes:
        files: event files opened.
        bytes: their total size.
        records: records whose CRCs checked.
        corrupt_records: corrupt stretches skipped (bad length CRC, bad payload CRC, or a payload
            that is not an ``Event``).
        corrupt_bytes: bytes in those stretches.
        torn_tails: files that end inside a record.
        torn_bytes: bytes in those incomplete records.
        bad_values: values skipped because they do not hold what their plugin needs.
        problems: one line per problem (the first 100), naming the file and byte offset.
    """

    files: int = 0
    bytes: int = 0
    records: int = 0
    corrupt_records: int = 0
    corrupt_bytes: int = 0
    torn_tails: int = 0
    torn_bytes: int = 0
    bad_values: int = 0
    problems: list[str] = field(default_factory=list)

    def note(self, line: str) -> None:
        if len(self.problems) < _MAX_PROBLEMS:
            self.problems.append(line)

    def corrupt(self, path: str, offset: int, size: int, reason: str, strict: bool) -> None:
        """Count one corrupt stretch, or raise it when ``strict``."""
        if strict:
            raise CorruptRecordError(f"{path}: {reason}", offset)
        self.corrupt_records += 1
        self.corrupt_bytes += size
        self.note(f"{path}: {reason} at byte {offset} ({size} bytes skipped)")


@dataclass
class RecordBatch:
    """Checked records of one chunk: payload ``i`` is ``buf[starts[i]:ends[i]]``."""

    path: str
    buf: bytes
    starts: IntArray
    ends: IntArray
    base: int = 0  # file offset of buf[0]

    def report_corrupt(self, stats: ReadStats, bad: IntArray, strict: bool) -> None:
        """Count (or raise) records ``bad`` of this batch as failing their payload CRC."""
        for i in bad.tolist():
            stats.corrupt(
                self.path,
                self.base + int(self.starts[i]) - _HEADER,
                int(self.ends[i] - self.starts[i]) + _FRAME,
                "record payload fails its CRC check",
                strict,
            )


@dataclass
class _Scan:
    records: IntArray  # header positions of complete records
    lengths: IntArray
    consumed: int  # bytes of buf fully handled (records and corrupt stretches)
    need: int  # size of the record pending at ``consumed``, or 0
    corrupt: list[tuple[int, int]]  # (position, size) of corrupt stretches


def _headers(buf: bytes) -> tuple[IntArray, IntArray]:
    """Positions and lengths of every 12-byte window ``p <= len-12`` that is a valid header:
    bytes ``p+4..p+7`` zero (a length fits in 31 bits) and a matching length CRC."""
    n = len(buf)
    keys = []
    u8 = np.frombuffer(buf, np.uint8)
    for align in range(4):
        count = (n - align) // 4
        if count < 3:
            continue
        words = np.frombuffer(buf, "<u4", count=count, offset=align)
        k = np.flatnonzero(words[1 : count - 1] == 0)
        if align and k.size * 8 > count:
            # Many candidates (zeros): gathering them from an unaligned view costs NumPy
            # several times what an aligned copy of the words costs.
            words = u8[align : align + 4 * count].copy().view("<u4")
        lengths, crcs = words[k], words[k + 2]
        # Twelve zero bytes are no header (an empty record's length CRC is not 0); runs of
        # zeros (a histogram's float64 zeros) are most of the candidates in a sweep's files.
        some = np.flatnonzero(lengths | crcs)
        k, lengths, crcs = k[some], lengths[some], crcs[some]
        ok = length_crc_ok(lengths, crcs)
        k = k[ok]
        keys.append(((align + 4 * k) << 32) | lengths[ok].astype(np.int64))
    if not keys:
        empty = np.zeros(0, np.int64)
        return empty, empty
    # Four sorted runs: a stable (merge) sort of position<<32|length orders them cheaply.
    merged = np.sort(np.concatenate(keys), kind="stable")
    return merged >> 32, merged & 0xFFFFFFFF


_WALL_TIME_KEY = 0x09  # an Event's field 1 (wall_time, fixed64): the first byte of every
# Event TensorFlow, tensorboardX, torch or npsummary writes (a zero wall time is left out)


def _words32(u8: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """The little-endian uint32 starting at every byte of ``u8`` but the last three (a view)."""
    words: npt.NDArray[np.uint32] = np.ndarray((max(u8.size - 3, 0),), "<u4", u8, strides=(1,))
    return words


def _event_headers(buf: bytes) -> tuple[IntArray, IntArray]:
    """Positions and lengths of the valid headers followed by an Event's first byte: the
    candidates are the (few) positions 12 bytes before a 0x09 byte, instead of every window
    with four zero bytes (a histogram's float64 zeros make a quarter of a sweep's words that)."""
    u8 = np.frombuffer(buf, np.uint8)
    if u8.size <= _HEADER:
        empty = np.zeros(0, np.int64)
        return empty, empty
    p = np.flatnonzero(u8[_HEADER:] == _WALL_TIME_KEY)
    words = _words32(u8)
    p = p[words[p + 4] == 0]  # the length's high word
    lengths, crcs = words[p], words[p + 8]
    ok = length_crc_ok(lengths, crcs)
    return p[ok].astype(np.int64), lengths[ok].astype(np.int64)


def _one_chain(n: int, pos: IntArray, lens: IntArray) -> _Scan | None:
    """The scan when the headers ``pos`` are exactly one chain of records from byte 0 to the
    end of the buffer (the last perhaps incomplete), else None."""
    if not pos.size or pos[0] != 0:
        return None
    ends = pos + _FRAME + lens
    if not (np.array_equal(ends[:-1], pos[1:]) and n - int(ends[-1]) < _HEADER):
        return None
    if ends[-1] <= n:
        return _Scan(pos, lens, int(ends[-1]), 0, [])
    return _Scan(pos[:-1], lens[:-1], int(pos[-1]), int(ends[-1] - pos[-1]), [])


def _scan(buf: bytes, final: bool) -> _Scan:
    """The records of ``buf`` (which starts at a record boundary) and what is left over.

    A chain from byte 0 whose every header is valid is what the walk would follow, so the few
    headers before an Event's first byte are tried first; when they are not one whole chain
    (another payload, corruption, a cut), every valid header is found and walked."""
    n = len(buf)
    chain = _one_chain(n, *_event_headers(buf))
    if chain is not None:
        return chain
    pos, lens = _headers(buf)
    chain = _one_chain(n, pos, lens)
    return chain if chain is not None else _walk(n, pos, lens, final)


def segment_records(buf: bytes, offsets: IntArray) -> tuple[IntArray, IntArray, IntArray] | None:
    """Payload starts and ends of the records of ``buf``, pieces end to end (``offsets``: where
    each begins, ascending, then ``len(buf)``), and the first record of each piece, when
    ``buf`` is one chain of whole records with a length CRC that checks and a record beginning
    at every non-empty piece's first byte (so no record crosses into the next piece); else
    None. Payload CRCs are left to the caller."""
    scan = _scan(buf, final=True)
    if scan.corrupt or scan.consumed != len(buf) or not scan.records.size:
        return None
    heads = scan.records
    first = np.searchsorted(heads, offsets)
    filled = offsets[1:] > offsets[:-1]
    at = first[:-1][filled]
    if (at >= heads.size).any() or not np.array_equal(heads[at], offsets[:-1][filled]):
        return None
    starts = heads + _HEADER
    return starts, starts + scan.lengths, first


def _walk(n: int, pos: IntArray, lens: IntArray, final: bool) -> _Scan:
    """Follow the chain from byte 0; after a corrupt header, resume at the next valid one."""
    lookup = dict(zip(pos.tolist(), lens.tolist(), strict=True))
    out_pos: list[int] = []
    out_len: list[int] = []
    corrupt: list[tuple[int, int]] = []
    at = 0
    need = 0
    while n - at >= _HEADER:
        length = lookup.get(at)
        if length is None:
            i = int(np.searchsorted(pos, at, side="right"))
            if i < pos.size:
                corrupt.append((at, int(pos[i]) - at))
                at = int(pos[i])
                continue
            # No valid header in the rest of this chunk; a header may straddle the next one.
            stop = n if final else n - _HEADER + 1
            corrupt.append((at, stop - at))
            at = stop
            break
        end = at + _FRAME + length
        if end > n:
            need = end - at
            break
        out_pos.append(at)
        out_len.append(length)
        at = end
    return _Scan(
        np.array(out_pos, np.int64), np.array(out_len, np.int64), at, need or _HEADER, corrupt
    )


def raw_crcs(buf: bytes, starts: IntArray, ends: IntArray) -> IntArray:
    """Raw CRC32C of each payload (exact, vectorised where payloads share a length)."""
    return payload_crcs(buf, starts, ends)


def stored_crcs(buf: bytes, ends: IntArray) -> IntArray:
    """The masked payload CRCs stored after each payload."""
    stored: IntArray = _words32(np.frombuffer(buf, np.uint8))[ends].astype(np.int64)
    return stored


def payload_ok(buf: bytes, starts: IntArray, ends: IntArray) -> npt.NDArray[np.bool_]:
    """Whether each payload matches the masked CRC stored after it."""
    stored = stored_crcs(buf, ends)
    ok: npt.NDArray[np.bool_] = masked(payload_crcs(buf, starts, ends)) == stored
    return ok


def skip_to(f: BinaryIO, count: int) -> None:
    """Move a file just opened ``count`` bytes on: a seek, or reads where it cannot seek."""
    try:
        f.seek(count)
        return
    except (AttributeError, OSError):  # io.UnsupportedOperation is an OSError
        pass
    while count > 0:
        data = f.read(min(count, CHUNK))
        if not data:
            return
        count -= len(data)


def read_range(fs: FileSystem, path: str, start: int, size: int) -> bytes:
    """Up to ``size`` bytes of ``path`` from byte ``start`` (fewer only at its end): through the
    filesystem's ``read_range`` where it has one (the local disk reads by position), else
    opened, moved on and read."""
    by_position = getattr(fs, "read_range", None)
    if by_position is not None:
        data: bytes = by_position(path, start, size)
        return data
    with fs.open(path) as f:
        skip_to(f, start)
        return f.read(size)


def read_batches(
    fs: FileSystem,
    path: str,
    stats: ReadStats,
    start: int = 0,
    *,
    strict: bool = False,
    chunk: int = CHUNK,
) -> Iterator[RecordBatch]:
    """Yield the checked records of the file ``path``, a chunk at a time, in file order.

    ``start`` is a record boundary to read from (:class:`~npsummary.reader.Reader` resumes
    where its last read ended); offsets in problems stay those of the whole file."""
    size = fs.size(path)
    stats.files += 1
    stats.bytes += max(size - start, 0)
    left = size - start
    base = start  # file offset of buf[0]
    buf = b""
    want = chunk
    with fs.open(path) as f:
        if start:
            skip_to(f, start)
        while True:
            data = f.read(min(want, left)) if left > 0 else b""
            left -= len(data)
            final = left <= 0 or not data
            buf = buf + data if buf else data
            scan = _scan(buf, final)
            for at, nbytes in scan.corrupt:
                stats.corrupt(path, base + at, nbytes, "corrupt record header", strict)
            if scan.records.size:
                batch = RecordBatch(path, buf, scan.records + _HEADER, scan.records + _HEADER, base)
                batch.ends = batch.starts + scan.lengths
                ok = payload_ok(buf, batch.starts, batch.ends)
                if not ok.all():
                    batch.report_corrupt(stats, np.flatnonzero(~ok), strict)
                    batch.starts, batch.ends = batch.starts[ok], batch.ends[ok]
                stats.records += int(batch.starts.size)
                if batch.starts.size:
                    yield batch
            if final:
                tail = len(buf) - scan.consumed
                if tail:
                    stats.torn_tails += 1
                    stats.torn_bytes += tail
                    stats.note(f"{path}: torn tail of {tail} bytes at byte {base + scan.consumed}")
                return
            buf = buf[scan.consumed :]
            base += scan.consumed
            want = max(chunk, scan.need - len(buf))
