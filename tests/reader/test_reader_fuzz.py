"""Reader robustness: hostile bytes never crash it or make it allocate beyond the file's size,
and the bulk scalar decoder agrees with protobuf on every record it takes."""

from __future__ import annotations

import math
import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary import reader
from npsummary._format.record import frame_record, masked_crc32c
from npsummary._format.wire import wall_time_field
from npsummary._summaries.histogram import tf2_histogram_value
from npsummary._summaries.scalar import ScalarEncoder
from npsummary.proto import Event
from npsummary.reader import _fastscalar, _framing

SETTINGS = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _base_file() -> bytes:
    enc = ScalarEncoder()
    records = [frame_record(Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())]
    for step in range(150):
        records.append(frame_record(enc.event(f"t{step % 3}", step * 0.5, step, 1e9 + step)))
        if step % 40 == 0:
            ev = Event(wall_time=2.0, step=step)
            ev.summary.value.add().MergeFromString(tf2_histogram_value("h", [1.0, 2.0], 3, None)[0])
            records.append(frame_record(ev.SerializeToString()))
    return b"".join(records)


BASE = _base_file()


def _check(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "events.out.tfevents.fuzz"
    path.write_bytes(data)
    reader.load(path)  # warm-up: first-use caches (imports, protobuf classes) are not per file
    tracemalloc.start()
    try:
        loaded = reader.load(path)
        stats = reader.ReadStats()
        count = sum(1 for _ in reader.events(path, stats=stats))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == stats.records - _not_events(stats)
    assert loaded.stats.bytes == len(data)
    # Bounded by the file, never by a length field (a forged one asks for up to 2**31 bytes):
    # a few copies of the data plus the parsed messages (large with pure-Python protobuf).
    assert peak <= (1 << 20) + 64 * len(data), (peak, len(data))


def _not_events(stats: reader.ReadStats) -> int:
    return sum("not an Event" in p for p in stats.problems)


@pytest.mark.fuzz
@SETTINGS
@given(st.binary(max_size=4096))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    _check(tmp_path, data)


@pytest.mark.fuzz
@SETTINGS
@given(st.integers(0, len(BASE)))
def test_truncation(tmp_path: Path, cut: int) -> None:
    _check(tmp_path, BASE[:cut])


@pytest.mark.fuzz
@SETTINGS
@given(st.lists(st.integers(0, len(BASE) * 8 - 1), min_size=1, max_size=8))
def test_bit_flips(tmp_path: Path, bits: list[int]) -> None:
    data = bytearray(BASE)
    for bit in bits:
        data[bit // 8] ^= 1 << (bit % 8)
    _check(tmp_path, bytes(data))


@pytest.mark.fuzz
@SETTINGS
@given(st.integers(0, 2**64 - 1), st.integers(0, 200))
def test_absurd_lengths_with_valid_crc(tmp_path: Path, length: int, where: int) -> None:
    header = struct.pack("<Q", length)
    forged = header + struct.pack("<I", masked_crc32c(header)) + b"\x00" * 8
    cut = min(where * 97, len(BASE))
    _check(tmp_path, BASE[:cut] + forged + BASE[cut:])


_TAGS = st.text(min_size=0, max_size=140)
_VALUES = st.floats(width=32, allow_nan=True, allow_infinity=True)
_STEPS = st.integers(-(2**63), 2**63 - 1)
_WALLS = st.one_of(st.just(0.0), st.floats(allow_nan=False, allow_infinity=False))
# protobuf's pure-Python backend before 4.x (3.20, CI's floor) reads a -0.0 double as 0.0; the
# bulk path keeps the sign. Where protobuf loses it, it judges wall times by value only.
_KEEPS_NEGATIVE_ZERO = (
    math.copysign(1, Event.FromString(b"\t" + struct.pack("<d", -0.0)).wall_time) < 0
)


def _scalar_record(tag: str, value: float, step: int, wall: float, legacy: bool) -> bytes:
    if legacy:
        ev = Event(wall_time=wall, step=step)
        ev.summary.value.add(tag=tag, simple_value=value)
        record: bytes = ev.SerializeToString()
        return record
    payload: bytes = ScalarEncoder().event(tag, value, step, wall)
    assert wall_time_field(wall) == b"" or payload[0] == 0x09
    return payload


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b/c", "ü"]) | _TAGS, _VALUES, _STEPS, _WALLS, st.booleans()
        ),
        min_size=1,
        max_size=120,
    )
)
def test_bulk_scalars_agree_with_protobuf(rows: list[tuple[str, float, int, float, bool]]) -> None:
    payloads = [_scalar_record(*row) for row in rows]
    buf = b"".join(frame_record(p) for p in payloads)
    starts, ends, pos = [], [], 0
    for p in payloads:
        starts.append(pos + 12)
        ends.append(pos + 12 + len(p))
        pos += len(p) + 16
    fast = _fastscalar.match_scalars(buf, np.array(starts, np.int64), np.array(ends, np.int64))
    for k, i in enumerate(fast.index.tolist()):
        ev = Event.FromString(payloads[i])
        value = ev.summary.value[0]
        assert fast.tags[fast.group[k]] == value.tag
        assert fast.steps[k] == ev.step
        if _KEEPS_NEGATIVE_ZERO:
            assert struct.pack("<d", fast.wall_times[k]) == struct.pack("<d", ev.wall_time)
        else:
            assert fast.wall_times[k] == ev.wall_time
        expected = value.simple_value if value.HasField("simple_value") else None
        if expected is None:
            expected = struct.unpack("<f", value.tensor.tensor_content)[0]
        got = float(fast.values[k])
        assert got == expected or (math.isnan(got) and math.isnan(expected))
    # Everything with a wall time and a short non-empty tag takes the bulk path.
    taken = set(fast.index.tolist())
    assert all(
        i in taken for i, row in enumerate(rows) if row[3] != 0.0 and 0 < len(row[0].encode()) < 128
    )


