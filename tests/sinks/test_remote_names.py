"""Remote segment names (issue 20, items 7 and 16): unique without PIDs, an existing object never
replaced, and fsspec filesystems whose ``protocol`` is a list or a tuple."""

from __future__ import annotations

import importlib
import uuid
from pathlib import Path
from typing import Any, ClassVar

import pytest

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")
from fsspec.implementations.memory import MemoryFileSystem  # noqa: E402

from conftest import raw_records  # noqa: E402
from npsummary import SummaryWriter  # noqa: E402
from npsummary._sinks.segments import SegmentSink  # noqa: E402
from segment_names import colliding_names, same_pid_and_second  # noqa: E402

pytestmark = pytest.mark.remote


class _Store(MemoryFileSystem):  # type: ignore[misc]
    """memory:// with a store of its own per instance."""

    protocol: ClassVar[str | list[str] | tuple[str, ...]] = "namesmem"
    cachable = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store: dict[str, Any] = {}
        self.pseudo_dirs = [""]


class _NoCreateMode(_Store):
    """A filesystem whose ``pipe_file`` predates ``mode="create"``: checked before writing."""

    def pipe_file(self, path: str, value: bytes, **kwargs: Any) -> None:
        assert "mode" not in kwargs
        super().pipe_file(path, value)


class _LostAnswer(_Store):
    """Stores the first upload of every object, then reports a failure (a lost response)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.losing = False
        self.lost: set[str] = set()

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kw: Any) -> None:
        super().pipe_file(path, value, mode=mode, **kw)
        if self.losing and path not in self.lost:
            self.lost.add(path)
            raise ConnectionError("response lost")


def _payloads(fs: _Store, tmp_path: Path) -> dict[str, list[bytes]]:
    out = {}
    for path in sorted(fs.store):
        local = tmp_path / uuid.uuid4().hex
        local.write_bytes(fs.store[path].getvalue())
        out[path] = raw_records(local)[1:]  # file_version header left out
    return out


@pytest.mark.parametrize("store", [_Store, _NoCreateMode])
def test_writers_sharing_pid_and_second_never_overwrite_each_other(
    store: type[_Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    same_pid_and_second(monkeypatch)
    fs = store()
    sinks = [SegmentSink("namesmem://bucket/run", filesystem=fs) for _ in range(3)]
    for i, sink in enumerate(sinks):
        sink.write(f"job-{i}".encode())
        sink.close()
    records = sorted(r for rs in _payloads(fs, tmp_path).values() for r in rs)
    assert records == [b"job-0", b"job-1", b"job-2"]
    assert len(fs.store) == 6  # a header segment and a data segment each


@pytest.mark.parametrize("store", [_Store, _NoCreateMode])
def test_an_existing_object_is_never_replaced(
    store: type[_Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    colliding_names(monkeypatch)
    fs = store()
    first = SegmentSink("namesmem://bucket/run", filesystem=fs)
    first.write(b"first")
    first.flush()
    before = {p: f.getvalue() for p, f in fs.store.items()}
    # The second writer draws the same stem (the worst case): every name it wants is taken.
    second = SegmentSink("namesmem://bucket/run", filesystem=fs)
    second.write(b"second")
    second.close()
    first.close()
    assert {p: fs.store[p].getvalue() for p in before} == before, "an object was replaced"
    records = [r for rs in _payloads(fs, tmp_path).values() for r in rs]
    assert sorted(records) == [b"first", b"second"]


def test_a_retry_after_a_lost_answer_finds_its_own_object(tmp_path: Path) -> None:
    fs = _LostAnswer()
    sink = SegmentSink("namesmem://bucket/run", filesystem=fs, flush_secs=3600)
    fs.losing = True
    sink.write(b"once")
    with pytest.raises(Exception, match="response lost"):
        sink.flush()
    sink.flush()  # the retry: the object holds our bytes, so it counts as uploaded
    sink.close()
    records = [r for rs in _payloads(fs, tmp_path).values() for r in rs]
    assert records == [b"once"]


class _ListProtocol(_Store):
    protocol: ClassVar[list[str]] = ["listmem", "listmem-alias"]  # older s3fs: a list


class _TupleProtocol(_Store):
    protocol = ("tuplemem", "tuplemem-alias")


@pytest.mark.parametrize("store", [_ListProtocol, _TupleProtocol])
def test_a_protocol_given_as_a_list_or_tuple_works(store: type[_Store], tmp_path: Path) -> None:
    fs = store()
    sink = SegmentSink("listmem://bucket/run", filesystem=fs)
    sink.write(b"payload")
    sink.close()
    assert [r for rs in _payloads(fs, tmp_path).values() for r in rs] == [b"payload"]
    name = store.protocol[0]
    fsspec.register_implementation(name, store, clobber=True)
    try:
        with SummaryWriter(f"{name}://bucket/{uuid.uuid4().hex}") as writer:
            writer.add_scalar("loss", 1.0, 0)
            writer.add_scalars("acc", {"a": 1.0}, 0)
    finally:
        importlib.import_module("fsspec.registry")._registry.pop(name, None)
