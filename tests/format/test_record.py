"""TFRecord framing: docs/FORMAT.md §1 golden vectors, round trips, torn tails vs corruption."""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path
from typing import BinaryIO, cast

import crc32c
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary._format import record as _record
from npsummary._format.record import (
    MAX_RECORD_LENGTH,
    CorruptRecordError,
    RecordError,
    TruncatedRecordError,
    frame_record,
    iter_records,
    masked_crc32c,
    read_records,
)

# docs/FORMAT.md §1.2: Event(wall_time=1234.5, file_version="brain.Event:2") framed (24 B payload).
GOLDEN_PAYLOAD = bytes.fromhex("0900000000004a9340") + b"\x1a\x0d" + b"brain.Event:2"
GOLDEN_RECORD = (
    bytes.fromhex("1800000000000000")
    + bytes.fromhex("a37f4b22")
    + GOLDEN_PAYLOAD
    + bytes.fromhex("65b8d3fb")
)

payloads = st.binary(max_size=300)
payload_lists = st.lists(payloads, max_size=8)


def _both_readers(data: bytes, *, verify: bool = True) -> list[list[bytes]]:
    return [
        list(iter_records(data, verify=verify)),
        list(read_records(io.BytesIO(data), verify=verify)),
    ]


def _collect(reader: object) -> tuple[list[bytes], BaseException | None]:
    """Drain an iterator of records; return what it yielded and the error that ended it."""
    out: list[bytes] = []
    try:
        for record in reader:  # type: ignore[attr-defined]
            out.append(record)
    except Exception as exc:
        return out, exc
    return out, None


# --- golden vectors -------------------------------------------------------------------------


def test_masked_crc_golden_vectors() -> None:
    assert crc32c.crc32c(b"123456789") == 0xE3069283
    assert masked_crc32c(b"\x1a\x11CRC test, one two") == 0x5794D08A
    assert masked_crc32c(b"") == 0xA282EAD8
    length_crc = masked_crc32c(struct.pack("<Q", 24))
    assert length_crc == 0x224B7FA3
    assert struct.pack("<I", length_crc) == bytes.fromhex("a37f4b22")


def test_golden_payload_is_the_event_tensorboard_builds() -> None:
    event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    event = event_pb2.Event(wall_time=1234.5, file_version="brain.Event:2")
    assert event.SerializeToString() == GOLDEN_PAYLOAD
    assert len(GOLDEN_PAYLOAD) == 24


def test_frame_record_golden_bytes() -> None:
    assert frame_record(GOLDEN_PAYLOAD) == GOLDEN_RECORD
    assert len(GOLDEN_RECORD) == 24 + 16


def test_readers_parse_golden_record() -> None:
    assert _both_readers(GOLDEN_RECORD) == [[GOLDEN_PAYLOAD]] * 2


def test_empty_payload_and_empty_stream() -> None:
    empty = frame_record(b"")
    assert empty == bytes(8) + struct.pack("<I", masked_crc32c(bytes(8))) + bytes.fromhex(
        "d8ea82a2"
    )
    assert _both_readers(empty) == [[b""]] * 2
    assert _both_readers(b"") == [[], []]


def test_python_crc_table_matches_tensorboard() -> None:
    assert _record._make_table()[1] == 0xF26B8303
    assert _record._crc32c_python(b"123456789") == 0xE3069283


@pytest.mark.fuzz
@settings(max_examples=examples(200))
@given(st.binary(max_size=2000))
def test_pure_python_crc_equals_native(data: bytes) -> None:
    assert _record._crc32c_python(data) == crc32c.crc32c(data)


def test_native_crc_is_loaded_without_running_the_crc32c_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The package's __init__ imports importlib.metadata and argparse (~30 ms): the first writer
    # loads only its C extension.
    import sys

    monkeypatch.delitem(sys.modules, "crc32c")
    function = _record._crc32c_extension()
    assert function is not None
    assert "crc32c" not in sys.modules
    for data in (b"", b"123456789", GOLDEN_PAYLOAD, bytes(range(256)) * 9):
        assert function(data) == crc32c.crc32c(data) == _record._crc32c_python(data)


