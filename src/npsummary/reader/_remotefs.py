"""The reader's :class:`~npsummary.reader.FileSystem` for URLs, through fsspec.

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
"""

from __future__ import annotations

from typing import Any, BinaryIO

from .._sinks.location import _resolve

__all__ = ["FsspecFileSystem"]

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
        self._fs, self._root_path = _resolve(self._root)
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
