"""The projector's files on disk: the thin I/O layer under ``add_embedding``.

Every file is written to a temporary name in its directory and renamed into place, so a reader
(or a crash) never sees half a file; ``projector_config.pbtxt`` is re-read and extended, so
embeddings logged earlier, by this writer or another, are kept.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterable

__all__ = ["CONFIG_NAME", "append_config", "write_file"]

CONFIG_NAME = "projector_config.pbtxt"

# Writers of one process append to a config file one at a time (read, extend, rename).
_CONFIG_LOCK = threading.Lock()


def write_file(path: str, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` atomically (temporary file + rename).

    The temporary file is created with mode 0o666 minus the umask, like any file ``open``
    creates (``tempfile.mkstemp`` would leave it readable by its owner only).
    """
    directory = os.path.dirname(path) or "."
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temporary = os.path.join(directory, f".tmp-{os.getpid()}-{secrets.token_hex(6)}")
        try:
            fd = os.open(temporary, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def append_config(logdir: str, block: str) -> None:
    """Add ``block`` to ``<logdir>/projector_config.pbtxt`` unless it is there already."""
    path = os.path.join(logdir, CONFIG_NAME)
    with _CONFIG_LOCK:
        _append(path, block)


def _append(path: str, block: str) -> None:
    try:
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
    except FileNotFoundError:
        current = ""
    if block in current:
        return
    if current and not current.endswith("\n"):
        current += "\n"
    write_file(path, [(current + block).encode("utf-8")])