def test_an_imported_or_blocked_crc32c_package_is_used_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    assert _record._crc32c_extension() is None  # imported: `import crc32c` is free
    monkeypatch.setattr(_record, "_crc32c_impl", None)
    assert _record._load_crc32c() is crc32c.crc32c
    monkeypatch.setitem(sys.modules, "crc32c", None)
    assert _record._crc32c_extension() is None  # blocked: falls through to the fallbacks


def test_pure_python_fallback_is_used_without_native_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "crc32c", None)
    monkeypatch.setitem(sys.modules, "google_crc32c", None)
    monkeypatch.setattr(_record, "_crc32c_impl", None)
    assert _record._load_crc32c() is _record._crc32c_python
    assert frame_record(GOLDEN_PAYLOAD) == GOLDEN_RECORD
    assert list(iter_records(GOLDEN_RECORD)) == [GOLDEN_PAYLOAD]


# --- round trips ----------------------------------------------------------------------------


@pytest.mark.fuzz
@settings(max_examples=examples(150))
@given(payload_lists)
def test_round_trip(records: list[bytes]) -> None:
    stream = b"".join(frame_record(p) for p in records)
    assert len(stream) == sum(len(p) + 16 for p in records)
    assert _both_readers(stream) == [records, records]
    assert _both_readers(stream, verify=False) == [records, records]


@pytest.mark.fuzz
@settings(max_examples=examples(100))
@given(payloads)
def test_masked_crc_matches_tensorboard_stub(payload: bytes) -> None:
    pywrap_tensorflow = pytest.importorskip("tensorboard.compat.tensorflow_stub.pywrap_tensorflow")
    assert pywrap_tensorflow.masked_crc32c(payload) == masked_crc32c(payload)


def test_tensorboard_record_reader_round_trip(tmp_path: Path) -> None:
    from conftest import raw_records

    records = [b"", b"x", bytes(range(256)) * 40, GOLDEN_PAYLOAD]
    path = tmp_path / "events.out.tfevents.0"
    path.write_bytes(b"".join(frame_record(p) for p in records))
    assert raw_records(path) == records


