"""TFRecord framing: the container format of TensorBoard event files.

A file is a plain concatenation of records, with no header or footer. One record is::

    uint64  length               little-endian, = len(payload)
    uint32  masked CRC32C of the 8 length bytes, little-endian
    byte    payload[length]      a serialized Event proto
    uint32  masked CRC32C of the payload, little-endian

CRC32C is the Castagnoli CRC (reflected polynomial 0x82F63B78). The mask rotates the CRC right by 15
bits and adds 0xA282EAD8 modulo 2**32. Every record therefore costs 16 bytes of framing.

Readers distinguish a *torn tail* (the file ends inside a record: a writer was killed or is still
writing; the record may be completed later) from *corruption* (a CRC mismatch or an impossible
length). Everything here is pure: bytes in, bytes out.
"""

from __future__ import annotations

import io
import os
import stat
import struct
import sys
from collections.abc import Callable, Iterator
from importlib.machinery import ExtensionFileLoader, PathFinder
from itertools import chain
from typing import Any, BinaryIO

import numpy as np

__all__ = [
    "MAX_RECORD_LENGTH",
    "CorruptRecordError",
    "RecordError",
    "TruncatedRecordError",
    "frame_record",
    "frame_records",
    "iter_records",
    "masked_crc32c",
    "read_records",
]

_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_MASK_DELTA = 0xA282EAD8
_HEADER_SIZE = 12
_FOOTER_SIZE = 4

#: Longest payload the reader accepts. TensorBoard's own protobuf parser refuses messages over
#: 2 GiB, so a larger length field can only be corruption; refusing it keeps a flipped high bit
#: from turning into a multi-gigabyte allocation.
MAX_RECORD_LENGTH = (1 << 31) - 1

_crc32c_impl: Callable[[bytes], int] | None = None


def _load_crc32c() -> Callable[[bytes], int]:
    # Loaded on first use, not at import: the first writer or reader pays it once.
    global _crc32c_impl
    impl = _crc32c_extension()
    if impl is None:
        try:
            import crc32c

            impl = crc32c.crc32c
        except ImportError:  # pragma: no cover - crc32c is a declared dependency
            try:
                import google_crc32c

                impl = google_crc32c.value
            except ImportError:
                impl = _crc32c_python
    _crc32c_impl = impl
    return impl


def _crc32c_extension() -> Callable[[bytes], int] | None:
    """``crc32c.crc32c`` from the crc32c package's C extension, loaded without running the
    package's ``__init__``; None if that is not possible (then ``import crc32c`` decides).

    ``import crc32c`` also imports importlib.metadata, argparse, zipfile and the email package
    (for its ``__version__`` and command line): ~30 ms here, several times npsummary's own
    import, paid by the first writer of every script. The records need only the C function.
    """
    if "crc32c" in sys.modules:  # imported already (or blocked with None): use the package
        return None
    try:
        package = PathFinder.find_spec("crc32c")  # finds the package, does not run it
        if package is None or not package.submodule_search_locations:
            return None
        spec = PathFinder.find_spec("crc32c._crc32c", package.submodule_search_locations)
        if spec is None or not isinstance(spec.loader, ExtensionFileLoader):
            return None  # an older layout (a single top-level extension module)
        module = spec.loader.create_module(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError):
        return None
    function = getattr(module, "crc32c", None)
    return function if callable(function) else None


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE: list[int] | None = None


def _crc32c_python(data: bytes) -> int:
    """Table-driven CRC32C, used only when no native implementation is installed."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _make_table()
    table = _TABLE
    crc = 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """Return the masked CRC32C of ``data`` as TFRecord stores it."""
    crc = (_crc32c_impl or _load_crc32c())(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame_record(payload: bytes) -> bytes:
    """Return ``payload`` wrapped in TFRecord framing, ready to append to a file."""
    header = _LENGTH.pack(len(payload))
    return b"".join(
        (
            header,
            _CRC.pack(masked_crc32c(header)),
            payload,
            _CRC.pack(masked_crc32c(payload)),
        )
    )


_HEADERS: dict[int, bytes] = {}  # payload length -> its 12 framed header bytes


def frame_records(payloads: list[bytes]) -> bytes:
    """``b"".join(frame_record(p) for p in payloads)``, faster: the background writer frames
    every logged event. Events of one kind share a few lengths, so the length header and its CRC
    are cached per length; the payload CRCs are one C call each, masked as one array, and every
    loop runs in C (``map``, ``zip``), not in Python bytecode."""
    if not payloads:
        return b""
    crc32c = _crc32c_impl or _load_crc32c()
    headers = _HEADERS
    lengths = list(map(len, payloads))
    for size in set(lengths).difference(headers):
        if len(headers) >= 65536:
            headers.clear()
        length = _LENGTH.pack(size)
        headers[size] = length + _CRC.pack(masked_crc32c(length))
    crcs = np.fromiter(map(crc32c, payloads), np.uint64, count=len(payloads))
    masked = (((crcs >> 15) | (crcs << 17)) + _MASK_DELTA) & 0xFFFFFFFF
    footers = map(_CRC.pack, masked.tolist())
    heads = map(headers.__getitem__, lengths)
    return b"".join(chain.from_iterable(zip(heads, payloads, footers, strict=True)))


class RecordError(ValueError):
    """A TFRecord stream could not be read to its end. ``offset`` is where the bad record starts."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (record at byte offset {offset})")
        self.message = message
        self.offset = offset

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its own arguments: a reader's worker process raises it to the caller.
        return (type(self), (self.message, self.offset))


