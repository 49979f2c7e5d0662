"""Limits: 2 GiB events, 2^31 elements, 10^6 tags; each refused or handled in bounded time.

* Protobuf (and so TensorBoard, and our reader) cannot parse a message of 2 GiB or more, and a
  reader stops at such a record, losing every later one. Any event over the limit is refused up
  front with a ``ValueError`` naming the tag and the size, before any encoding work (issue 13,
  item 5): a tensor in ``npsummary.write``/``v1.tensor_summary`` is refused from its ``nbytes``
  without being read, ``write_raw_pb`` before parsing its parts, and every other event in the
  shared core before it is framed.
* 2^31-element inputs: refused the same way when they cannot fit; a histogram streams over them
  in chunks (heavy variant).
* 10^6 distinct tags: the per-tag byte cache stays bounded (10^5 by default, 10^6 heavy).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest

import npsummary
from _reliability_child import HEAVY, check_event_file, report
from npsummary import MemorySink, SummaryWriter, v1
from npsummary._common.messages import MAX_EVENT_BYTES
from npsummary._core.event_writer import EventWriter

TWO_GIB = 1 << 31


def _size_in(error: BaseException) -> int:
    return int(re.search(r"would be (\d+) bytes", str(error))[1])  # type: ignore[index]


def _untouched_zeros(nbytes: int) -> np.ndarray:
    """``nbytes`` of zeros the OS has not handed out yet (calloc): free unless read."""
    return np.zeros(nbytes, dtype=np.uint8)


@pytest.mark.parametrize("api", ["write", "v1.tensor_summary"])
@pytest.mark.parametrize("nbytes", [TWO_GIB, MAX_EVENT_BYTES + 1], ids=["2GiB", "limit+1"])
def test_tensor_over_2gib_is_refused_before_it_is_read(api: str, nbytes: int) -> None:
    # Refused from its size: were a byte read, these pages would be allocated; were it encoded,
    # it would take seconds and then fail in protobuf's EncodeError.
    tensor = _untouched_zeros(nbytes)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"'huge': the event would be \d+ bytes") as info:
        if api == "write":
            with npsummary.create_file_writer(MemorySink()).as_default(step=1):
                npsummary.write("huge", tensor)
        else:
            v1.tensor_summary("huge", tensor)
    assert _size_in(info.value) >= nbytes
    report(f"limits.tensor_2gib.{api}", seconds=round(time.perf_counter() - start, 3))


def _summary(tag: str, content_bytes: int = 0) -> bytes:
    """A serialized Summary{value{tag, tensor{tensor_content: content_bytes zeros}}}."""
    tensor = b"\x22" + _varint(content_bytes) + bytes(content_bytes)
    value = b"\x0a" + _varint(len(tag)) + tag.encode() + b"\x42" + _varint(len(tensor)) + tensor
    return b"\x0a" + _varint(len(value)) + value


@pytest.mark.parametrize(
    "scale",
    [
        pytest.param(
            "real",
            marks=[
                pytest.mark.heavy,
                pytest.mark.skipif(not HEAVY, reason="set NPSUMMARY_HEAVY=1"),
            ],
        ),
        "scaled",
    ],
)
def test_write_raw_pb_over_2gib_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scale: str
) -> None:
    # Two valid summaries of 1.1 GiB each (the same object twice): their concatenation would be
    # one event over the limit. Before the fix it was written, and the reader lost the rest.
    # "scaled" runs the same with the limit lowered to 1 MiB (3.5 GiB of memory otherwise).
    limit = MAX_EVENT_BYTES
    if scale == "scaled":
        limit = 1 << 20
        monkeypatch.setattr(npsummary._common.messages, "MAX_EVENT_BYTES", limit)
    huge = _summary("huge", int(0.55 * limit))
    writer = npsummary.create_file_writer(str(tmp_path / "run"))
    with writer.as_default(step=1):
        assert npsummary.experimental.write_raw_pb(_summary("before"))
        with pytest.raises(ValueError, match=r"'pair'.*bytes.*2 GiB"):
            npsummary.experimental.write_raw_pb([huge, huge], name="pair")
        del huge
        assert npsummary.experimental.write_raw_pb([_summary("a"), _summary("b")], name="after")
    writer.close()
    (path,) = list((tmp_path / "run").iterdir())
    check = check_event_file(str(path))
    tags = [[v.tag for v in e.summary.value] for e in check.events[1:]]
    assert tags == [["before"], ["a", "b"]]  # nothing in between, nothing lost after


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_the_core_refuses_any_event_over_2gib_naming_its_tag() -> None:
    # Whatever built it: a Summary.Value of 2 GiB (the bytes are never touched).
    value = _untouched_zeros(TWO_GIB + 16).data  # a memoryview of it
    header = b"\x0a\x05giant"
    value_bytes = np.frombuffer(value, dtype=np.uint8)
    value_bytes[: len(header)] = np.frombuffer(header, dtype=np.uint8)
    sink = MemorySink()
    with pytest.raises(ValueError, match=r"'giant': the event would be \d+ bytes") as info:
        EventWriter(sink).write_values([value], 1, 0.0)  # type: ignore[list-item]
    assert _size_in(info.value) >= TWO_GIB + 16
    assert sink.payloads == []


def test_2_to_the_31_elements_are_refused_up_front_when_they_cannot_fit() -> None:
    n = 1 << 31
    tensor = np.broadcast_to(np.float32(1.0), (n,))  # 2^31 elements, 4 bytes of memory
    writer = npsummary.create_file_writer(MemorySink())
    with writer.as_default(step=1), pytest.raises(ValueError, match="'many'"):
        npsummary.write("many", tensor)


@pytest.mark.heavy
@pytest.mark.skipif(not HEAVY, reason="set NPSUMMARY_HEAVY=1")
def test_histogram_of_2_to_the_31_elements_streams() -> None:
    n = 1 << 31
    values = np.broadcast_to(np.float32(0.5), (n,))
    start = time.perf_counter()
    with SummaryWriter(MemorySink()) as w:
        w.add_histogram("many", values, 1)
    report("limits.histogram_2_31", seconds=round(time.perf_counter() - start, 1))


def test_a_million_tags_keep_memory_bounded() -> None:
    n = 10**6 if HEAVY else 10**5
    sink = MemorySink()
    w = SummaryWriter(sink)
    start = time.perf_counter()
    for i in range(n):
        w.add_scalar(f"tag{i}", 1.0, i)
    seconds = time.perf_counter() - start
    assert len(sink.payloads) == n
    cache = w._get_writer().scalars._parts
    assert len(cache) <= 65536
    report("limits.tags", tags=n, seconds=round(seconds, 1))
