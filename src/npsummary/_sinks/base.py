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
  workers included), on ``SIGTERM`` (``multiprocessing.Pool.terminate()``) and, by the background
  thread, when a sink is garbage collected (see ``_flusher``).
* Nothing accepted is lost to an interruption: a ``KeyboardInterrupt`` (or any exception) in the
  middle of a write leaves the records pending and the file holding complete records only (see
  ``_eventfile``). A ``write`` that returns before ``close`` returns is written by it; a later one
  raises ``ValueError``.
* Signal handlers and finalizers may log, flush and close from inside npsummary's own calls on
  their thread: they never wait for a lock that thread holds.
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

import os
import weakref
from typing import Protocol, runtime_checkable

from .._common.errors import EventWriteError
from .eventfile import SOURCE_WRITER as SOURCE_WRITER
from .eventfile import EventFile
from .eventfile import hostname as hostname
from .flusher import FLUSHER, busy, run_deferred_signal
from .flusher import Flusher as Flusher
from .flusher import install_exit_hooks as install_exit_hooks
from .pending import PendingState as PendingState

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


class FileSink:
    """An :class:`EventSink` appending to a new event file in ``directory``.

    Thread-safe. Calls made by a signal handler or a finalizer that interrupted its own thread
    inside this sink never wait for its locks: ``write`` queues the record lock-free (written by
    the background thread, in order), ``flush`` asks the background thread to write and returns,
    and ``close`` hands the file to the background thread to write and close.

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
        self._state = EventFile(
            os.fspath(directory), filename_suffix, flush_secs, max_queue, max_pending_bytes
        )
        FLUSHER.register(self._state)
        # A sink dropped without close() is closed by the background thread: its finalizer runs
        # wherever the garbage collector does, so it only enqueues (no lock, no I/O).
        self._finalizer = weakref.finalize(self, FLUSHER.retire, self._state)
        self._finalizer.atexit = False  # at exit the pending records are written anyway
        self._children: dict[str, FileSink] = {}

    @property
    def path(self) -> str:
        """Path of the event file currently written."""
        return self._state.path

    @property
    def directory(self) -> str:
        return self._state.directory

    def write(self, payload: bytes) -> None:
        """Queue one serialized event.

        Raises:
          EventWriteError: an earlier write of this file failed (the error is raised once).
          ValueError: the sink is closed (or being closed by another thread).
        """
        state = self._state
        b = busy
        if b.depth:  # re-entered: never wait for a lock this thread may hold
            state.add_deferred(payload)
            return
        if state.error is not None or state.dropped:
            state.raise_error()
        if state.fd < 0:
            state.reopen_after_fork()
        if state.pending_bytes > state.max_pending_bytes and not state.failing:
            # Logging outpaces the disk: write in the caller rather than drop. Records are
            # dropped (and counted in the error) only while writes keep failing.
            state.drain(fsync=False)
        # The hot path, inline. The thread is marked busy before the lock is taken and
        # unmarked after it is released (see _flusher); the first statement of `finally` has
        # no point where a signal handler could run and skip it.
        b.depth = 1
        try:
            with state.lock:
                if state.closing:
                    raise ValueError(f"event file {state.path or state.directory} is closed")
                wake = state.enqueue(payload, len(state.pending) >= state.max_queue)
        finally:
            b.depth = 0
            if b.deferred_signal is not None:
                run_deferred_signal()
        if wake:
            FLUSHER.wake()

    def flush(self) -> None:
        """Write and fsync this file and its sub-runs; a failure in one does not stop the others,
        and the first error is raised after all were tried."""
        if busy.depth:  # re-entered: the background thread writes as soon as this thread can
            FLUSHER.wake()
            return
        state = self._state
        errors: list[OSError] = []
        if not state.closing:
            try:
                if state.fd < 0:
                    state.reopen_after_fork()
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
        the first error. Idempotent. A ``write`` that returned before ``close`` returns is in the
        file; a later one raises ``ValueError``."""
        errors: list[OSError] = []
        for child in list(self._children.values()):
            try:
                child.close()
            except OSError as exc:
                errors.append(exc)
        state = self._state
        self._finalizer.detach()
        if busy.depth:  # re-entered: refuse further writes now, write and close in background
            state.closing = True
            FLUSHER.retire(state)
        elif not state.closed:
            state.close()
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
