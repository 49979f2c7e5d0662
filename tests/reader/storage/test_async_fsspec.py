"""Any async fsspec filesystem (gcsfs, adlfs, ... here a small in-memory one) is read through
the concurrent path: one recursive ``find``, ``_cat_file`` coroutines many at once on its loop,
retries on its 503s, and what is read equals the walk-and-read path."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")

from fsspec.asyn import AsyncFileSystem  # noqa: E402

from npsummary import reader  # noqa: E402
from npsummary.reader._storage import options as fetch_options  # noqa: E402
from npsummary.reader._storage.fsspec_store import FsspecFileSystem  # noqa: E402
from remote_logdir import assert_same_logdata, copy_local, memory_root, write_logdir  # noqa: E402

pytestmark = pytest.mark.remote


class ServiceUnavailable(Exception):
    """An HTTP library's error carrying the status, as gcsfs's HttpError does."""

    def __init__(self) -> None:
        super().__init__("503 injected")
        self.code = 503


class AsyncMemory(AsyncFileSystem):  # type: ignore[misc]
    """Objects in a dict, answered by coroutines that take a moment (so requests overlap)."""

    protocol = "asyncmem"
    root_marker = ""
    objects: ClassVar[dict[str, bytes]] = {}
    calls: ClassVar[list[str]] = []
    failures: ClassVar[dict[str, int]] = {}
    in_flight = 0
    most = 0

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        return str(path).removeprefix("asyncmem://").rstrip("/")

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        if path in self.objects:
            return {"name": path, "size": len(self.objects[path]), "type": "file"}
        if any(k.startswith(path + "/") for k in self.objects):
            return {"name": path, "size": 0, "type": "directory"}
        raise FileNotFoundError(path)

    async def _ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        path = self._strip_protocol(path)
        self.calls.append("ls")
        names = {
            path + "/" + k[len(path) + 1 :].split("/")[0]
            for k in self.objects
            if k.startswith(path + "/")
        }
        return [await self._info(n) for n in sorted(names)] if detail else sorted(names)

    async def _find(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        self.calls.append("find")
        return {k: await self._info(k) for k in sorted(self.objects) if k.startswith(path + "/")}

    async def _cat_file(self, path: str, start: Any = None, end: Any = None, **kw: Any) -> bytes:
        path = self._strip_protocol(path)
        self.calls.append("cat")
        cls = type(self)
        cls.in_flight += 1
        cls.most = max(cls.most, cls.in_flight)
        try:
            await asyncio.sleep(0.002)  # a round trip, so that requests are out together
            if self.failures.get(path):
                self.failures[path] -= 1
                raise ServiceUnavailable()
            if path not in self.objects:
                raise FileNotFoundError(path)
            return self.objects[path][start:end]
        finally:
            cls.in_flight -= 1


@pytest.fixture
def asyncmem(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    fsspec.register_implementation("asyncmem", AsyncMemory, clobber=True)
    source = memory_root()
    write_logdir(source)
    local = copy_local(source, tmp_path / "copy")
    root = f"asyncmem://logs/{uuid.uuid4().hex}"
    AsyncMemory.objects = {
        f"{root[len('asyncmem://') :]}/{p.relative_to(local).as_posix()}": p.read_bytes()
        for p in local.rglob("*")
        if p.is_file()
    }
    saved = fetch_options.replace(fetch_options.FetchOptions(backoff=0.001))
    yield root, local
    fetch_options.replace(saved)
    AsyncMemory.clear_instance_cache()


def test_an_async_filesystem_is_listed_once_and_fetched_concurrently(
    asyncmem: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, local = asyncmem
    AsyncMemory.calls, AsyncMemory.most = [], 0
    got = reader.load(root, decode=True)
    assert_same_logdata(got, reader.load(local, decode=True))
    event_files = sum(1 for k in AsyncMemory.objects if "tfevents" in k)
    assert AsyncMemory.calls.count("find") == 1 and "ls" not in AsyncMemory.calls
    assert AsyncMemory.calls.count("cat") == event_files and AsyncMemory.most > 1
    first = sorted(k for k in AsyncMemory.objects if "tfevents" in k)[0]
    AsyncMemory.failures = {first: 2}
    AsyncMemory.calls = []
    assert_same_logdata(reader.load(root, decode=True), got)
    assert AsyncMemory.calls.count("cat") == event_files + 2
    AsyncMemory.failures = {first: 99}
    with pytest.raises(OSError, match=f"asyncmem://{first}.*gave up after 5 attempts"):
        reader.load(root)
    AsyncMemory.failures = {}
    monkeypatch.setattr(FsspecFileSystem, "object_store", lambda self, path, options: None)
    assert_same_logdata(reader.load(root, decode=True), got)  # the walk, one file at a time
