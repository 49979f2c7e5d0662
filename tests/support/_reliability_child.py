"""Shared helpers of the reliability tests (``tests/test_reliability_*.py``).

* Child-process entry points, run as ``python tests/support/_reliability_child.py <mode> ...``:
  ``crash`` (heavy mixed logging, reporting completed flushes on a pipe until SIGKILLed),
  ``umask``, ``nobody`` and ``close-while-failing``. Children print one JSON line on stdout.
* :func:`crash_plan` / :data:`CRASH_KINDS`: the deterministic schedule a crash child follows, so
  the parent can replay it and know exactly which record each file must hold.
* :class:`FaultyOS`: fault injection for files under one directory (ENOSPC after a byte budget,
  errors on open/mkdir), by patching the ``os`` functions that ``npsummary._sinks.file`` calls.
* :func:`event_records` / :func:`check_event_file`: read a file with our reader and TensorBoard's.
* :func:`report`: figures for RELIABILITY.md, appended as JSON lines to the file named by
  ``NPSUMMARY_RELIABILITY_REPORT`` (and printed, visible with ``pytest -s``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

HEAVY = os.environ.get("NPSUMMARY_HEAVY", "") not in ("", "0")
CHILD = os.path.abspath(__file__)


def report(test: str, **figures: Any) -> None:
    """Record the figures of one test run for RELIABILITY.md."""
    line = json.dumps({"test": test, "heavy": HEAVY, **figures}, sort_keys=True)
    print(line)
    path = os.environ.get("NPSUMMARY_RELIABILITY_REPORT")
    if path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)


# -- reading files back ---------------------------------------------------------------------------


@dataclass
class FileCheck:
    """What one event file holds, read by npsummary's reader and TensorBoard's."""

    path: str
    payloads: list[bytes]
    torn_tail_bytes: int  # bytes after the last complete record (0: none)
    events: list[Any] = field(default_factory=list)  # tensorboard Event protos

    def steps(self, tag: str) -> list[int]:
        return [e.step for e in self.events if any(v.tag == tag for v in e.summary.value)]


def check_event_file(path: str) -> FileCheck:
    """Read ``path`` fully and assert it is sound: every record passes both CRCs, at most one torn
    record and only at the tail, and TensorBoard's loader reads exactly the same records."""
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.compat.proto import event_pb2

    from npsummary._format.record import CorruptRecordError, TruncatedRecordError, iter_records

    with open(path, "rb") as f:
        data = f.read()
    payloads: list[bytes] = []
    torn = 0
    try:
        for payload in iter_records(data):
            payloads.append(payload)
    except TruncatedRecordError as exc:
        torn = len(data) - exc.offset
        complete = sum(16 + len(p) for p in payloads)
        assert exc.offset == complete, f"{path}: torn record at {exc.offset}, not at the tail"
    except CorruptRecordError as exc:  # pragma: no cover - the failure being tested for
        raise AssertionError(f"{path}: corrupt record: {exc}") from exc
    tb_raw = list(event_file_loader.RawEventFileLoader(path).Load())
    assert tb_raw == payloads, f"{path}: TensorBoard read {len(tb_raw)} records, we {len(payloads)}"
    events = [event_pb2.Event.FromString(p) for p in payloads]
    if events:
        assert events[0].file_version == "brain.Event:2", f"{path}: first record {events[0]}"
    return FileCheck(path, payloads, torn, events)


def event_files(root: str) -> list[str]:
    """Every event file under ``root``, sub-runs included, sorted."""
    out: list[str] = []
    for dirpath, _dirs, files in os.walk(root):
        out.extend(os.path.join(dirpath, name) for name in files if "tfevents" in name)
    return sorted(out)


# -- crash children -------------------------------------------------------------------------------


def _log_scalar(w: Any, i: int) -> None:
    w.add_scalar("loss", float(i), i)


def _log_scalars(w: Any, i: int) -> None:
    w.add_scalars("pair", {"a": float(i), "b": float(-i)}, i)


def _log_big(w: Any, i: int) -> None:
    # A large record (a long tag) so that kills often land inside a multi-page write.
    w.add_scalar("big/" + "x" * (1000 + (i * 7919) % 60000), float(i), i)


def _log_huge(w: Any, i: int) -> None:
    # Up to 640 KiB in one record: a write the kernel may cut short when the kill lands inside it.
    w.add_scalar("big/" + "y" * ((1 << 17) + (i * 7919) % (1 << 19)), float(i), i)


def _log_histogram(w: Any, i: int) -> None:
    import numpy as np

    w.add_histogram("hist", np.arange(i % 50 + 1, dtype=np.float32), i)


def _log_image(w: Any, i: int) -> None:
    import numpy as np

    w.add_image("img", np.full((3, 16, 16), i % 256, np.uint8), i)