class Trickle(io.RawIOBase):
    """A raw stream returning at most ``step`` bytes per read, like a pipe or a socket."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data = data
        self.pos = 0
        self.step = step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        n = min(self.step, len(buffer), len(self.data) - self.pos)
        buffer[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


def _trickle(data: bytes, step: int) -> BinaryIO:
    return cast(BinaryIO, Trickle(data, step))


@pytest.mark.parametrize("step", [1, 5, 13])
def test_read_records_handles_short_reads(step: int) -> None:
    records = [b"abc", b"", b"defgh" * 10]
    stream = b"".join(frame_record(p) for p in records)
    assert list(read_records(_trickle(stream, step))) == records
    with pytest.raises(TruncatedRecordError):
        list(read_records(_trickle(stream[:-3], step)))
    with pytest.raises(TruncatedRecordError):
        list(read_records(_trickle(stream + stream[:7], step)))


def test_read_records_reads_large_record_in_chunks() -> None:
    big = bytes(range(256)) * (5 * 4096 + 3)  # > 1 MiB chunk size
    stream = frame_record(big) + frame_record(b"tail")
    assert _both_readers(stream) == [[big, b"tail"]] * 2


# --- torn tail vs corruption ----------------------------------------------------------------

TWO = [b"first record payload", b"second"]
TWO_STREAM = b"".join(frame_record(p) for p in TWO)
FIRST_END = len(TWO[0]) + 16


@pytest.mark.parametrize("cut", range(1, len(TWO_STREAM)))
def test_every_truncation_is_a_torn_tail(cut: int) -> None:
    data = TWO_STREAM[:cut]
    expected = TWO[:1] if cut >= FIRST_END else []
    for reader in (iter_records(data), read_records(io.BytesIO(data))):
        got, error = _collect(reader)
        if cut == FIRST_END:
            assert got == expected and error is None
            continue
        assert got == expected
        assert type(error) is TruncatedRecordError, error
        assert error.offset == (FIRST_END if cut > FIRST_END else 0)
        assert f"offset {error.offset}" in str(error)


@pytest.mark.parametrize("bit", range(len(TWO_STREAM) * 8))
def test_bit_flip_is_detected(bit: int) -> None:
    data = bytearray(TWO_STREAM)
    data[bit // 8] ^= 1 << (bit % 8)
    for reader in (iter_records(bytes(data)), read_records(io.BytesIO(bytes(data)))):
        got, error = _collect(reader)
        # Never a wrong payload, never an error other than ours.
        assert got == TWO[: len(got)]
        assert isinstance(error, (CorruptRecordError, TruncatedRecordError)), error
        # The damaged record is the one reported.
        damaged_offset = 0 if bit // 8 < FIRST_END else FIRST_END
        assert error.offset == damaged_offset
        assert len(got) == (0 if damaged_offset == 0 else 1)


@pytest.mark.fuzz
@settings(max_examples=examples(200))
@given(
    payload_lists.filter(bool),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=4),
)
def test_random_corruption_never_yields_a_wrong_payload(
    records: list[bytes], damage: list[tuple[int, int]]
) -> None:
    original = b"".join(frame_record(p) for p in records)
    data = bytearray(original)
    for position, xor in damage:
        data[position % len(data)] ^= xor
    for reader in (iter_records(bytes(data)), read_records(io.BytesIO(bytes(data)))):
        got, error = _collect(reader)
        if data == original:  # the flips cancelled out
            assert (got, error) == (records, None)
            continue
        assert got == records[: len(got)]
        assert isinstance(error, (CorruptRecordError, TruncatedRecordError)), error


def test_bad_payload_crc_passes_only_without_verify() -> None:
    data = bytearray(frame_record(b"payload"))
    data[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="payload"):
        list(iter_records(bytes(data)))
    with pytest.raises(CorruptRecordError, match="payload"):
        list(read_records(io.BytesIO(bytes(data))))
    assert _both_readers(bytes(data), verify=False) == [[b"payload"]] * 2


def test_bad_length_crc_is_checked_even_without_verify() -> None:
    data = bytearray(frame_record(b"payload"))
    data[8] ^= 1
    for reader in (
        iter_records(bytes(data), verify=False),
        read_records(io.BytesIO(bytes(data)), verify=False),
    ):
        with pytest.raises(CorruptRecordError, match="length"):
            list(reader)


def test_errors_are_value_errors() -> None:
    assert issubclass(TruncatedRecordError, RecordError)
    assert issubclass(CorruptRecordError, RecordError)
    assert issubclass(RecordError, ValueError)


# --- absurd lengths -------------------------------------------------------------------------


def _header(length: int) -> bytes:
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", masked_crc32c(header))


@pytest.mark.parametrize("length", [MAX_RECORD_LENGTH + 1, 2**40, 2**64 - 1])
def test_absurd_length_refused_without_allocation(length: int) -> None:
    data = frame_record(b"ok") + _header(length) + b"some bytes that follow"
    tracemalloc.start()
    try:
        for reader in (iter_records(data), read_records(io.BytesIO(data))):
            got, error = _collect(reader)
            assert got == [b"ok"]
            assert type(error) is CorruptRecordError
            assert "impossible length" in str(error)
            assert error.offset == 18
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_large_length_on_short_stream_reads_only_what_exists() -> None:
    # A plausible-but-false length (1 GiB) on a short file: a torn tail, and the reader must not
    # allocate the declared size while finding out.
    data = _header(1 << 30) + b"x" * 100
    tracemalloc.start()
    try:
        for reader in (iter_records(data), read_records(io.BytesIO(data))):
            got, error = _collect(reader)
            assert got == []
            assert type(error) is TruncatedRecordError
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
