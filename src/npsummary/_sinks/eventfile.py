"""One open event file: its descriptor, its pending records and the rules for writing them.

Records reach the file only through :meth:`EventFile.drain`, called by the shared flusher
thread, by ``flush()`` and ``close()``, and by a writer outpacing the disk. The invariants that
keep every record written exactly once, whatever is interrupted where:

* ``size`` is the length of the complete records in the file. A write attempt sets ``dirty``
  first; the next attempt cuts the file back to ``size`` before writing, so a batch cut short
  by an error, ``KeyboardInterrupt`` or ``MemoryError`` leaves nothing behind.
* A batch moves from ``pending`` to ``inflight`` in one statement and leaves ``inflight`` only
  in the statement that commits it (advancing ``size``). An attempt that does not commit, for
  any reason, leaves its records in ``inflight``, where the next attempt takes them first.
* ``close()`` marks the file ``closing`` under the lock before its last write: a record accepted
  before that is written by it; a later ``write`` raises ``ValueError``.
* Records logged by code that interrupted its own thread inside a locked section (a signal
  handler, a finalizer) wait in ``deferred``, a lock-free deque, and join ``pending`` at the next
  locked section, in order.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import time

from .._format.record import frame_record, frame_records
from .._format.wire import encode_file_version_event
from .flusher import FLUSHER, busy, run_deferred_signal
from .pending import PendingState

__all__ = ["SOURCE_WRITER", "EventFile", "hostname", "next_counter"]

SOURCE_WRITER = "npsummary"

# next() of a count is atomic under the GIL: no lock, so naming a file is safe anywhere.
_file_counter = itertools.count()


def next_counter() -> int:
    """The next file counter of this process (shared by every kind of sink)."""
    return next(_file_counter)


def hostname() -> str:
    """The host name TensorFlow puts in event file names (``socket.gethostname()``)."""
    if hasattr(os, "uname"):
        return os.uname().nodename  # same value; avoids importing socket (~3 ms)
    import socket

    return socket.gethostname()


def create_event_file(directory: str, suffix: str, now: float) -> tuple[str, int]:
    """Create a new, empty event file exclusively; return its path and an open descriptor."""
    os.makedirs(directory, exist_ok=True)
    host = hostname()
    pid = os.getpid()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_BINARY", 0)
    while True:
        # The counter is zero-padded (TF's is not): TensorBoard's Python loader reads a run's
        # files in name order and never returns to an earlier one, so a writer reopened in the
        # same second as file ".9" must not be named ".10", which sorts before it.
        name = f"events.out.tfevents.{int(now):010d}.{host}.{pid}.{next_counter():04d}{suffix}"
        path = os.path.join(directory, name)
        try:
            return path, os.open(path, flags, 0o666)
        except FileExistsError:
            continue


class EventFile(PendingState):
    """Everything the background thread needs; kept apart from ``FileSink`` so that GC can
    collect the sink while the flusher still holds this. ``pending_bytes`` counts ``pending``
    and ``inflight`` together."""

    def __init__(
        self, directory: str, suffix: str, flush_secs: float, max_queue: int, max_pending_bytes: int
    ) -> None:
        super().__init__(flush_secs, max_queue, max_pending_bytes)
        self.directory = directory
        # Files are made and checked through the absolute path: a relative directory names the
        # one of this moment, as the open file does after an os.chdir (messages keep the form
        # the user gave).
        self.absolute_directory = os.path.abspath(directory)
        self.absolute_path = ""
        self.suffix = suffix
        self.inflight: list[bytes] = []  # taken by a write attempt that has not committed
        self.fd = -1
        self.size = 0  # bytes of complete records in the file
        self.dirty = False  # bytes past `size` may be in the file
        self.open_new_file()

    # -- the file ---------------------------------------------------------------------------------

    def open_new_file(self) -> None:
        now = time.time()
        absolute_path, fd = create_event_file(self.absolute_directory, self.suffix, now)
        path = os.path.join(self.directory, os.path.basename(absolute_path))
        view = memoryview(frame_record(encode_file_version_event(float(int(now)), SOURCE_WRITER)))
        size = len(view)
        try:
            while view:
                view = view[os.write(fd, view) :]
        except BaseException:
            # Leave no half-written file behind (we created it, exclusively, a moment ago).
            with contextlib.suppress(OSError):
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(absolute_path)
            raise
        self.path, self.fd, self.size, self.dirty = path, fd, size, False
        self.absolute_path = absolute_path

    def _file_removed(self) -> bool:
        try:
            os.stat(self.absolute_path)
        except (FileNotFoundError, NotADirectoryError):
            return True
        except OSError:
            return False
        return False

    def _replace_removed_file(self) -> None:
        # The file (or its directory) was deleted while open: appending to the descriptor would
        # write into the void. Start a new file, as TensorFlow's EventsWriter does, and report it.
        old_fd, old_path = self.fd, self.path
        self.open_new_file()  # raises if the directory cannot be recreated: retried later
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
        """Write ``payloads`` after the committed records and commit them; on any exception the
        file keeps only complete records (now, or at the next attempt if this one is cut short)."""
        data = frame_records(payloads)
        if self.dirty:
            os.ftruncate(self.fd, self.size)
        self.dirty = True
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
            if fsync:
                os.fsync(self.fd)
        except OSError:
            # Cut a partly written batch back to its last complete record now, so a file that
            # stays failing never shows a torn record in its middle.
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.size)
                self.dirty = False
            raise
        # The commit: one statement, so an interruption leaves the batch either wholly pending
        # (and cut back at the next attempt) or wholly written.
        self.size, self.inflight, self.dirty = self.size + len(data), [], False

    # -- records ----------------------------------------------------------------------------------

    def drain(self, *, fsync: bool) -> None:
        """Write every pending record; on failure keep them (bounded) and remember the error.

        ``pending_bytes`` keeps counting the batch while it is written, so the memory bound holds
        for queued plus in-flight records.
        """
        b = busy
        b.depth += 1
        try:
            with self.io_lock:
                self._drain_locked(fsync)
        finally:
            b.depth -= 1  # inline: a KeyboardInterrupt could hit the entry of a called function
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()

    def _drain_locked(self, fsync: bool) -> None:
        with self.lock:
            if self.deferred:
                self.take_deferred()
            if self.pending:
                self.inflight, self.pending = self.inflight + self.pending, []
            self.wake_sent = False
            self.deadline = 0.0
        if self.fd < 0 or (not self.inflight and not fsync):
            return
        try:
            if self._file_removed():
                self._replace_removed_file()
            self._append(self.inflight, fsync=fsync)
        except OSError as exc:
            self.note_failure(exc)
        else:
            with self.lock:
                self.pending_bytes = sum(map(len, self.pending))
                self.failing = False
                self.failures = 0

    def held_records(self) -> int:
        return len(self.pending) + len(self.inflight)

    def where(self) -> str:
        return self.path or self.directory

    # -- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        """Write everything accepted so far, then release the file. Idempotent."""
        b = busy
        b.depth += 1
        try:
            with self.io_lock:
                with self.lock:
                    if self.closed:
                        return
                    self.closing = True  # from here on write() refuses
                if self.fd >= 0:
                    self._drain_locked(fsync=True)
                with self.lock:
                    # A failed last write: report the loss at this close() and free the memory.
                    self.take_deferred()
                    self.unwritten += len(self.inflight) + len(self.pending)
                    self.inflight, self.pending, self.pending_bytes = [], [], 0
                    self.closed = True
                if self.fd >= 0:
                    with contextlib.suppress(OSError):
                        os.close(self.fd)
                    self.fd = -1
        finally:
            b.depth -= 1  # inline: a KeyboardInterrupt could hit the entry of a called function
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
        FLUSHER.unregister(self)

    def reopen_after_fork(self) -> None:
        """A forked child's first write: start a file of its own."""
        b = busy
        b.depth += 1
        try:
            with self.io_lock:
                if self.closing:
                    raise ValueError(f"event file {self.path or self.directory} is closed")
                if self.fd < 0:
                    self.open_new_file()
        finally:
            b.depth -= 1  # inline: a KeyboardInterrupt could hit the entry of a called function
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
        FLUSHER.register(self)

    def reset_after_fork(self) -> None:
        super().reset_after_fork()
        self.inflight = []
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
        self.fd = -1
        self.dirty = False
