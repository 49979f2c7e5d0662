"""The projector's files on disk: the thin I/O layer under ``add_embedding``.

Every file is written to a temporary name in its directory and renamed into place, so a reader
(or a crash) never sees half a file; ``projector_config.pbtxt`` is re-read and extended, so
embeddings logged earlier, by this writer or another, are kept.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable

__all__ = ["CONFIG_NAME", "append_config", "write_file"]

CONFIG_NAME = "projector_config.pbtxt"


def write_file(path: str, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` atomically (temporary file + rename)."""
    directory = os.path.dirname(path) or "."
    fd, temporary = tempfile.mkstemp(prefix=".tmp-", dir=directory)
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
