"""A run directory behind a URL: the fsspec filesystem it resolves to, and where its files go.

fsspec is imported only when such a URL is opened; a missing protocol package is named in the
``ImportError``. Which strings are URLs is :func:`npsummary._common.urls.is_url`; which sink a URL
gets is :func:`npsummary._sinks.open_url.open_url_sink`.

:func:`open_location` is the one place that picks how a URL is written: through fsspec, except an
``s3://`` URL where s3fs is not importable but boto3 is, which goes through boto3
(:class:`~npsummary._sinks.boto_s3.S3Location`), as tensorboardX and TensorBoard write S3. Both
store the same objects under the same names; :class:`RunDirectory` is what the segment sink and
the projector's files use of either.
"""

from __future__ import annotations

import errno
import importlib
import inspect
from typing import Any, Protocol

__all__ = [
    "Location",
    "RunDirectory",
    "open_location",
    "protocols_of",
    "resolve_url",
    "through_boto3",
]


class RunDirectory(Protocol):
    """A run directory on an object store (or a filesystem), as the remote sinks use it."""

    url: str

    def child(self, name: str) -> RunDirectory: ...
    def url_of(self, name: str) -> str: ...
    def replace(self, name: str, data: bytes) -> None: ...
    def read(self, name: str) -> bytes | None: ...
    def names(self) -> list[str]: ...
    def put(self, name: str, data: bytes) -> None: ...
    def reset_after_fork(self) -> None: ...


def open_location(url: str, filesystem: Any = None) -> RunDirectory:
    """The run directory ``url`` names: on ``filesystem`` if given, else through fsspec, or
    through boto3 for an ``s3://`` URL where s3fs is missing and boto3 is installed.

    Raises:
      ImportError: neither way is installed (the packages to install are named).
      ValueError: the URL is malformed or fsspec knows no filesystem for its protocol.
    """
    if filesystem is None and through_boto3(url):
        from .boto_s3 import S3Location

        return S3Location(url)
    return Location(url, filesystem, given=filesystem is not None)


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def through_boto3(url: str) -> bool:
    """Whether ``url`` is written through boto3: a plain ``s3://`` URL (not chained), s3fs
    missing (or unusable) and boto3 installed."""
    if url.partition("://")[0].lower() != "s3" or _importable("s3fs"):
        return False
    if not _importable("boto3"):
        raise ImportError(
            f"logdir {url!r} is on S3 and needs s3fs (pip install s3fs) or boto3 "
            "(pip install boto3)"
        )
    return True


#: Filesystems without directories: writing an object creates its "folder".
_OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"})


def resolve_url(url: str) -> tuple[Any, str]:
    """``(filesystem, path)`` for ``url``; a clear ImportError names the package to install."""
    protocol = url.partition("://")[0].split("::")[-1].lower()
    try:
        import fsspec
        from fsspec.registry import known_implementations
    except ImportError as exc:
        raise ImportError(
            f"logdir {url!r} is a URL; remote logdirs need fsspec: pip install fsspec"
        ) from exc
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as exc:
        known = known_implementations.get(protocol, {})
        package = str(known.get("class", "")).split(".")[0] or "its fsspec implementation"
        if package == "fsspec":
            package = "the dependencies named below"
        raise ImportError(
            f"logdir {url!r}: the {protocol}:// protocol needs {package} "
            f"(pip install {package}); fsspec says: {exc}"
        ) from exc
    except ValueError as exc:
        raise ValueError(f"logdir {url!r}: no fsspec filesystem for {protocol}://: {exc}") from exc
    return fs, str(path).rstrip("/")


def protocols_of(fs: Any) -> tuple[str, ...]:
    """The protocol names of an fsspec filesystem: ``protocol`` is a str, a tuple, or (in older
    s3fs releases) a list."""
    protocol = fs.protocol
    if isinstance(protocol, str):
        return (protocol,)
    return tuple(str(p) for p in protocol)


