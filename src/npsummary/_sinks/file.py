"""The local event file sink: :class:`FileSink` appends serialized events, framed as TFRecords,
to one event file.

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

from .._common.convert import check_filename_suffix
from .base import (
    DEFAULT_FLUSH_SECS,
    DEFAULT_MAX_PENDING_BYTES,
    DEFAULT_MAX_QUEUE,
)
from .eventfile import SOURCE_WRITER as SOURCE_WRITER
from .eventfile import EventFile
from .eventfile import hostname as hostname
from .flusher import FLUSHER, busy, run_deferred_signal
from .threaded import ThreadedSink

__all__ = ["FileSink"]


class FileSink(ThreadedSink):
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
        filename_suffix = check_filename_suffix(filename_suffix)
        self._options = (filename_suffix, flush_secs, max_queue, max_pending_bytes)
        self._state: EventFile = EventFile(
            os.fspath(directory), filename_suffix, flush_secs, max_queue, max_pending_bytes
        )
        FLUSHER.register(self._state)
        # A sink dropped without close() is closed by the background thread: its finalizer runs
        # wherever the garbage collector does, so it only enqueues (no lock, no I/O).
        self._finalizer = weakref.finalize(self, FLUSHER.retire, self._state)
        self._finalizer.atexit = False  # at exit the pending records are written anyway
        self._init_children()

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
        if (
            state.error is not None
            or state.dropped
            or state.fd < 0
            or state.pending_bytes > state.max_pending_bytes
        ):
            self._before_write(state)
        # The hot path, inline. The thread is marked busy before the lock is taken and
        # unmarked after it is released (see _flusher); the first statement of `finally` has
        # no point where a signal handler could run and skip it.
        b.depth = 1
        try:
            with state.lock:
                if state.closing:
                    raise ValueError(f"event file {state.path or state.directory} is closed")
                pending = state.pending
                if (
                    state.deadline  # the batch has started (the flusher knows when to write it)
                    and (state.wake_sent or len(pending) < state.max_queue)
                    and not state.deferred
                    and state.pending_bytes <= state.max_pending_bytes
                ):
                    # What enqueue() does when there is nothing to decide: append and count.
                    pending.append(payload)
                    state.pending_bytes += len(payload)
                    wake = False
                else:
                    wake = state.enqueue(payload, len(pending) >= state.max_queue)
        finally:
            b.depth = 0
            if b.deferred_signal is not None:
                run_deferred_signal()
        if wake:
            FLUSHER.wake()

    @staticmethod
    def _before_write(state: EventFile) -> None:
        """The rare checks of ``write``: a pending error, a fork, records piling up."""
        if state.error is not None or state.dropped:
            state.raise_error()
        if state.fd < 0:
            state.reopen_after_fork()
        if state.pending_bytes > state.max_pending_bytes and not state.failing:
            # Logging outpaces the disk: write in the caller rather than drop. Records are
            # dropped (and counted in the error) only while writes keep failing.
            state.drain(fsync=False)

    def _flush_state(self) -> None:
        state = self._state
        if not state.closing:
            if state.fd < 0:
                state.reopen_after_fork()
            state.drain(fsync=True)
            state.raise_error()

    def _new_child(self, name: str) -> FileSink:
        suffix, flush_secs, max_queue, max_pending_bytes = self._options
        return FileSink(
            os.path.join(self._state.directory, name),
            suffix,
            flush_secs=flush_secs,
            max_queue=max_queue,
            max_pending_bytes=max_pending_bytes,
        )
