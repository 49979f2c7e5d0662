"""The projector's files: the thin I/O layer under ``add_embedding``, for a local logdir and for a
URL logdir alike.

Every file of one embedding goes under ``<logdir>/<subdir>/`` through the run's own location: a
local directory (also for ``file://`` URLs), or the fsspec location of the URL (``s3://``,
``memory://``, chained URLs; an ``s3://`` URL through boto3 where s3fs is missing, see
:func:`~npsummary._sinks.location.open_location`). A path is never built by joining a URL to the
working directory.

``projector_config.pbtxt`` lists every embedding of the run and is only ever extended, safely
across processes:

* Local logdirs: each update holds an OS lock (``fcntl.flock``; ``msvcrt.locking`` on Windows)
  on ``<logdir>/.projector_config.lock`` while it re-reads the file, adds its block and renames a
  complete new file into place. Writers of any process on one host, or on a shared file system
  that honours ``flock``, never lose an entry. The lock file exists only while an update holds
  it (see :func:`_os_lock`), so nothing is left in the run folder: torch and tensorboardX leave
  no such file, and tools that compare or sync run folders would see it.
* URL logdirs (object stores have neither locks nor renames): each embedding first stores its
  block as an object of its own, ``projector_config.d/<unique>.pbtxt``, which is never
  overwritten; then the writer re-reads the config and the blocks, writes the config with every
  block it lacks, and repeats until a re-read finds none missing. Whichever writer writes last has
  checked, after its write, that every block stored before its check is in; a block stored later
  is added by its own writer. The config may miss a block only while that block's writer is
  inside ``add_embedding``; with stores that are not strongly consistent in listing (not S3,
  GCS or Azure today) that window lasts as long as the store's delay.

Every local file is written to a temporary name in its directory and renamed into place, so a
reader (or a crash) never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import threading
from collections.abc import Iterable, Iterator

from .._common.urls import is_url, local_path
from .location import RunDirectory, open_location

__all__ = [
    "CONFIG_NAME",
    "FRAGMENTS_NAME",
    "append_config",
    "save_embedding",
    "write_file",
    "write_run_file",
]

CONFIG_NAME = "projector_config.pbtxt"
#: Folder of a URL logdir holding one config block per embedding (see the module docstring).
FRAGMENTS_NAME = "projector_config.d"
_LOCK_NAME = ".projector_config.lock"
#: Rounds of re-reading a remote config before giving up (only reached while other writers keep
#: adding embeddings to the same run at a high rate).
_REMOTE_ROUNDS = 50

# Threads of one process take turns (flock alone would serialize them too, per open file).
_CONFIG_LOCK = threading.Lock()


def save_embedding(
    logdir: str, subdir: str, files: list[tuple[str, Iterable[bytes]]], block: str
) -> None:
    """Write ``files`` (``name -> chunks``) into ``<logdir>/<subdir>`` and add ``block`` to the
    run's ``projector_config.pbtxt``.

    Args:
      logdir: the run directory: a local path or a URL.
      subdir: ``/``-separated components, each one safe (``step_dir``/``encode_tag``).
    """
    local = local_path(logdir) if is_url(logdir) else logdir
    if local is not None:
        directory = os.path.join(local, *subdir.split("/"))
        os.makedirs(directory, exist_ok=True)
        for name, chunks in files:
            write_file(os.path.join(directory, name), chunks)
        append_config(local, block)
        return
    run = open_location(logdir)
    target = run
    for part in subdir.split("/"):
        target = target.child(part)
    for name, chunks in files:
        target.replace(name, b"".join(chunks))
    _append_remote_config(run, block)


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


def write_run_file(logdir: str, name: str, data: bytes) -> None:
    """Write ``data`` as ``<logdir>/<name>`` (``name``: ``/``-separated safe components, chosen
    by the caller), replacing an earlier version, through the run's storage as
    :func:`save_embedding` does: atomically into a local directory (also for ``file://``), or as
    one object of the URL's location (fsspec, or boto3 for ``s3://`` where s3fs is missing).

    Raises:
      ImportError: the URL's filesystem is not installed (named in the message).
      OSError: the storage refused the write.
    """
    parts = name.split("/")
    local = local_path(logdir) if is_url(logdir) else logdir
    if local is not None:
        directory = os.path.join(local, *parts[:-1])
        os.makedirs(directory, exist_ok=True)
        write_file(os.path.join(directory, parts[-1]), [data])
        return
    target = open_location(logdir)
    for part in parts[:-1]:
        target = target.child(part)
    target.replace(parts[-1], data)


def append_config(logdir: str, block: str) -> None:
    """Add ``block`` to ``<logdir>/projector_config.pbtxt`` unless it is there already, holding
    the process lock and the OS lock of the logdir."""
    path = os.path.join(logdir, CONFIG_NAME)
    with _CONFIG_LOCK, _os_lock(os.path.join(logdir, _LOCK_NAME)):
        _append(path, block)


@contextlib.contextmanager
def _os_lock(path: str) -> Iterator[None]:
    """An exclusive OS lock named ``path``, a file that exists only while the lock is held.

    The file is created if missing (never through a link) and locked; a holder whose file is no
    longer the one at ``path`` (its previous holder removed it) starts again with the new one.
    On POSIX the holder removes the file before it unlocks, so a waiter that then gets the old
    file's lock sees it gone; at most one process holds the lock of the file at ``path``. On
    Windows an open file cannot be removed: the holder removes it after closing, unless another
    process has it open (and will remove it in turn).
    """
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        fd = os.open(path, flags, 0o666)
        try:
            _lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if _is_at(fd, path):
            break
        _unlock(fd)
        os.close(fd)
    try:
        yield
    finally:
        # The update is done: a lock file that cannot be removed only stays behind, as before.
        try:
            if sys.platform != "win32":
                with contextlib.suppress(OSError):
                    os.unlink(path)
        finally:
            _unlock(fd)
            os.close(fd)
        if sys.platform == "win32":
            with contextlib.suppress(OSError):
                os.unlink(path)


def _is_at(fd: int, path: str) -> bool:
    """Whether the open file ``fd`` is the file at ``path`` (not a link, not removed)."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _lock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # retries for 10 s, then OSError
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)


