"""Output files created safely: never through a link, never half-written.

A file is written into a new temporary file in the target's own folder, created with
``O_CREAT | O_EXCL | O_NOFOLLOW`` (so neither a link nor an existing file is ever opened), then
flushed, synced and renamed over the target in one atomic step. A link at the target's name is
replaced by the new file, its target left untouched; a failure at any point removes the
temporary file and leaves the previous file as it was. On POSIX the folder is opened once and
every step works relative to it, so renaming or relinking the folder's path meanwhile cannot
redirect the write elsewhere.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from contextlib import suppress
from typing import BinaryIO

__all__ = ["write_atomically"]

_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_DIR_FD = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd


def write_atomically(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> None:
    """Create or replace the file ``path`` with what ``write`` writes to a binary stream.

    Raises:
        ValueError: ``path`` names no file (it ends with a separator, ``.`` or ``..``).
        OSError: the folder does not exist or is not writable, or the target is a directory;
            the previous file, if any, is intact.
    """
    directory, name = os.path.split(os.fspath(path))
    if name in ("", ".", ".."):
        raise ValueError(f"output path {os.fspath(path)!r} does not name a file")
    directory = directory or "."
    if not _DIR_FD:
        _write(directory, name, write, None)
        return
    folder = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        _write(directory, name, write, folder)
    finally:
        os.close(folder)


def _write(
    directory: str, name: str, write: Callable[[BinaryIO], None], folder: int | None
) -> None:
    def at(entry: str) -> str:
        return entry if folder is not None else os.path.join(directory, entry)

    for _ in range(100):
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(at(temp), _FLAGS, 0o666, dir_fd=folder)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 48 random bits
        raise FileExistsError(f"cannot create a temporary file in {directory}")
    try:
        with os.fdopen(fd, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.rename(at(temp), at(name), src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with suppress(OSError):
            os.unlink(at(temp), dir_fd=folder)
        raise
    if folder is not None:
        with suppress(OSError):
            os.fsync(folder)
