"""The reader's :class:`~npsummary.reader.FileSystem` for URLs, through fsspec, and the
:class:`~.store.ObjectStore` of an async fsspec filesystem (s3fs, gcsfs, adlfs, ...).

A logdir given as a URL (``s3://``, ``gs://``, ``az://``, ``memory://``, ``file://``, chained
``a::b://``) is read through the fsspec filesystem that :mod:`npsummary._sinks.location` resolves
for it, with the same clear ``ImportError`` naming the package a protocol needs. Paths stay URLs,
so run names, file names and their order are exactly those of a local logdir (the segment files of
a remote run sort in write order by name). Files are opened without fsspec's read cache, so each
read of the reader (a chunk of 8 MiB) is one ranged request for exactly those bytes: a large object
is never fetched whole where the store serves byte ranges, and no more than one chunk of it is held
at a time.

One instance serves one read: a directory's listing is fetched once (fresh, not from fsspec's
listing cache, so a live run's new files show up) and answers ``isdir``/``size`` for its entries
without another request per file.

On an async filesystem a sweep is listed by one recursive ``find`` (s3fs: ``ListObjectsV2``
without delimiter, 1,000 keys a page) and its objects fetched by ``_cat_file`` coroutines on the
filesystem's own event loop, many at once (fsspec's batch ``cat`` without its wait for a whole
batch). s3fs keeps 10 connections unless told otherwise, so the filesystem read through has a
pool as large as the concurrency asked for. A synchronous filesystem (``memory://``, local
``file://``, ...) has no store: it is walked and read one file at a time, as before.
"""

from __future__ import annotations

import asyncio
import inspect
from concurrent.futures import Future
from typing import Any, BinaryIO

from ..._sinks.location import protocols_of, resolve_url
from .options import FetchOptions
from .retry import await_with_retries, call_with_retries

__all__ = ["AsyncFsspecStore", "FsspecFileSystem"]

#: fsspec's block size for the opened files (reads are not cached, so it bounds nothing here).
BLOCK_SIZE = 4 << 20


class FsspecFileSystem:
    """The URLs under ``root`` (a URL), served by the fsspec filesystem that ``root`` names.

    Raises:
        ImportError: fsspec, or the package for the URL's protocol, is not installed.
        ValueError: fsspec knows no filesystem for the URL's protocol.
    """

    def __init__(self, root: str) -> None:
        self._root = root.rstrip("/") or root
        self._fs, self._root_path = resolve_url(self._root)
        self._entries: dict[str, dict[str, Any]] = {}  # fs path -> ls() info

    def _path(self, url: str) -> str:
        """The filesystem's own path for ``url`` (a URL under the root)."""
        url = url.rstrip("/") or url
        if url == self._root:
            return self._root_path
        if url.startswith(self._root + "/"):
            return self._root_path + url[len(self._root) :]
        return str(self._fs._strip_protocol(url)).rstrip("/")

    def _info(self, url: str) -> dict[str, Any]:
        path = self._path(url)
        info = self._entries.get(path)
        if info is None:
            info = self._fs.info(path)
            self._entries[path] = info
        return info

    def open(self, path: str) -> BinaryIO:
        fs = self._fs
        try:
            f = fs.open(self._path(path), "rb", block_size=BLOCK_SIZE, cache_type="none")
        except TypeError:  # an implementation without the buffered-file keywords
            f = fs.open(self._path(path), "rb")
        result: BinaryIO = f
        return result

    def listdir(self, path: str) -> list[str]:
        directory = self._path(path)
        self._fs.invalidate_cache(directory)
        names: list[str] = []
        for info in self._fs.ls(directory, detail=True):
            full = str(info["name"]).rstrip("/")
            name = full.rsplit("/", 1)[-1]
            if not name or full == directory:
                continue  # some stores list the directory's own marker object
            self._entries[f"{directory}/{name}"] = info
            names.append(name)
        return names

    def isdir(self, path: str) -> bool:
        try:
            return self._info(path).get("type") == "directory"
        except FileNotFoundError:
            return False

    def size(self, path: str) -> int:
        info = self._info(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(21, "is a directory", path)
        return int(info.get("size") or 0)

    def join(self, *parts: str) -> str:
        return "/".join(p.rstrip("/") for p in parts[:-1]) + "/" + parts[-1].lstrip("/")

    def object_store(self, path: str, options: FetchOptions) -> AsyncFsspecStore | None:
        """The objects under ``path`` as a store fetched concurrently, or None for a
        synchronous filesystem."""
        fs = self._fs
        if not getattr(fs, "async_impl", False) or not hasattr(fs, "_cat_file"):
            return None
        return AsyncFsspecStore(
            _with_pool(fs, options.concurrency), path, self._path(path), options
        )


def _with_pool(fs: Any, connections: int) -> Any:
    """``fs``, or for s3fs with a smaller connection pool the same filesystem with
    ``connections`` of them (fsspec caches the instance, so its connections are kept)."""
    config = getattr(fs, "config_kwargs", None)
    if "s3" not in protocols_of(fs) or not isinstance(config, dict):
        return fs
    if int(config.get("max_pool_connections") or 10) >= connections:
        return fs
    options = dict(getattr(fs, "storage_options", {}))
    options["config_kwargs"] = {**config, "max_pool_connections": connections}
    try:
        return type(fs)(**options)
    except Exception:  # an s3fs that takes other arguments: its own pool it is
        return fs


class AsyncFsspecStore:
    """The objects under ``url`` (``path`` on the async filesystem ``fs``)."""

    def __init__(self, fs: Any, url: str, path: str, options: FetchOptions) -> None:
        self._fs = fs
        self._url = url.rstrip("/") or url
        self._path = path
        self._options = options
        self._cat_kwargs: dict[str, Any] = {}
        try:
            if "max_concurrency" in inspect.signature(fs._cat_file).parameters:
                # s3fs: one GET for the whole object, without a HEAD for its size first
                self._cat_kwargs["max_concurrency"] = 1
        except (TypeError, ValueError):
            pass

    def _url_of(self, path: str) -> str:
        path = path.rstrip("/")
        if path == self._path:
            return self._url
        if path.startswith(self._path + "/"):
            return self._url + path[len(self._path) :]
        return str(self._fs.unstrip_protocol(path))

    def _path_of(self, url: str) -> str:
        if url == self._url:
            return self._path
        if url.startswith(self._url + "/"):
            return self._path + url[len(self._url) :]
        return str(self._fs._strip_protocol(url))

    def list_tree(self) -> list[tuple[str, int]]:
        fs = self._fs
        fs.invalidate_cache(self._path)
        found = call_with_retries(
            lambda: fs.find(self._path, detail=True), self._url, self._options
        )
        out: list[tuple[str, int]] = []
        for name, info in found.items():
            if info.get("type") == "directory" or str(name).endswith("/"):
                continue
            out.append((self._url_of(str(name)), int(info.get("size") or 0)))
        return out

    def fetch(self, url: str) -> Future[bytes]:
        fs, path, kwargs = self._fs, self._path_of(url), self._cat_kwargs

        async def whole() -> bytes:
            return bytes(await fs._cat_file(path, **kwargs))

        coroutine = await_with_retries(whole, url, self._options)
        return asyncio.run_coroutine_threadsafe(coroutine, fs.loop)

    def close(self) -> None:
        return  # the filesystem's loop is fsspec's, shared; nothing of ours runs there after