def test_framing_matches_sequential_reader() -> None:
    from npsummary._format.record import iter_records

    pos, _ = _framing._headers(BASE)
    scan = _framing._scan(BASE, True)
    got = [
        BASE[int(a) + 12 : int(a) + 12 + int(n)]
        for a, n in zip(scan.records, scan.lengths, strict=True)
    ]
    assert got == list(iter_records(BASE))
    assert set(scan.records.tolist()) <= set(pos.tolist())


def _walked(buf: bytes, final: bool) -> _framing._Scan:
    """The scan from every valid header (what _scan does when the Event-first-byte headers
    are not one chain)."""
    pos, lens = _framing._headers(buf)
    chain = _framing._one_chain(len(buf), pos, lens)
    return chain if chain is not None else _framing._walk(len(buf), pos, lens, final)


_payloads = st.one_of(
    st.binary(max_size=40),  # anything: an Event or not, 0x09 first or not
    st.binary(max_size=20).map(lambda b: b"\x09" + b),
    # a payload holding a whole valid record: a header that is not on the chain
    st.binary(max_size=8).map(lambda b: b"\x09" + frame_record(b"\x09" + b) + b),
    st.binary(max_size=8).map(lambda b: b"\x09" + frame_record(b"\x10" + b) + b),
    st.just(b""),
)


@pytest.mark.fuzz
@SETTINGS
@given(
    payloads=st.lists(_payloads, max_size=12),
    cut=st.integers(min_value=0, max_value=40),
    flip=st.one_of(st.none(), st.integers(min_value=0, max_value=400)),
    final=st.booleans(),
)
def test_the_event_first_byte_scan_equals_the_scan_of_every_header(
    payloads: list[bytes], cut: int, flip: int | None, final: bool
) -> None:
    buf = bytearray(b"".join(frame_record(p) for p in payloads))
    if flip is not None and flip < len(buf):
        buf[flip] ^= 0x40  # a corrupt header, length or payload byte
    data = bytes(buf[: max(0, len(buf) - cut)])
    got, want = _framing._scan(data, final), _walked(data, final)
    assert got.records.tolist() == want.records.tolist()
    assert got.lengths.tolist() == want.lengths.tolist()
    assert (got.consumed, got.corrupt) == (want.consumed, want.corrupt)
    # The bytes still wanted (0 after a whole chain: the walk says a header's worth).
    assert (got.need or _framing._HEADER) == (want.need or _framing._HEADER)