def _append(path: str, block: str) -> None:
    current = _read_unless_link(path)
    if block in current:
        return
    write_file(path, [_extended(current, [block]).encode("utf-8")])


def _read_unless_link(path: str) -> str:
    """The text of ``path``; "" if it is missing or a link (never followed: the new config is
    renamed over the link itself)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return ""
    except OSError:
        if os.path.islink(path):  # ELOOP (or EMLINK on some BSDs)
            return ""
        raise
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8", errors="replace")


def _extended(current: str, blocks: list[str]) -> str:
    missing = [b for b in dict.fromkeys(blocks) if b not in current]
    if current and not current.endswith("\n"):
        current += "\n"
    return current + "".join(missing)


# Blocks already read, by fragment URL: fragments are never rewritten, so each is read once per
# process (bounded by the number of embeddings logged to the runs this process writes).
_FRAGMENTS: dict[str, str] = {}


def _fragment(fragments: RunDirectory, name: str) -> str | None:
    url = fragments.url_of(name)
    text = _FRAGMENTS.get(url)
    if text is None:
        data = fragments.read(name)
        if data is None:
            return None
        text = _FRAGMENTS[url] = data.decode("utf-8", errors="replace")
    return text


def _append_remote_config(run: RunDirectory, block: str) -> None:
    fragments = run.child(FRAGMENTS_NAME)
    encoded = block.encode("utf-8")
    fragments.put(f"{secrets.token_hex(16)}.pbtxt", encoded)
    for _ in range(_REMOTE_ROUNDS):
        blocks = [
            block_text
            for name in fragments.names()
            if name.endswith(".pbtxt") and (block_text := _fragment(fragments, name)) is not None
        ]
        if block not in blocks:  # listing lags behind our own write: use what we know
            blocks.append(block)
        current = (run.read(CONFIG_NAME) or b"").decode("utf-8")
        if all(b in current for b in blocks):
            return
        run.replace(CONFIG_NAME, _extended(current, blocks).encode("utf-8"))
    raise OSError(
        f"{run.url_of(CONFIG_NAME)}: other writers kept changing it; the embedding's files and "
        f"its block in {FRAGMENTS_NAME}/ are stored, the config misses it for now"
    )
