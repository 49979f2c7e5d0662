"""PrefetchedFiles on a store whose fetches the test completes by hand: files come in reading
order, no more than ``concurrency`` requests and ``max_bytes_in_flight`` bytes are ever out, a
failed fetch fails only the file it names, large files are streamed, and a file asked for out of
order is still served."""

from __future__ import annotations

import io
from concurrent.futures import Future
from typing import BinaryIO

import pytest

from npsummary.reader._storage.options import FetchOptions
from npsummary.reader._storage.prefetch import PrefetchedFiles


class HandStore:
    """An ObjectStore whose fetches stay in flight until ``finish`` completes them (or at once,
    ``eager``)."""

    def __init__(
        self, objects: dict[str, bytes], failing: frozenset[str] = frozenset(), eager: bool = False
    ) -> None:
        self.objects = objects
        self.eager = eager
        self.failing = failing
        self.out: dict[str, Future[bytes]] = {}
        self.started: list[str] = []
        self.most = 0
        self.closed = False

    def list_tree(self) -> list[tuple[str, int]]:
        return [(url, len(data)) for url, data in self.objects.items()]

    def fetch(self, url: str) -> Future[bytes]:
        future: Future[bytes] = Future()
        self.started.append(url)
        self.out[url] = future
        self.most = max(self.most, len(self.out))
        if self.eager:
            self.finish(url)
        return future

    def finish(self, url: str) -> None:
        future = self.out.pop(url)
        if url in self.failing:
            future.set_exception(OSError(5, f"{url}: injected"))
        else:
            future.set_result(self.objects[url])

    def finish_all(self) -> None:
        while self.out:
            self.finish(next(iter(self.out)))

    def close(self) -> None:
        self.closed = True


class Streamed:
    """The underlying filesystem: only for what is not fetched ahead."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects = objects
        self.opened: list[str] = []

    def open(self, path: str) -> BinaryIO:
        self.opened.append(path)
        return io.BytesIO(self.objects[path])

    def size(self, path: str) -> int:
        return len(self.objects[path])

    def listdir(self, path: str) -> list[str]:
        return []

    def isdir(self, path: str) -> bool:
        return False

    def join(self, *parts: str) -> str:
        return "/".join(parts)


def _objects(n: int, size: int = 10) -> dict[str, bytes]:
    return {f"s3://b/run{i:03d}/f": bytes([i]) * size for i in range(n)}


def _files(objects: dict[str, bytes]) -> list[tuple[str, int]]:
    return [(url, len(data)) for url, data in objects.items()]


def test_files_in_order_with_at_most_concurrency_in_flight() -> None:
    objects = _objects(20)
    store = HandStore(objects)
    files = PrefetchedFiles(
        Streamed(objects), store, _files(objects), FetchOptions(concurrency=4), "s3://b"
    )
    assert store.started == list(objects)[:4]
    store.finish(list(objects)[1])  # a later one completes first: the window moves on
    assert len(store.started) == 5 and len(store.out) == 4
    for url, data in objects.items():
        store.finish_all()
        with files.open(url) as f:
            assert f.read() == data
    assert store.started == list(objects) and store.most == 4


def test_bytes_fetched_ahead_are_bounded() -> None:
    objects = _objects(30, size=100)
    store = HandStore(objects)
    options = FetchOptions(concurrency=32, max_bytes_in_flight=350)
    files = PrefetchedFiles(Streamed(objects), store, _files(objects), options, "s3://b")
    assert len(store.started) == 3  # 300 bytes; a fourth would pass 350
    store.finish_all()
    assert len(store.started) == 3  # done but not read: still held
    for url, data in objects.items():
        assert files.open(url).read() == data
        store.finish_all()
        assert len(store.started) - list(objects).index(url) - 1 <= 3
    one = PrefetchedFiles(
        Streamed(objects),
        HandStore(objects),
        _files(objects),
        FetchOptions(max_bytes_in_flight=1),
        "s3://b",
    )
    assert len(one._store.started) == 1  # type: ignore[attr-defined]  # one is always admitted


def test_a_failed_fetch_fails_its_file_only() -> None:
    objects = _objects(5)
    bad = list(objects)[2]
    store = HandStore(objects, failing=frozenset({bad}))
    files = PrefetchedFiles(Streamed(objects), store, _files(objects), FetchOptions(), "s3://b")
    store.finish_all()
    for url, data in objects.items():
        if url == bad:
            with pytest.raises(OSError, match="run002"):
                files.open(url)
        else:
            assert files.open(url).read() == data


def test_large_files_are_streamed_and_out_of_order_files_served() -> None:
    objects = _objects(6)
    large = "s3://b/run002/f"
    objects[large] = b"L" * 50
    store = HandStore(objects, eager=True)
    fs = Streamed(objects)
    options = FetchOptions(concurrency=2, whole_object_max=20)
    files = PrefetchedFiles(fs, store, _files(objects), options, "s3://b")
    assert large not in store.started and fs.opened == []
    last = list(objects)[-1]
    assert files.open(last).read() == objects[last]  # before its turn: fetched on its own
    for url, data in objects.items():
        if url != last:
            assert files.open(url).read() == data
    assert fs.opened == [large]  # streamed through the filesystem, never fetched whole
    assert sorted(store.started) == sorted(u for u in objects if u != large)
    assert files.size(large) == 50 and not files.isdir(large)


def test_close_cancels_what_is_ahead() -> None:
    objects = _objects(8)
    store = HandStore(objects)
    files = PrefetchedFiles(
        Streamed(objects), store, _files(objects), FetchOptions(concurrency=3), "s3://b"
    )
    pending = list(store.out.values())
    files.close()
    assert store.closed and all(f.cancelled() for f in pending)
    assert len(store.started) == 3


def test_pickled_it_is_the_plain_filesystem_of_its_root() -> None:
    """A worker process gets a filesystem of its own, not the fetches of this one."""
    import pickle

    pytest.importorskip("fsspec")
    from npsummary.reader._storage.fsspec_store import FsspecFileSystem

    objects = _objects(3)
    files = PrefetchedFiles(
        Streamed(objects), HandStore(objects), _files(objects), FetchOptions(), "memory://b/x"
    )
    assert isinstance(pickle.loads(pickle.dumps(files)), FsspecFileSystem)
