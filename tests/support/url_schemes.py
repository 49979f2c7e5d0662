"""One logdir per URL scheme npsummary writes, each with a way to list what landed in it.

``logdir_in(scheme, base)`` (a context manager, no pytest needed: the Keras child process uses
it too) gives a :class:`Logdir` whose ``files()`` maps each file's path relative to the logdir to
its bytes, read from the logdir's own filesystem:

* ``path``: a relative path (the caller's working directory is where it lands);
* ``file``: a ``file://`` URL of a folder under ``base``;
* ``memory``: fsspec's ``memory://``;
* ``s3``: ``s3://`` through npsummary's boto3 path, on the in-memory store of ``fakes3``
  (s3fs and boto3 need not be installed);
* ``gs``: ``gs://`` through fsspec, on an in-memory filesystem registered for ``gs`` while the
  context lasts (gcsfs need not be installed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCHEMES = ("path", "file", "memory", "s3", "gs")
BUCKET = "integrations-bucket"


@dataclasses.dataclass
class Logdir:
    url: str
    files: Callable[[], dict[str, bytes]]


def _local_files(root: Path) -> dict[str, bytes]:
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _fs_files(fs: Any, path: str) -> dict[str, bytes]:
    path = path.rstrip("/")
    if not fs.exists(path):
        return {}
    return {p[len(path) + 1 :]: bytes(fs.cat_file(p)) for p in fs.find(path)}


@contextlib.contextmanager
def _patched(owner: Any, name: str, value: Any) -> Iterator[None]:
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def _memory_gs() -> Any:
    from fsspec.implementations.memory import MemoryFileSystem

    class MemoryGS(MemoryFileSystem):  # type: ignore[misc]
        """``gs://`` kept in memory; its own store, apart from ``memory://``'s."""

        protocol = ("gs", "gcs")
        store: dict[str, Any] = {}  # noqa: RUF012  (fsspec's own class-level convention)
        pseudo_dirs = [""]  # noqa: RUF012

        @classmethod
        def _strip_protocol(cls, path: Any) -> Any:
            text = str(path)
            for prefix in ("gs://", "gcs://"):
                if text.startswith(prefix):
                    text = text[len(prefix) :]
            return "/" + text.strip("/") if text.strip("/") else ""

    return MemoryGS


@contextlib.contextmanager
def logdir_in(scheme: str, base: Path, name: str = "run") -> Iterator[Logdir]:
    """A logdir of ``scheme`` (one of :data:`SCHEMES`) named ``name``; see the module docstring."""
    unique = uuid.uuid4().hex
    if scheme == "path":
        root = Path(os.getcwd()) / "logs" / name
        yield Logdir(os.path.join("logs", name), lambda: _local_files(root))
    elif scheme == "file":
        root = base / "file_store" / unique / name
        yield Logdir(root.as_uri(), lambda: _local_files(root))
    elif scheme == "memory":
        import fsspec

        fs = fsspec.filesystem("memory")
        yield Logdir(
            f"memory://bucket/{unique}/{name}", lambda: _fs_files(fs, f"/bucket/{unique}/{name}")
        )
    elif scheme == "s3":
        from fakes3 import FakeS3
        from npsummary._sinks import boto_s3, location

        store = FakeS3(BUCKET)
        prefix = f"{unique}/{name}/"

        def s3_files() -> dict[str, bytes]:
            objects = store.buckets[BUCKET]
            return {k[len(prefix) :]: v for k, v in objects.items() if k.startswith(prefix)}

        with (
            _patched(boto_s3, "connect", lambda pool=None: store),  # the writer's and reader's
            _patched(location, "_importable", lambda module: module == "boto3"),
        ):
            yield Logdir(f"s3://{BUCKET}/{unique}/{name}", s3_files)
    elif scheme == "gs":
        import fsspec
        from fsspec.registry import _registry

        gs = _memory_gs()
        saved = {p: _registry.get(p) for p in ("gs", "gcs")}
        for protocol in saved:
            fsspec.register_implementation(protocol, gs, clobber=True)
        fs = gs()
        try:
            yield Logdir(
                f"gs://bucket/{unique}/{name}", lambda: _fs_files(fs, f"/bucket/{unique}/{name}")
            )
        finally:
            for protocol, previous in saved.items():
                if previous is None:
                    _registry.pop(protocol, None)
                else:
                    _registry[protocol] = previous
            gs.store.clear()
            gs.clear_instance_cache()
    else:
        raise ValueError(f"unknown scheme {scheme!r}")


def stray_files(cwd: Path, scheme: str) -> list[str]:
    """Everything under ``cwd`` that is not the ``path`` scheme's ``logs/`` folder."""
    allowed = {"logs"} if scheme == "path" else set()
    return sorted(
        p.relative_to(cwd).as_posix()
        for p in cwd.rglob("*")
        if p.relative_to(cwd).parts[0] not in allowed
    )
