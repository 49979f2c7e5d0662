"""Reader fuzzing: ``npsummary._format.record.iter_records`` and ``read_records`` on hostile bytes.

Inputs: random bytes; valid event files truncated anywhere; one or several bit flips; a range
overwritten with random bytes; headers whose length CRC is valid but whose length is absurd.
Every input goes through ``iter_records`` (bytes, bytearray, memoryview) and ``read_records``
(a BytesIO, a real file, and a non-seekable stream returning short reads), CRC checks on and off.

Promises checked on every input:

* the only exceptions are the documented ``TruncatedRecordError`` and ``CorruptRecordError``,
  raised at the offset where the bad record starts, after every good record before it;
* all readers agree;
* progress: at most ``len(data) // 16`` records, and a watchdog (SIGALRM) fails any input that
  takes more than 10 s (a loop that never ends);
* on mutated valid files: every record before the damage comes back intact; a single bit flip is
  always detected as corruption, a truncation always as a torn tail;
* memory (tracemalloc): peak allocation while reading is at most the input's size plus 64 KiB,
  whatever length a header declares.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import signal
import struct
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _reliability_child import HEAVY, report
from conftest import exploring
from npsummary import MemorySink, SummaryWriter
from npsummary._format.record import (
    CorruptRecordError,
    RecordError,
    TruncatedRecordError,
    frame_record,
    iter_records,
    masked_crc32c,
    read_records,
)

SCALE = 10 if HEAVY or exploring() else 1
WATCHDOG_SECS = 10.0
SLACK = 64 << 10
EXAMPLES: Counter[str] = Counter()


def _valid_payloads() -> list[bytes]:
    """Records of a real run: file version, scalars, add_scalars, a long tag, an empty record."""
    sink = MemorySink()
    w = SummaryWriter(sink)
    for i in range(20):
        w.add_scalar("loss", 1.0 / (i + 1), i)
        w.add_scalar("a/long/" + "t" * (i * 40), float(i), i)
    rng = random.Random(5)
    return [b"", *sink.payloads, bytes(rng.randrange(256) for _ in range(3000))]


PAYLOADS = _valid_payloads()
VALID = b"".join(frame_record(p) for p in PAYLOADS)
BOUNDARIES = [0]
for _p in PAYLOADS:
    BOUNDARIES.append(BOUNDARIES[-1] + 16 + len(_p))


def _record_index(offset: int) -> int:
    """Index of the record containing byte ``offset`` of VALID."""
    return max(i for i, b in enumerate(BOUNDARIES) if b <= offset)


class _Trickle(io.RawIOBase):
    """A non-seekable stream (like a pipe) that returns short reads of random sizes."""

    def __init__(self, data: bytes, seed: int) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._rng = random.Random(seed)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), len(self._data) - self._pos, self._rng.randint(1, 4096))
        buffer[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


@contextlib.contextmanager
def _watchdog(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"reader still running after {seconds} s: a loop that never ends?")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _collect(records: Iterator[bytes]) -> tuple[list[bytes], RecordError | None]:
    out: list[bytes] = []
    try:
        for payload in records:
            out.append(payload)
    except (TruncatedRecordError, CorruptRecordError) as exc:
        return out, exc
    return out, None


def _readers(data: bytes, tmp: Path | None, verify: bool) -> Iterator[tuple[str, Iterator[bytes]]]:
    yield "iter_records(bytes)", iter_records(data, verify=verify)
    yield "iter_records(bytearray)", iter_records(bytearray(data), verify=verify)
    yield "iter_records(memoryview)", iter_records(memoryview(data), verify=verify)
    yield "read_records(BytesIO)", read_records(io.BytesIO(data), verify=verify)
    pipe = cast(BinaryIO, _Trickle(data, len(data)))  # a raw binary stream: what it reads
    yield "read_records(pipe-like)", read_records(pipe, verify=verify)
    if tmp is not None:
        tmp.write_bytes(data)
        with open(tmp, "rb") as f:
            yield "read_records(file)", read_records(f, verify=verify)


def check_reader(data: bytes, tmp: Path | None = None) -> dict[bool, tuple[list[bytes], Any]]:
    """Run every reader over ``data``; assert the generic promises; return the outcome."""
    outcome: dict[bool, tuple[list[bytes], Any]] = {}
    with _watchdog(WATCHDOG_SECS):
        for verify in (True, False):
            results = {}
            for name, reader in _readers(data, tmp, verify):
                payloads, error = _collect(reader)
                assert len(payloads) <= len(data) // 16, name
                complete = sum(16 + len(p) for p in payloads)
                if error is None:
                    assert complete == len(data), name
                else:
                    assert error.offset == complete, (name, error)
                results[name] = (payloads, None if error is None else (type(error), error.offset))
            first = next(iter(results.values()))
            for name, result in results.items():
                assert result == first, f"{name} disagrees with iter_records(bytes)"
            outcome[verify] = first
    return outcome


def _settings(n: int) -> settings:
    return settings(
        max_examples=n * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def test_valid_file_reads_back() -> None:
    assert check_reader(VALID)[True] == (PAYLOADS, None)


@pytest.mark.fuzz
@_settings(1000)
@given(data=st.binary(max_size=2048))
def test_random_bytes(data: bytes) -> None:
    EXAMPLES["random bytes"] += 1
    check_reader(data)


@pytest.mark.fuzz
@_settings(500)
@given(cut=st.integers(0, len(VALID)))
def test_truncated_anywhere(cut: int) -> None:
    EXAMPLES["truncations"] += 1
    payloads, error = check_reader(VALID[:cut])[True]
    k = _record_index(cut)
    assert payloads == PAYLOADS[:k]
    if cut in BOUNDARIES:
        assert error is None
    else:
        assert error == (TruncatedRecordError, BOUNDARIES[k])


@pytest.mark.fuzz
@_settings(500)
@given(bit=st.integers(0, len(VALID) * 8 - 1))
def test_single_bit_flip_always_detected(bit: int) -> None:
    EXAMPLES["single bit flips"] += 1
    data = bytearray(VALID)
    data[bit // 8] ^= 1 << (bit % 8)
    payloads, error = check_reader(bytes(data))[True]
    k = _record_index(bit // 8)
    assert payloads == PAYLOADS[:k]
    # A flip in a length field may also make the record look longer than the file: torn tail.
    assert error is not None and error[1] == BOUNDARIES[k]
    if error[0] is TruncatedRecordError:
        assert bit // 8 < BOUNDARIES[k] + 8


@pytest.mark.fuzz
@_settings(200)
@given(bits=st.lists(st.integers(0, len(VALID) * 8 - 1), min_size=2, max_size=12, unique=True))
def test_several_bit_flips(bits: list[int]) -> None:
    EXAMPLES["multi-bit flips"] += 1
    data = bytearray(VALID)
    for bit in bits:
        data[bit // 8] ^= 1 << (bit % 8)
    payloads, error = check_reader(bytes(data))[True]
    k = _record_index(min(bits) // 8)
    assert payloads[:k] == PAYLOADS[:k]
    if bytes(data) != VALID:
        assert error is not None


@pytest.mark.fuzz
@_settings(200)
@given(
    start=st.integers(0, len(VALID)),
    length=st.integers(0, 64),
    junk=st.binary(min_size=0, max_size=64),
)
def test_range_overwritten_or_spliced(start: int, length: int, junk: bytes) -> None:
    EXAMPLES["splices"] += 1
    data = VALID[:start] + junk + VALID[start + length :]
    payloads, _error = check_reader(data)[True]
    k = _record_index(min(start, len(VALID) - 1))
    assert payloads[:k] == PAYLOADS[:k]


def _header(length: int) -> bytes:
    raw = struct.pack("<Q", length)
    return raw + struct.pack("<I", masked_crc32c(raw))


@pytest.mark.fuzz
@_settings(200)
@given(
    length=st.one_of(
        st.integers(0, 1 << 20),
        st.integers(1 << 20, (1 << 64) - 1),
        st.sampled_from([(1 << 31) - 1, 1 << 31, 1 << 32, (1 << 63), (1 << 64) - 1]),
    ),
    tail=st.binary(max_size=512),
)
def test_valid_length_crc_with_any_length(length: int, tail: bytes) -> None:
    EXAMPLES["crafted lengths"] += 1
    payloads, error = check_reader(VALID + _header(length) + tail)[True]
    assert payloads == PAYLOADS
    assert error is not None and error[1] == len(VALID)


def _peak(read: Any) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _drain(records: Iterator[bytes]) -> None:
    with contextlib.suppress(TruncatedRecordError, CorruptRecordError):
        for _ in records:
            pass


BIG = frame_record(b"\x01" * (3 << 20))


@pytest.mark.fuzz
@_settings(25)
@given(
    kind=st.sampled_from(["big record", "truncated big", "flipped big", "crafted", "random"]),
    where=st.integers(0, len(BIG) - 1),
    length=st.sampled_from([(1 << 16) + 1, 1 << 24, (1 << 31) - 1, 1 << 40, (1 << 64) - 1]),
    rnd=st.binary(max_size=4096),
)
def test_memory_never_exceeds_input_size(
    tmp_path_factory: Any, kind: str, where: int, length: int, rnd: bytes
) -> None:
    EXAMPLES["tracemalloc inputs"] += 1
    data = {
        "big record": BIG,
        "truncated big": BIG[:where],
        "flipped big": BIG[:where] + bytes([BIG[where] ^ 0x10]) + BIG[where + 1 :],
        "crafted": _header(length) + rnd,
        "random": rnd,
    }[kind]
    path = tmp_path_factory.mktemp("mem") / "events"
    path.write_bytes(data)
    bound = len(data) + SLACK
    assert _peak(lambda: _drain(iter_records(data))) <= bound, "iter_records"
    assert _peak(lambda: _drain(read_records(io.BytesIO(data)))) <= bound, "read_records(BytesIO)"
    with open(path, "rb") as f:
        assert _peak(lambda: _drain(read_records(f))) <= bound, "read_records(file)"
    with open(path, "rb", buffering=0) as f:
        assert _peak(lambda: _drain(read_records(f))) <= bound, "read_records(raw file)"


@pytest.fixture(scope="module", autouse=True)
def _report_examples() -> Iterator[None]:
    yield
    report("reader.fuzz", examples=dict(EXAMPLES), total_examples=sum(EXAMPLES.values()))


def test_real_file_with_torn_tail(tmp_path: Path) -> None:
    # End to end: a file written by SummaryWriter, cut mid-record, read from disk.
    with SummaryWriter(tmp_path / "run") as w:
        for i in range(50):
            w.add_scalar("loss", float(i), i)
        path = w.sink.path  # type: ignore[attr-defined]
    data = Path(path).read_bytes()
    out = check_reader(data[:-5], tmp_path / "copy")[True]
    assert len(out[0]) == 50 and out[1] is not None and out[1][0] is TruncatedRecordError
    assert os.path.getsize(path) == len(data)
