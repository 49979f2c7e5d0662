"""The reader's only contact with storage: a tiny filesystem interface.

Everything the reader does to storage goes through :class:`FileSystem` (a read's runs and files
come from :func:`npsummary.reader._storage.sweep.open_sweep`), so a remote filesystem
(for example an ``fsspec`` adapter) can be plugged in by implementing these five methods and
registering it with :func:`register_filesystem`. The local implementation is the default; a
path that is a URL (``s3://``, ``memory://``, ``file://`` ...) is served through fsspec, imported
only then (an ``s3://`` URL through boto3 where s3fs is missing and boto3 is installed, as the
writers do).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import BinaryIO, Protocol

__all__ = ["FileSystem", "LocalFileSystem", "filesystem_for", "register_filesystem"]


class FileSystem(Protocol):
    """What the reader needs from storage. Paths are strings in the filesystem's own syntax."""

    def open(self, path: str) -> BinaryIO:
        """Open ``path`` for binary reading."""
        ...

    def listdir(self, path: str) -> list[str]:
        """Names (not paths) of the entries of directory ``path``."""
        ...

    def isdir(self, path: str) -> bool:
        """Whether ``path`` is a directory."""
        ...

    def size(self, path: str) -> int:
        """Size of file ``path`` in bytes."""
        ...

    def join(self, *parts: str) -> str:
        """Join path components."""
        ...


# Without blocking (see LocalFileSystem), in binary mode on Windows.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


class LocalFileSystem:
    """The local disk, through the ``os`` module.

    Files are opened without blocking (a FIFO with no writer would otherwise hang the read; the
    reader never reads past a file's size, so it reads nothing from one), and only regular
    files are event files (``isfile``), so devices, FIFOs and sockets named like event
    files are passed over."""

    def open(self, path: str) -> BinaryIO:
        return os.fdopen(os.open(path, _READ_FLAGS), "rb")

    def read_range(self, path: str, start: int, size: int) -> bytes:
        """Up to ``size`` bytes of ``path`` from byte ``start`` (fewer only at its end), read
        by position: no buffered file object is made for what is often a few KiB."""
        if not hasattr(os, "pread"):  # Windows: through a file object
            with self.open(path) as f:
                f.seek(start)
                return f.read(size)
        fd = os.open(path, _READ_FLAGS)
        try:
            parts = []
            while size > 0 and (part := os.pread(fd, size, start)):
                parts.append(part)
                start += len(part)
                size -= len(part)
            return b"".join(parts)  # one part is returned as it is, not copied
        finally:
            os.close(fd)

    def isfile(self, path: str) -> bool:
        return os.path.isfile(path)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def entries(self, path: str) -> list[tuple[str, bool, bool, bool]]:
        """``(name, isdir, islink, isfile)`` of each entry of directory ``path``, as the four
        methods of those names would answer (links followed), from one ``scandir``: the
        directory's entry types come with the listing, so only links cost a ``stat``."""
        with os.scandir(path) as listing:
            return [_entry(e) for e in listing]

    def isdir(self, path: str) -> bool:
        return os.path.isdir(path)

    def size(self, path: str) -> int:
        return os.path.getsize(path)

    def join(self, *parts: str) -> str:
        return os.path.join(*parts)

    def identity(self, path: str) -> tuple[int, int]:
        """The directory's device and inode: equal for every link to it."""
        st = os.stat(path)
        return st.st_dev, st.st_ino

    def islink(self, path: str) -> bool:
        return os.path.islink(path)


def _entry(entry: os.DirEntry[str]) -> tuple[str, bool, bool, bool]:
    """A scandir entry's answers; a link whose target cannot be followed (a loop, no permission)
    is neither a directory nor a file, as ``os.path.isdir`` and ``isfile`` say."""
    try:
        return entry.name, entry.is_dir(), entry.is_symlink(), entry.is_file()
    except OSError:
        return entry.name, False, False, False


_LOCAL = LocalFileSystem()
_REGISTRY: list[tuple[Callable[[str], bool], FileSystem]] = []


def register_filesystem(matches: Callable[[str], bool], fs: FileSystem) -> None:
    """Use ``fs`` for every path for which ``matches(path)`` is true (latest registration wins)."""
    _REGISTRY.insert(0, (matches, fs))


def filesystem_for(path: str) -> FileSystem:
    """The filesystem that serves ``path``: a registered one, fsspec for a URL, else the local disk.

    Raises:
        ImportError: ``path`` is a URL and fsspec or its protocol's package is not installed
            (for ``s3://``: neither s3fs nor boto3).
    """
    for matches, fs in _REGISTRY:
        if matches(path):
            return fs
    from .._common.urls import is_url

    if is_url(path):
        from .._sinks.location import through_boto3

        if through_boto3(path):  # s3:// without s3fs, as npsummary wrote it
            from ._storage.boto_store import BotoS3FileSystem

            return BotoS3FileSystem(path)
        from ._storage.fsspec_store import FsspecFileSystem

        return FsspecFileSystem(path)
    return _LOCAL