#: kind -> (log function, {run directory relative to logdir: tag}) — one line per logging call.
#: Extend with new add_* calls as they land (the parent replays the same schedule). Scalar
#: records are also checked by value (i, or -i in pair_b); others by step and tag.
CRASH_KINDS: dict[str, tuple[Callable[[Any, int], None], dict[str, str]]] = {
    "scalar": (_log_scalar, {".": "loss"}),
    "scalars": (_log_scalars, {"pair_a": "pair", "pair_b": "pair"}),
    "big": (_log_big, {".": "big/"}),
    "huge": (_log_huge, {".": "big/"}),
    "histogram": (_log_histogram, {".": "hist"}),
    "image": (_log_image, {".": "img"}),
}
_KIND_WEIGHTS = {"scalar": 600, "scalars": 300, "big": 50, "huge": 5, "histogram": 40, "image": 20}


@dataclass(frozen=True)
class CrashOptions:
    max_queue: int
    flush_secs: float
    flush_every: int  # mean number of calls between flushes


def crash_options(seed: int) -> CrashOptions:
    rng = random.Random(seed)
    return CrashOptions(
        max_queue=rng.choice([0, 1, 10, 100]),
        flush_secs=rng.choice([0.01, 0.2, 2.0]),
        flush_every=rng.choice([5, 20, 100]),
    )


def crash_plan(seed: int) -> Iterator[tuple[int, str, bool]]:
    """Yield ``(i, kind, flush_after)`` forever: call ``i`` logs with ``kind`` at step ``i``."""
    options = crash_options(seed)
    rng = random.Random(seed + 1)
    kinds = [k for k in _KIND_WEIGHTS if k in CRASH_KINDS]
    weights = [_KIND_WEIGHTS[k] for k in kinds]
    i = 0
    while True:
        kind = rng.choices(kinds, weights)[0]
        yield i, kind, rng.randrange(options.flush_every) == 0
        i += 1


def _crash_child(logdir: str, fd: int, seed: int) -> None:
    from npsummary import SummaryWriter

    options = crash_options(seed)
    writer = SummaryWriter(logdir, max_queue=options.max_queue, flush_secs=options.flush_secs)
    os.write(fd, b"ready\n")
    for i, kind, flush_after in crash_plan(seed):
        CRASH_KINDS[kind][0](writer, i)
        if flush_after:
            os.write(fd, b"f\n")  # lets the parent aim a kill at a flush in progress
            writer.flush()
            # Calls 0..i were all logged before this flush returned.
            os.write(fd, f"{i + 1}\n".encode())


# -- fault injection ------------------------------------------------------------------------------


class FaultyOS:
    """Make file operations under ``root`` fail on demand (a context manager).

    ``budget``: bytes that may still be written to files under ``root`` (None: unlimited). A
    write crossing the budget is cut short, as the kernel does on a full disk; the next write
    raises ``OSError(errno)``. ``open_errno``: ``os.open``/``os.mkdir`` under ``root`` raise it.
    Only files opened under ``root`` while active are affected.
    """

    def __init__(self, root: str | os.PathLike[str], *, errno_: int = errno.ENOSPC) -> None:
        self.root = os.path.realpath(os.fspath(root))
        self.errno = errno_
        self.budget: int | None = None
        self.open_errno: int | None = None
        self.fds: dict[int, str] = {}
        self.written = 0
        self.failed_writes = 0
        self._lock = threading.Lock()
        self._saved: dict[str, Any] = {}

    def _under(self, path: Any, dir_fd: int | None = None) -> bool:
        if dir_fd is not None or isinstance(path, int):
            return False
        p = os.path.realpath(os.fsdecode(os.fspath(path)))
        return p == self.root or p.startswith(self.root + os.sep)

    def __enter__(self) -> FaultyOS:
        real = {name: getattr(os, name) for name in ("open", "write", "close", "mkdir")}
        self._saved = real

        def fake_open(
            path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
        ) -> int:
            under = self._under(path, dir_fd)
            if under and self.open_errno is not None:
                raise OSError(self.open_errno, os.strerror(self.open_errno), os.fspath(path))
            fd = int(real["open"](path, flags, mode, dir_fd=dir_fd))
            if under:
                with self._lock:
                    self.fds[fd] = os.fspath(path)
            return fd

        def fake_mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
            if self._under(path, dir_fd) and self.open_errno is not None:
                raise OSError(self.open_errno, os.strerror(self.open_errno), os.fspath(path))
            real["mkdir"](path, mode, dir_fd=dir_fd)

        def fake_close(fd: int) -> None:
            with self._lock:
                self.fds.pop(fd, None)
            real["close"](fd)

        def fake_write(fd: int, data: Any) -> int:
            if fd not in self.fds:
                return int(real["write"](fd, data))
            with self._lock:
                size = len(memoryview(data).cast("B"))
                if self.budget is not None and size > self.budget:
                    if self.budget == 0:
                        self.failed_writes += 1
                        raise OSError(self.errno, os.strerror(self.errno))
                    size = self.budget
                    data = memoryview(data).cast("B")[:size]
                n = int(real["write"](fd, data))
                if self.budget is not None:
                    self.budget -= n
                self.written += n
                return n

        os.open = fake_open
        os.mkdir = fake_mkdir
        os.close = fake_close
        os.write = fake_write
        return self

    def __exit__(self, *exc: object) -> None:
        for name, func in self._saved.items():
            setattr(os, name, func)