def _can_create_exclusively(fs: Any) -> bool:
    """Whether ``fs.pipe_file`` takes ``mode="create"`` (fsspec 2024.12 and later: an atomic
    conditional put where the store offers one, e.g. S3's If-None-Match)."""
    try:
        return "mode" in inspect.signature(fs.pipe_file).parameters
    except (TypeError, ValueError):
        return False


class Location:
    """A run directory on an fsspec filesystem: the one ``url`` names (resolved again in a forked
    child, whose parent's connections are not its own), or ``fs`` as given."""

    def __init__(self, url: str, fs: Any = None, path: str = "", *, given: bool = False) -> None:
        self.url = url.rstrip("/")
        self._given = given or (fs is not None and not path)
        if fs is None:
            fs, path = resolve_url(self.url)
        elif not path:
            path = str(fs._strip_protocol(self.url)).rstrip("/")
        self._fs: Any = fs
        self._path = path
        self._needs_dirs = not _OBJECT_STORES.intersection(protocols_of(fs))
        self._dir_made = False
        self._exclusive: bool | None = None

    def child(self, name: str) -> Location:
        return Location(f"{self.url}/{name}", self._fs, f"{self._path}/{name}", given=self._given)

    def url_of(self, name: str) -> str:
        return f"{self.url}/{name}"

    def _filesystem(self) -> Any:
        fs = self._fs
        if fs is None:  # a forked child
            fs, self._path = resolve_url(self.url)
            self._fs = fs
        return fs

    def replace(self, name: str, data: bytes) -> None:
        """Write the object ``name`` holding ``data``, replacing this run's earlier version
        (a projector file logged again at the same step and tag)."""
        fs = self._filesystem()
        if self._needs_dirs and not self._dir_made:
            fs.makedirs(self._path, exist_ok=True)
            self._dir_made = True
        fs.pipe_file(f"{self._path}/{name}", data)

    def read(self, name: str) -> bytes | None:
        """The bytes of the object ``name``, or None if there is none."""
        try:
            return bytes(self._filesystem().cat_file(f"{self._path}/{name}"))
        except FileNotFoundError:
            return None

    def names(self) -> list[str]:
        """The names of the objects directly in this directory, sorted ([] if it is missing)."""
        fs = self._filesystem()
        try:
            entries = fs.ls(self._path, detail=True)
        except FileNotFoundError:
            return []
        return sorted(
            str(e["name"]).rstrip("/").rsplit("/", 1)[-1]
            for e in entries
            if e.get("type") != "directory"
        )

    def put(self, name: str, data: bytes) -> None:
        """Create the object ``name`` holding ``data``; never replace another one.

        Raises:
          FileExistsError: an object of that name with other bytes exists (it is left as is).
        """
        fs = self._filesystem()
        if self._needs_dirs and not self._dir_made:
            fs.makedirs(self._path, exist_ok=True)
            self._dir_made = True
        path = f"{self._path}/{name}"
        if self._exclusive is None:
            self._exclusive = _can_create_exclusively(fs)
        try:
            if self._exclusive:
                fs.pipe_file(path, data, mode="create")
            elif fs.exists(path):  # no conditional put: check (not atomic, names are unique)
                raise FileExistsError(errno.EEXIST, "exists")
            else:
                fs.pipe_file(path, data)
        except FileExistsError:
            if _holds(fs, path, data):
                return  # our own earlier attempt, whose answer was lost: already uploaded
            raise FileExistsError(
                errno.EEXIST,
                f"{self.url_of(name)} already exists: another writer's object, not replaced",
            ) from None

    def reset_after_fork(self) -> None:
        if not self._given:
            self._fs = None


def _holds(fs: Any, path: str, data: bytes) -> bool:
    try:
        return int(fs.size(path)) == len(data) and bytes(fs.cat_file(path)) == data
    except (OSError, ValueError):
        return False
