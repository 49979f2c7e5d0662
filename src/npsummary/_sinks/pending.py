"""Records waiting for a background writer, and the error bookkeeping every sink shares.

A :class:`PendingState` is what a flusher (:class:`~npsummary._sinks.flusher.Flusher`) holds for one
destination: the records queued by ``write``, the failure streak that sets the retry backoff,
and the error the next call raises. Subclasses write the records (:meth:`PendingState.drain`)
and release the destination (:meth:`PendingState.close`).

Sections holding ``lock`` from outside a flusher mark their thread busy (see ``_flusher``), so
that a signal handler or finalizer interrupting them never waits for that lock; records they log
wait in ``deferred`` (a lock-free deque) until the next section takes them, in order.
"""

from __future__ import annotations

import collections
import errno
import threading
import time

from .._common.errors import EventWriteError
from .flusher import FLUSHER, Flusher, busy, run_deferred_signal

__all__ = ["MAX_RETRY_SECS", "PendingState"]

#: Retries of a failing write back off exponentially from flush_secs up to this many seconds.
MAX_RETRY_SECS = 30.0


class PendingState:
    """Queued records and error fields of one destination (see the module docstring)."""

    #: What ``raise_error`` calls the destination ("event file", "remote event file").
    noun = "event file"
    #: The background thread that writes this destination.
    flusher: Flusher = FLUSHER

    def __init__(self, flush_secs: float, max_queue: int, max_pending_bytes: int) -> None:
        self.flush_secs = flush_secs
        self.max_queue = max_queue
        self.max_pending_bytes = max_pending_bytes
        self.lock = threading.Lock()  # guards the pending list and the error fields
        self.io_lock = threading.Lock()  # serializes writes to the destination; held first
        # Serializes creating sub-run sinks. Re-entrant: a signal handler creating a sub-run
        # while its thread creates another may pass; the worst outcome is a second file.
        self.children_lock = threading.RLock()
        self.pending: list[bytes] = []
        self.deferred: collections.deque[bytes] = collections.deque()
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
        self.closing = False  # close() has begun: later writes are refused
        self.closed = False
        self.path = ""

    def drain(self, *, fsync: bool) -> None:
        """Write every pending record (``fsync``: make it durable now)."""
        raise NotImplementedError

    def close(self) -> None:
        """Write what is pending, release the destination and unregister. Idempotent."""
        raise NotImplementedError

    # -- bookkeeping (caller holds ``lock``) ----------------------------------------------------

    def record_failure(self, exc: BaseException, path: str) -> None:
        """Remember a failed write and schedule a retry."""
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
        """Forget the failure streak once a write went through."""
        self.pending_bytes -= written_bytes
        self.failing = False
        self.failures = 0

    def take_deferred(self) -> None:
        """Move records logged re-entrantly into ``pending``."""
        deferred = self.deferred
        while deferred:
            payload = deferred.popleft()
            self.pending.append(payload)
            self.pending_bytes += len(payload)

    def enqueue(self, payload: bytes, ready: bool) -> bool:
        """Queue ``payload``; return whether to wake the flusher.

        ``ready``: the queue is worth writing before the deadline (e.g. more than max_queue).
        """
        if self.deferred:
            self.take_deferred()
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

    def held_records(self) -> int:
        """Records kept for a later write."""
        return len(self.pending)

    def where(self) -> str:
        """The destination, for messages."""
        return self.path

    def add_deferred(self, payload: bytes) -> None:
        """Queue one record from code that interrupted its thread inside a locked section:
        lock-free, written by the flusher (woken) after the records already pending."""
        if self.closing:
            raise ValueError(f"{self.noun} {self.where()} is closed")
        self.deferred.append(payload)
        self.flusher.wake()

    # -- sections (they take ``lock``) ------------------------------------------------------------

    def note_failure(self, exc: BaseException) -> None:
        """:meth:`record_failure` for the destination's current path."""
        b = busy
        b.depth += 1
        try:
            with self.lock:
                self.record_failure(exc, self.path)
        finally:
            b.depth -= 1  # inline: a KeyboardInterrupt could hit the entry of a called function
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()

    def raise_error(self) -> None:
        """Raise the pending error, if any; dropped or unwritten records are never silent."""
        b = busy
        b.depth += 1
        try:
            with self.lock:
                exc, self.error = self.error, None
                dropped, self.dropped = self.dropped, 0
                unwritten, self.unwritten = self.unwritten, 0
                kept = self.held_records()
                cause = exc or self.last_error
                path = self.error_path or self.path
        finally:
            b.depth -= 1
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
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

    def give_up(self) -> None:
        """At close: count what is still unwritten (reported by close) and free the memory."""
        b = busy
        b.depth += 1
        try:
            with self.lock:
                self.take_deferred()
                self.closed = True
                self.unwritten += self.held_records()
                self.pending = []
                self.pending_bytes = 0
        finally:
            b.depth -= 1
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()

    def reset_after_fork(self) -> None:
        self.lock = threading.Lock()
        self.io_lock = threading.Lock()
        self.children_lock = threading.RLock()
        self.pending = []
        self.deferred = collections.deque()
        self.pending_bytes = 0
        self.wake_sent = False
        self.deadline = 0.0
        self.error = None
        self.failing = False
        self.failures = 0
        self.dropped = 0
        self.unwritten = 0
        self.path = ""
