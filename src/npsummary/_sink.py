"""Where serialized events go: the I/O layer.

An :class:`EventSink` receives serialized ``Event`` payloads. :class:`FileSink` appends them, framed
as TFRecords, to one event file; :class:`MemorySink` keeps them in a list for tests.

File sink guarantees:

* The file is named
  ``events.out.tfevents.{int(time):010d}.{hostname}.{pid}.{counter:04d}{suffix}`` and created
  with ``O_EXCL``: an existing file is never truncated or appended to, even when two writers start
  in the same second (the counter is bumped until the name is free). Names of one process sort in
  creation order, which TensorBoard's Python loader relies on.
* The first record, ``file_version: "brain.Event:2"`` with ``source_metadata``, is written and
  flushed before the constructor returns. Missing directories are created.
* :meth:`FileSink.write` only appends to an in-memory list; one daemon thread shared by every sink
  in the process writes the pending records when more than ``max_queue`` are waiting or
  ``flush_secs`` after the last write, so a training loop never waits on the disk.
* :meth:`FileSink.flush` writes everything logged before it and fsyncs the file before it returns.
  Pending records are also written at interpreter exit (multiprocessing fork and forkserver
  workers included) and when a sink is garbage collected.
* An I/O error in the background thread is raised by the next ``write``, ``flush`` or ``close`` as
  :class:`EventWriteError`. Unwritten records are kept, up to ``max_pending_bytes`` (queued plus
  in flight), and written by a later successful attempt; beyond that bound new records are dropped
  and counted in the next error, never silently. Failed writes are retried in the background with
  exponential backoff (``flush_secs`` doubling up to 30 s) and at every ``flush()``; logging calls
  never trigger a retry while failing. A failed write is cut back to the last complete record, so
  the file never holds a torn record in its middle. ``flush`` and ``close`` reach every sub-run
  even when one fails, then raise the first error; records still unwritten at ``close`` are
  counted in its error.
* If the event file is deleted while open (e.g. the logdir is removed), the next write notices,
  starts a new file (recreating the directory) and raises ``EventWriteError`` (ENOENT) once.
* After ``os.fork()`` the child starts with no pending records and writes to a new file of its own
  on first use; the parent's sinks carry on unaffected.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import threading
import time
import weakref
from typing import Protocol, runtime_checkable

from ._errors import EventWriteError
from ._format.record import frame_record
from ._format.wire import encode_file_version_event

__all__ = [
    "DEFAULT_FLUSH_SECS",
    "DEFAULT_MAX_QUEUE",
    "EventSink",
    "EventWriteError",
    "FileSink",
    "MemorySink",
]

#: Seconds after which logged data reaches the file without any call (TF and tensorboardX: 120).
DEFAULT_FLUSH_SECS = 2.0
#: Pending records that trigger a background write before ``flush_secs`` has passed.
DEFAULT_MAX_QUEUE = 10
#: Memory bound on records waiting to be written, per file.
DEFAULT_MAX_PENDING_BYTES = 64 << 20

SOURCE_WRITER = "npsummary"


@runtime_checkable
class EventSink(Protocol):
    """Destination of serialized ``Event`` protos."""

    def write(self, payload: bytes) -> None:
        """Queue one serialized event."""

    def flush(self) -> None:
        """Make everything written so far durable."""

    def close(self) -> None:
        """Flush and release resources; later calls are no-ops."""

    def child(self, name: str) -> EventSink:
        """Return a sink for the sub-run ``name`` (one path component) beside this one."""


class MemorySink:
    """An :class:`EventSink` that keeps payloads in memory, for tests and dry runs."""

    def __init__(self) -> None:
        self.payloads: list[bytes] = []
        self.children: dict[str, MemorySink] = {}
        self.flushes = 0
        self.closed = False

    def write(self, payload: bytes) -> None:
        if self.closed:
            raise ValueError("write to a closed MemorySink")
        self.payloads.append(payload)

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closed = True
        for child in self.children.values():
            child.close()

    def child(self, name: str) -> MemorySink:
        check_run_name(name)
        if name not in self.children:
            self.children[name] = MemorySink()
        return self.children[name]


def check_run_name(name: str) -> str:
    """Return ``name`` if it is one safe path component (a sub-run directory), else raise.

    Callers turn tags into names with ``writer.safe_run_name``; this check is the last line of
    defence against a tag escaping the logdir (``..``, separators, NUL, drive or absolute paths).
    """
    if not isinstance(name, str):
        raise TypeError(f"sub-run name must be a str, got {type(name).__name__}")
    if (
        name in ("", ".", "..")
        or "/" in name
        or "\\" in name
        or "\0" in name
        or os.path.splitdrive(name)[0]
        or os.path.isabs(name)
    ):
        raise ValueError(f"sub-run name must be one path component, got {name!r}")
    return name


#: Retries of a failing write back off exponentially from flush_secs up to this many seconds.
MAX_RETRY_SECS = 30.0

_file_counter = itertools.count()
_counter_lock = threading.Lock()


def _next_counter() -> int:
    with _counter_lock:
        return next(_file_counter)


def hostname() -> str:
    """The host name TensorFlow puts in event file names (``socket.gethostname()``)."""
    if hasattr(os, "uname"):
        return os.uname().nodename  # same value; avoids importing socket (~3 ms)
    import socket

    return socket.gethostname()


def _create_event_file(directory: str, suffix: str, now: float) -> tuple[str, int]:
    """Create a new, empty event file exclusively; return its path and an open descriptor."""
    os.makedirs(directory, exist_ok=True)
    host = hostname()
    pid = os.getpid()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_BINARY", 0)
    while True:
        # The counter is zero-padded (TF's is not): TensorBoard's Python loader reads a run's
        # files in name order and never returns to an earlier one, so a writer reopened in the
        # same second as file ".9" must not be named ".10", which sorts before it.
        name = f"events.out.tfevents.{int(now):010d}.{host}.{pid}.{_next_counter():04d}{suffix}"
        path = os.path.join(directory, name)
        try:
            return path, os.open(path, flags, 0o666)
        except FileExistsError:
            continue


class PendingState:
    """Records waiting to be written by the shared flusher, and the error bookkeeping every sink
    shares: failures are retried with exponential backoff and reported by the next call.

    Subclasses implement :meth:`drain` (write what is pending) and say where records go in
    ``path``; the flusher only reads ``wake_sent`` and ``deadline``.
    """

    #: What ``raise_error`` calls the destination ("event file", "remote event file").
    noun = "event file"

    def __init__(self, flush_secs: float, max_queue: int, max_pending_bytes: int) -> None:
        self.flush_secs = flush_secs
        self.max_queue = max_queue
        self.max_pending_bytes = max_pending_bytes
        self.lock = threading.Lock()  # guards the pending list and the error fields
        self.io_lock = threading.Lock()  # serializes writes to the destination
        self.children_lock = threading.Lock()  # serializes creating sub-run sinks
        self.pending: list[bytes] = []
        self.pending_bytes = 0
        self.wake_sent = False
        self.deadline = 0.0
        self.error: BaseException | None = None
        self.failing = False  # the last write attempt failed
        self.failures = 0  # consecutive failed attempts (sets the retry backoff)
        self.last_error: BaseException | None = None
        self.error_path = ""
        self.dropped = 0
        self.unwritten = 0  # records still pending when close() gave up
        self.closed = False
        self.path = ""

    def drain(self, *, fsync: bool) -> None:
        """Write every pending record (``fsync``: make it durable now)."""
        raise NotImplementedError

    def record_failure(self, exc: BaseException, path: str) -> None:
        """Remember a failed write and schedule a retry (caller holds ``lock``)."""
        self.error = self.last_error = exc
        self.error_path = path
        self.failing = True
        self.failures += 1
        # Retry in the background with exponential backoff; write() does not wake the flusher
        # while failing, so a full disk or a dead server costs no CPU per logged record.
        self.wake_sent = False
        delay = self.flush_secs * 2.0 ** min(self.failures - 1, 30)
        delay = min(delay, max(self.flush_secs, MAX_RETRY_SECS))
        self.deadline = time.monotonic() + delay

    def record_success(self, written_bytes: int) -> None:
        """Forget the failure streak once a write went through (caller holds ``lock``)."""
        self.pending_bytes -= written_bytes
        self.failing = False
        self.failures = 0

    def enqueue(self, payload: bytes, ready: bool) -> bool:
        """Queue ``payload`` (caller holds ``lock``); return whether to wake the flusher.

        ``ready``: the queue is worth writing before the deadline (e.g. more than max_queue).
        """
        if self.pending_bytes > self.max_pending_bytes:
            self.dropped += 1
            return False
        self.pending.append(payload)
        self.pending_bytes += len(payload)
        # Wake the flusher once per batch: when the batch starts (so it sleeps until the
        # batch's deadline) and when it is ready (so it writes it now).
        wake = not self.deadline
        if wake:
            self.deadline = time.monotonic() + self.flush_secs
        if ready and not self.wake_sent and not self.failing:
            self.wake_sent = wake = True
        return wake

    def raise_error(self) -> None:
        """Raise the pending error, if any; dropped or unwritten records are never silent."""
        with self.lock:
            exc, self.error = self.error, None
            dropped, self.dropped = self.dropped, 0
            unwritten, self.unwritten = self.unwritten, 0
            kept = self.held_records()
            cause = exc or self.last_error
            path = self.error_path or self.path
        if exc is None and not dropped and not unwritten:
            return
        message = f"writing {self.noun} {path} failed: {cause}"
        if dropped:
            message += (
                f"; {dropped} records dropped while writes kept failing (more than "
                f"max_pending_bytes={self.max_pending_bytes} were waiting)"
            )
        if unwritten:
            message += f"; {unwritten} records could not be written before close"
        elif kept:
            message += f"; {kept} records kept and retried"
        code = getattr(cause, "errno", None) or errno.EIO
        raise EventWriteError(code, message) from cause

    def held_records(self) -> int:
        """Records kept for a later write (caller holds ``lock``)."""
        return len(self.pending)

    def give_up(self) -> None:
        """At close: count what is still unwritten (reported by close) and free the memory."""
        with self.lock:
            self.closed = True
            self.unwritten += self.held_records()
            self.pending = []
            self.pending_bytes = 0

    def reset_after_fork(self) -> None:
        self.lock = threading.Lock()
        self.io_lock = threading.Lock()
        self.children_lock = threading.Lock()
        self.pending = []
        self.pending_bytes = 0
        self.wake_sent = False
        self.deadline = 0.0
        self.error = None
        self.failing = False
        self.failures = 0
        self.dropped = 0
        self.unwritten = 0
        self.path = ""


class _FileState(PendingState):
    """Everything the background thread needs; kept apart from FileSink so GC can finalize it."""

    def __init__(
        self, directory: str, suffix: str, flush_secs: float, max_queue: int, max_pending_bytes: int
    ) -> None:
        super().__init__(flush_secs, max_queue, max_pending_bytes)
        self.directory = directory
        self.suffix = suffix
        self.fd = -1
        self.size = 0  # bytes of complete records in the file
        self._open_new_file()

    def _open_new_file(self) -> None:
        now = time.time()
        path, fd = _create_event_file(self.directory, self.suffix, now)
        view = memoryview(frame_record(encode_file_version_event(float(int(now)), SOURCE_WRITER)))
        size = len(view)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            # Leave no half-written file behind (we created it, exclusively, a moment ago).
            with contextlib.suppress(OSError):
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        self.path, self.fd, self.size = path, fd, size

    def _file_removed(self) -> bool:
        try:
            os.stat(self.path)
        except (FileNotFoundError, NotADirectoryError):
            return True
        except OSError:
            return False
        return False

    def _replace_removed_file(self) -> None:
        # The file (or its directory) was deleted while open: appending to the descriptor would
        # write into the void. Start a new file, as TensorFlow's EventsWriter does, and report it.
        old_fd, old_path = self.fd, self.path
        self._open_new_file()  # raises if the directory cannot be recreated: retried later
        with contextlib.suppress(OSError):
            os.close(old_fd)
        with self.lock:
            self.error = FileNotFoundError(
                errno.ENOENT,
                "the file was removed while open (records written to it are lost); "
                f"logging continues in {self.path}",
            )
            self.error_path = old_path

    def _append(self, payloads: list[bytes], *, fsync: bool) -> None:
        data = b"".join([frame_record(p) for p in payloads])
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
            if fsync:
                os.fsync(self.fd)
        except OSError:
            # Cut a partly written batch back to its last complete record, so later appends do
            # not leave a torn record in the middle of the file (readers stop at one forever).
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.size)
            raise
        self.size += len(data)

    def drain(self, *, fsync: bool) -> None:
        """Write every pending record; on failure keep them (bounded) and remember the error.

        ``pending_bytes`` keeps counting the batch while it is written, so the memory bound holds
        for queued plus in-flight records.
        """
        with self.io_lock:
            with self.lock:
                batch, self.pending = self.pending, []
                batch_bytes = sum(len(p) for p in batch)
                self.wake_sent = False
                self.deadline = 0.0
            if self.fd < 0:
                with self.lock:
                    self.pending[:0] = batch
                return
            if not batch and not fsync:
                return
            try:
                if self._file_removed():
                    self._replace_removed_file()
                self._append(batch, fsync=fsync)
            except OSError as exc:
                with self.lock:
                    self.pending[:0] = batch
                    self.record_failure(exc, self.path)
            else:
                with self.lock:
                    self.record_success(batch_bytes)

    def close(self) -> None:
        if self.closed:
            return
        self.drain(fsync=True)
        with self.io_lock:
            # A failed last write: report the loss at this close() and free the memory.
            self.give_up()
            if self.fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(self.fd)
                self.fd = -1
        _FLUSHER.unregister(self)

    def reset_after_fork(self) -> None:
        super().reset_after_fork()
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        self.fd = -1


class Flusher:
    """One daemon thread that writes pending records for every registered sink in the process.

    Local files share one; remote sinks have their own, so a slow or unreachable
    server never delays a local file.
    """

    def __init__(self, name: str = "npsummary-flusher") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._states: set[PendingState] = set()
        self._thread: threading.Thread | None = None

    def register(self, state: PendingState) -> None:
        with self._lock:
            self._states.add(state)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def unregister(self, state: PendingState) -> None:
        with self._lock:
            self._states.discard(state)
        self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.clear()
            with self._lock:
                if not self._states:
                    self._thread = None
                    return
                states = list(self._states)
            now = time.monotonic()
            wait = 3600.0
            for state in states:
                if state.wake_sent or (state.deadline and state.deadline <= now):
                    state.drain(fsync=False)
                if state.deadline:
                    wait = min(wait, state.deadline - now)
            self._wake.wait(max(wait, 0.0))

    def drain_all(self) -> None:
        with self._lock:
            states = list(self._states)
        for state in states:
            state.drain(fsync=False)

    def reset_after_fork(self) -> None:
        # Locks another thread held at fork() stay held forever in the child: replace them all.
        global _counter_lock
        _counter_lock = threading.Lock()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread = None
        for state in self._states:
            state.reset_after_fork()
        self._states = set()


def install_exit_hooks(flusher: Flusher) -> None:
    """Write what ``flusher`` holds at interpreter exit; give forked children a clean one."""
    atexit.register(flusher.drain_all)
    # multiprocessing's fork and forkserver children leave through os._exit(), which skips
    # atexit but not threading's exit hooks (multiprocessing runs threading._shutdown() first).
    register_thread_exit = getattr(threading, "_register_atexit", None)
    if register_thread_exit is not None:
        register_thread_exit(flusher.drain_all)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=flusher.reset_after_fork)


_FLUSHER = Flusher()
install_exit_hooks(_FLUSHER)


class FileSink:
    """An :class:`EventSink` appending to a new event file in ``directory``.

    Args:
      directory: run directory; created if missing.
      filename_suffix: appended to the file name verbatim.
      flush_secs: longest time a logged record waits in memory.
      max_queue: pending records that trigger a background write sooner.
      max_pending_bytes: memory bound on unwritten records while writes keep failing.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        filename_suffix: str = "",
        *,
        flush_secs: float = DEFAULT_FLUSH_SECS,
        max_queue: int = DEFAULT_MAX_QUEUE,
        max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
    ) -> None:
        if not isinstance(filename_suffix, str):
            raise TypeError(f"filename_suffix must be a str, got {type(filename_suffix).__name__}")
        if "/" in filename_suffix or "\\" in filename_suffix or "\0" in filename_suffix:
            raise ValueError(
                f"filename_suffix must not contain a path separator or NUL, got {filename_suffix!r}"
            )
        self._options = (filename_suffix, flush_secs, max_queue, max_pending_bytes)
        self._state = _FileState(
            os.fspath(directory), filename_suffix, flush_secs, max_queue, max_pending_bytes
        )
        _FLUSHER.register(self._state)
        self._finalizer = weakref.finalize(self, self._state.close)
        self._children: dict[str, FileSink] = {}

    @property
    def path(self) -> str:
        """Path of the event file currently written."""
        return self._state.path

    @property
    def directory(self) -> str:
        return self._state.directory

    def write(self, payload: bytes) -> None:
        state = self._state
        if state.error is not None or state.dropped:
            state.raise_error()
        if state.fd < 0:
            self._reopen()
        if state.pending_bytes > state.max_pending_bytes and not state.failing:
            # Logging outpaces the disk: write in the caller rather than drop. Records are
            # dropped (and counted in the error) only while writes keep failing.
            state.drain(fsync=False)
        with state.lock:
            wake = state.enqueue(payload, len(state.pending) >= state.max_queue)
        if wake:
            _FLUSHER.wake()

    def _reopen(self) -> None:
        state = self._state
        if state.closed:
            raise ValueError(f"event file {state.path or state.directory} is closed")
        # A forked child: start a file of its own.
        with state.io_lock:
            if state.fd < 0:
                state._open_new_file()
        _FLUSHER.register(state)

    def flush(self) -> None:
        """Write and fsync this file and its sub-runs; a failure in one does not stop the others,
        and the first error is raised after all were tried."""
        state = self._state
        errors: list[OSError] = []
        if not state.closed:
            try:
                if state.fd < 0:
                    self._reopen()
                state.drain(fsync=True)
                state.raise_error()
            except OSError as exc:
                errors.append(exc)
        for child in list(self._children.values()):
            try:
                child.flush()
            except OSError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def close(self) -> None:
        """Flush and close this file and its sub-runs (all of them, even if one fails), then raise
        the first error. Idempotent."""
        errors: list[OSError] = []
        for child in list(self._children.values()):
            try:
                child.close()
            except OSError as exc:
                errors.append(exc)
        state = self._state
        if not state.closed:
            if state.fd < 0:
                # Forked child that never wrote: nothing to close.
                state.closed = True
            else:
                state.close()
            self._finalizer.detach()
            try:
                state.raise_error()
            except OSError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def child(self, name: str) -> FileSink:
        sink = self._children.get(name)
        if sink is not None:
            return sink
        check_run_name(name)
        # Locked: two threads logging a new sub-run at once must share one file, or records of
        # the loser would miss flush() and close().
        with self._state.children_lock:
            sink = self._children.get(name)
            if sink is not None:
                return sink
            suffix, flush_secs, max_queue, max_pending_bytes = self._options
            sink = FileSink(
                os.path.join(self._state.directory, name),
                suffix,
                flush_secs=flush_secs,
                max_queue=max_queue,
                max_pending_bytes=max_pending_bytes,
            )
            self._children[name] = sink
        return sink