class TruncatedRecordError(RecordError):
    """The stream ends inside a record: a torn tail, which a later append may still complete."""


class CorruptRecordError(RecordError):
    """A record failed its length or payload CRC, or declares an impossible length."""


def iter_records(data: bytes | bytearray | memoryview, *, verify: bool = True) -> Iterator[bytes]:
    """Yield the payloads of the records in ``data``.

    Raises :class:`TruncatedRecordError` if ``data`` ends inside a record (after yielding every
    complete record before it) and :class:`CorruptRecordError` on a CRC mismatch or a length that
    cannot fit in the remaining bytes. ``verify=False`` skips the payload CRC (the length CRC is
    always checked, as both TensorBoard loaders do).
    """
    view = memoryview(data)
    size = len(view)
    pos = 0
    while pos < size:
        if size - pos < _HEADER_SIZE:
            raise TruncatedRecordError("stream ends inside a record header", pos)
        header = bytes(view[pos : pos + 8])
        (length,) = _LENGTH.unpack(header)
        (length_crc,) = _CRC.unpack_from(view, pos + 8)
        if masked_crc32c(header) != length_crc:
            raise CorruptRecordError("record length fails its CRC check", pos)
        if length > MAX_RECORD_LENGTH:
            raise CorruptRecordError(f"record declares an impossible length {length}", pos)
        end = pos + _HEADER_SIZE + length + _FOOTER_SIZE
        if end > size:
            raise TruncatedRecordError("stream ends inside a record payload", pos)
        payload = bytes(view[pos + _HEADER_SIZE : end - _FOOTER_SIZE])
        if verify:
            (payload_crc,) = _CRC.unpack_from(view, end - _FOOTER_SIZE)
            if masked_crc32c(payload) != payload_crc:
                raise CorruptRecordError("record payload fails its CRC check", pos)
        yield payload
        pos = end


def read_records(stream: BinaryIO, *, verify: bool = True) -> Iterator[bytes]:
    """Yield the payloads of the records read from a binary stream, one record at a time.

    A corrupt length field never causes a large allocation. On files and seekable streams the
    declared length is checked against the bytes actually left before anything is read, and the
    peak is one payload (at most the stream's size) plus 64 KiB; on pipes the payload is read in
    1 MiB chunks, so the peak is twice the bytes that really arrived. Errors are as for
    :func:`iter_records`.
    """
    pos = 0
    while True:
        header_bytes = stream.read(_HEADER_SIZE)
        if not header_bytes:
            return
        # Raw streams (pipes, sockets, unbuffered files) may return fewer bytes than asked for
        # before the end: keep reading, and call it truncated only at the real end.
        while len(header_bytes) < _HEADER_SIZE:
            more = stream.read(_HEADER_SIZE - len(header_bytes))
            if not more:
                break
            header_bytes += more
        if len(header_bytes) < _HEADER_SIZE:
            raise TruncatedRecordError("stream ends inside a record header", pos)
        header = header_bytes[:8]
        (length,) = _LENGTH.unpack(header)
        (length_crc,) = _CRC.unpack_from(header_bytes, 8)
        if masked_crc32c(header) != length_crc:
            raise CorruptRecordError("record length fails its CRC check", pos)
        if length > MAX_RECORD_LENGTH:
            raise CorruptRecordError(f"record declares an impossible length {length}", pos)
        payload = _read_payload(stream, length, pos)
        footer = _read_exact(stream, _FOOTER_SIZE, pos)
        if verify:
            (payload_crc,) = _CRC.unpack(footer)
            if masked_crc32c(payload) != payload_crc:
                raise CorruptRecordError("record payload fails its CRC check", pos)
        yield payload
        pos += _HEADER_SIZE + length + _FOOTER_SIZE


# Records up to this size are read with one read() call: whatever a corrupt length says, such a
# read allocates at most this much beyond the data.
_SMALL_READ = 1 << 16


def _bytes_left(stream: BinaryIO) -> int | None:
    """Bytes from the position to the end of ``stream`` when cheaply known (files, BytesIO)."""
    try:
        st = os.fstat(stream.fileno())
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        pass
    else:
        return st.st_size - stream.tell() if stat.S_ISREG(st.st_mode) else None
    try:
        if stream.seekable():  # BytesIO and the like: seeking is cheap and copies nothing
            here = stream.tell()
            end = stream.seek(0, io.SEEK_END)
            stream.seek(here)
            return end - here
    except (AttributeError, OSError, ValueError):
        pass
    return None


def _read_exact(stream: BinaryIO, size: int, pos: int) -> bytes:
    data = stream.read(size)
    # Raw streams (pipes, sockets) may return short reads before the end.
    while len(data) < size:
        more = stream.read(size - len(data))
        if not more:
            raise TruncatedRecordError("stream ends inside a record payload", pos)
        data += more
    return data


def _read_payload(stream: BinaryIO, length: int, pos: int) -> bytes:
    """Read ``length`` payload bytes without ever allocating more than the stream holds (plus
    ``_SMALL_READ``), and without a second copy of a large payload."""
    if length <= _SMALL_READ:
        return _read_exact(stream, length, pos)
    left = _bytes_left(stream)
    if left is not None:
        if left < length + _FOOTER_SIZE:
            raise TruncatedRecordError("stream ends inside a record payload", pos)
        return _read_exact(stream, length, pos)
    # Unknown size (a pipe): read in chunks, so a false length costs only the bytes that exist.
    chunks = []
    remaining = length
    while remaining:
        chunk = stream.read(min(remaining, 1 << 20))
        if not chunk:
            raise TruncatedRecordError("stream ends inside a record payload", pos)
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
