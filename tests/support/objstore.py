"""An object store on a local folder, shared by processes: ``objdir:///abs/path``.

Objects are written whole (temporary file + rename: a reader never sees half an object, as on
S3), ``pipe_file(mode="create")`` is an atomic conditional put (a hard link that fails if the name
exists), and there are no directories to make (``makedirs`` is a no-op, as on S3). Tests register
it in every process with :func:`register`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from typing import Any

from fsspec.implementations.local import LocalFileSystem

PROTOCOL = "objdir"


class ObjectDir(LocalFileSystem):  # type: ignore[misc]
    protocol = PROTOCOL
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        path = str(path)
        if path.startswith(f"{PROTOCOL}://"):
            path = path[len(PROTOCOL) + 3 :]
        return super()._strip_protocol(path)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        return None

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        path = self._strip_protocol(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{os.path.dirname(path)}/.put-{secrets.token_hex(8)}"
        with open(temporary, "wb") as handle:
            handle.write(value)
        try:
            if mode == "create":
                os.link(temporary, path)  # FileExistsError if the name is taken
            else:
                os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def ls(self, path: str, detail: bool = False, **kwargs: Any) -> Any:
        entries = super().ls(path, detail=True, **kwargs)
        entries = [e for e in entries if not os.path.basename(e["name"]).startswith(".put-")]
        return entries if detail else [e["name"] for e in entries]


def register() -> None:
    import fsspec

    fsspec.register_implementation(PROTOCOL, ObjectDir, clobber=True)
