"""The reader's bulk CRC32C (npsummary.reader._crc) equals the per-record CRC on every input."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary._format.record import MAX_RECORD_LENGTH, _crc32c_python, masked_crc32c
from npsummary.reader import _crc

# Families of payloads: a base, copies with a few bytes changed (the layout of one writer's
# records, which takes the table path), and unrelated payloads of the same or other lengths.
_families = st.lists(
    st.tuples(
        st.binary(min_size=0, max_size=1100),
        st.lists(st.lists(st.tuples(st.integers(0, 1099), st.integers(0, 255)), max_size=6)),
    ),
    min_size=1,
    max_size=4,
)


Families = list[tuple[bytes, list[list[tuple[int, int]]]]]


def _layout(families: Families, gaps: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    parts, starts, ends = [], [], []
    pos = 0
    for base, edits in families:
        for change in [[], *edits] * 20:
            payload = bytearray(base)
            for where, byte in change:
                if payload:
                    payload[where % len(payload)] = byte
            gap = bytes(pos % (gaps + 1))
            parts.append(gap + bytes(payload))
            starts.append(pos + len(gap))
            pos += len(gap) + len(payload)
            ends.append(pos)
    return b"".join(parts) + b"", np.array(starts, np.int64), np.array(ends, np.int64)


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(_families, st.integers(0, 3), st.randoms(use_true_random=False))
def test_payload_crcs_equal_one_call_per_record(
    families: Families, gaps: int, rnd: random.Random
) -> None:
    buf, starts, ends = _layout(families, gaps)
    order = np.array(rnd.sample(range(starts.size), starts.size), np.int64)
    starts, ends = starts[order], ends[order]  # any order of records
    got = _crc.payload_crcs(buf, starts, ends)
    want = [_crc32c_python(buf[a:b]) for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    assert got.tolist() == want


def test_payload_crcs_group_path_and_fallbacks() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 256, 200, dtype=np.uint8)
    payloads = []
    for i in range(300):
        row = base.copy()
        row[[3, 17, 150]] = [i & 0xFF, i >> 8, 255 - (i & 0xFF)]  # a few differing columns
        payloads.append(row.tobytes())
    payloads += [rng.integers(0, 256, 90, dtype=np.uint8).tobytes() for _ in range(100)]  # varied
    payloads += [bytes(2000)] * 40  # longer than the table path takes
    payloads += [b""] * 40
    buf = b"".join(payloads)
    ends = np.cumsum([len(p) for p in payloads])
    starts = ends - [len(p) for p in payloads]
    got = _crc.payload_crcs(buf, starts, ends)
    assert got.tolist() == [_crc32c_python(p) for p in payloads]


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=50), st.integers(0, 2**32 - 1))
def test_length_crcs(lengths: list[int], noise: int) -> None:
    arr = np.array(lengths, np.uint32)
    stored = np.array([masked_crc32c(n.to_bytes(8, "little")) for n in lengths], np.uint32)
    accepted = arr <= MAX_RECORD_LENGTH
    assert (_crc.length_crc_ok(arr, stored) == accepted).all()
    wrong = stored ^ np.uint32(noise or 1)
    assert not _crc.length_crc_ok(arr, wrong).any()