# -- multiprocessing workers (spawn and fork) ----------------------------------------------------


def mp_worker(logdir: str, n: int, close: bool) -> int:
    """Log ``n`` scalars (and a sub-run every 50) in a process of its own; return the pid.

    ``flush_secs`` is long, so without ``close`` the last records reach the file only through the
    flush at process exit.
    """
    from npsummary import SummaryWriter

    w = SummaryWriter(logdir, max_queue=7, flush_secs=600)
    for i in range(n):
        w.add_scalar("w", float(i), i)
        if i % 50 == 0:
            w.add_scalars("m", {"a": float(i)}, i)
    if close:
        w.close()
    else:
        _KEEP_ALIVE.append(w)  # still open when the process exits
    return os.getpid()


_KEEP_ALIVE: list[Any] = []


def pool_task(logdir: str, i: int) -> int:
    """One task of a ``multiprocessing.Pool``: log step ``i`` with this worker's writer, opened
    on its first task and never closed (``flush_secs`` long: nothing is written before exit)."""
    from npsummary import SummaryWriter

    if not _KEEP_ALIVE:
        _KEEP_ALIVE.append(SummaryWriter(logdir, max_queue=1000, flush_secs=600))
    _KEEP_ALIVE[0].add_scalar("task", float(i), i)
    return os.getpid()


# -- other children -------------------------------------------------------------------------------


def _umask_child(logdir: str) -> dict[str, Any]:
    os.umask(0o027)
    from npsummary import SummaryWriter

    with SummaryWriter(logdir) as w:
        w.add_scalar("a", 1.0, 0)
        w.add_scalars("m", {"k": 1.0}, 0)
    modes = {}
    for dirpath, dirs, files in os.walk(logdir):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            modes[os.path.relpath(path, logdir)] = os.stat(path).st_mode & 0o7777
    modes["."] = os.stat(logdir).st_mode & 0o7777
    return {"modes": modes}


def _nobody_child(base: str) -> dict[str, Any]:
    """As an unprivileged user: a writer in a root-owned directory fails at construction; a
    sub-run in a directory made read-only mid-run fails at that call; the main file goes on."""
    from npsummary import EventWriteError, SummaryWriter

    os.setgid(65534)
    os.setuid(65534)
    out: dict[str, Any] = {"uid": os.getuid()}
    try:
        SummaryWriter(os.path.join(base, "root_owned", "run"))
        out["construct"] = "no error"
    except OSError as exc:
        out["construct"] = f"{type(exc).__name__}:{exc.errno}"
    logdir = os.path.join(base, "mine")
    w = SummaryWriter(logdir)
    w.add_scalar("a", 1.0, 1)
    w.flush()
    os.chmod(logdir, 0o500)
    try:
        w.add_scalars("m", {"k": 2.0}, 2)
        out["subrun"] = "no error"
    except OSError as exc:
        out["subrun"] = f"{type(exc).__name__}:{exc.errno}:{isinstance(exc, EventWriteError)}"
    w.add_scalar("a", 3.0, 3)
    w.flush()
    w.close()
    os.chmod(logdir, 0o700)
    out["files"] = event_files_plain(logdir)
    return out


def event_files_plain(root: str) -> list[str]:
    return [os.path.relpath(p, root) for p in event_files(root)]


def _close_while_failing_child(logdir: str) -> dict[str, Any]:
    """Disk full forever: close() must raise, release the file and stop the flusher thread."""
    import time

    from npsummary import EventWriteError, SummaryWriter

    out: dict[str, Any] = {}
    with FaultyOS(os.path.dirname(logdir)) as faults:
        w = SummaryWriter(logdir, max_queue=1, flush_secs=0.05)
        faults.budget = 0
        errors = 0
        for i in range(200):
            try:
                w.add_scalar("a", float(i), i)
                if i % 50 == 49:
                    w.flush()
            except EventWriteError:
                errors += 1
        try:
            w.close()
            out["close"] = "no error"
        except EventWriteError as exc:
            out["close"] = f"EventWriteError:{exc.errno}"
        out["errors_while_logging"] = errors
        deadline = time.monotonic() + 20
        alive = True
        while time.monotonic() < deadline:
            alive = any(t.name == "npsummary-flusher" for t in threading.enumerate())
            if not alive:
                break
            time.sleep(0.01)
        out["flusher_alive_after_close"] = alive
        out["open_fds_under_logdir"] = len(faults.fds)
    return out


def main(argv: list[str]) -> None:
    mode = argv[0]
    result: dict[str, Any] | None
    if mode == "crash":
        _crash_child(argv[1], int(argv[2]), int(argv[3]))
        result = None
    elif mode == "umask":
        result = _umask_child(argv[1])
    elif mode == "nobody":
        result = _nobody_child(argv[1])
    elif mode == "close-while-failing":
        result = _close_while_failing_child(argv[1])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    if result is not None:
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        main(sys.argv[1:])
