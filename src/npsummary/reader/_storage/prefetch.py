"""A sweep's files served from concurrent fetches: the reader's :class:`FileSystem` over an
:class:`~.store.ObjectStore`, for one read.

The files are fetched in the order the reader reads them, through a window that keeps up to
``concurrency`` requests in flight and at most ``max_bytes_in_flight`` bytes fetched ahead of the
reader (an object is always admitted when nothing is held, so a large one cannot stall the read).
The window is topped up as fetches complete and as the reader takes files, so fetching overlaps
decoding. ``open`` hands out a file's bytes whole; a file larger than ``whole_object_max`` is not
fetched ahead but streamed through the underlying filesystem when its turn comes (ranged reads,
one chunk held). A file asked for out of order is fetched on its own; anything else (listing,
sizes of unlisted paths) goes to the underlying filesystem. A fetch that failed raises its error,
naming the object, when the reader opens that file.

Fetches in flight belong to this process: pickled (for a worker process), the object becomes the
plain filesystem of its root, which reads one file at a time.
"""

from __future__ import annotations

import io
import threading
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any, BinaryIO

from .._io import FileSystem, filesystem_for
from .options import FetchOptions
from .store import ObjectStore

__all__ = ["PrefetchedFiles"]


class PrefetchedFiles:
    """``files`` (``(URL, size)`` in reading order) of ``store``, fetched ahead; ``fs`` (the
    filesystem of ``root``) for the rest. ``listed`` gives the sizes of other objects too (the
    listing's), so that asking them costs no request."""

    def __init__(
        self,
        fs: FileSystem,
        store: ObjectStore,
        files: Sequence[tuple[str, int]],
        options: FetchOptions,
        root: str,
        listed: Mapping[str, int] | None = None,
    ) -> None:
        self._fs = fs
        self._root = root
        self._store = store
        self._options = options
        self._sizes = dict(files)
        self._listed = {**(listed or {}), **self._sizes}
        self._order = [(url, size) for url, size in files if size <= options.whole_object_max]
        self._next = 0  # index in _order of the next file to fetch
        self._started: set[str] = set()
        self._held: dict[str, Future[bytes]] = {}  # fetched or in flight, not yet opened
        self._held_bytes = 0
        self._in_flight = 0
        self._lock = threading.RLock()
        self._topping = False
        self._closed = False
        self._finalizer = weakref.finalize(self, _cancel, self._held, store)
        self._top_up()

    def _top_up(self) -> None:
        with self._lock:
            if self._topping or self._closed:
                return  # a completion callback run by a fetch started below
            self._topping = True
            try:
                self._admit()
            finally:
                self._topping = False

    def _admit(self) -> None:
        options = self._options
        while self._next < len(self._order) and self._in_flight < options.concurrency:
            url, size = self._order[self._next]
            if url in self._started:
                self._next += 1
                continue
            if self._held and self._held_bytes + size > options.max_bytes_in_flight:
                return
            self._next += 1
            self._started.add(url)
            self._in_flight += 1
            self._held_bytes += size
            future = self._store.fetch(url)
            self._held[url] = future
            future.add_done_callback(self._done)

    def _done(self, future: Future[bytes]) -> None:
        with self._lock:
            self._in_flight -= 1
        self._top_up()

    def open(self, path: str) -> BinaryIO:
        with self._lock:
            future = self._held.pop(path, None)
            if future is not None:
                self._held_bytes -= self._sizes[path]
            elif path in self._sizes and self._sizes[path] <= self._options.whole_object_max:
                self._started.add(path)  # out of order: fetched now, on its own
                future = self._store.fetch(path)
        if future is None:
            return self._fs.open(path)
        try:
            data = future.result()
        finally:
            self._top_up()  # once the file is in hand: it no longer counts as ahead
        return io.BytesIO(data)

    def size(self, path: str) -> int:
        size = self._listed.get(path)
        return self._fs.size(path) if size is None else size

    def listdir(self, path: str) -> list[str]:
        return self._fs.listdir(path)

    def isdir(self, path: str) -> bool:
        return path not in self._listed and self._fs.isdir(path)

    def join(self, *parts: str) -> str:
        return self._fs.join(*parts)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return filesystem_for, (self._root,)

    def close(self) -> None:
        """Cancel the fetches ahead (the reader stopped early); the store's threads go."""
        with self._lock:
            self._closed = True
        self._finalizer()


def _cancel(held: dict[str, Future[bytes]], store: ObjectStore) -> None:
    for future in list(held.values()):
        future.cancel()
    held.clear()
    store.close()
