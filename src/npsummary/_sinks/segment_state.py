"""The state behind a :class:`~npsummary._sinks.segments.SegmentSink`: its open records, its sealed
segments waiting for upload, and the one background uploader thread of all remote sinks.

See :mod:`npsummary._sinks.segments` for the naming, upload and retry rules.
"""

from __future__ import annotations

import os
import secrets
import time
from collections import deque

from .._format.record import frame_record
from .._format.wire import encode_file_version_event
from .eventfile import SOURCE_WRITER, hostname
from .eventfile import next_counter as _next_counter
from .flusher import Flusher, busy, install_exit_hooks, run_deferred_signal
from .location import RunDirectory
from .pending import PendingState

__all__ = ["DEFAULT_SEGMENT_BYTES", "FRAMING", "UPLOADER", "SegmentState"]

#: Open records that make a segment full and upload it before ``flush_secs`` has passed.
DEFAULT_SEGMENT_BYTES = 4 << 20
# One record's framing: length (8), its CRC (4), the payload's CRC (4).
FRAMING = 16


class _Segment:
    """A sealed segment: its object name, its records until framed, then its bytes."""

    __slots__ = ("data", "name", "payload_bytes", "records")

    def __init__(self, name: str, records: list[bytes]) -> None:
        self.name = name
        self.records = records
        self.payload_bytes = sum(len(r) for r in records)
        self.data = b""

    def encode(self) -> bytes:
        if not self.data:
            header = frame_record(encode_file_version_event(float(int(time.time())), SOURCE_WRITER))
            self.data = b"".join([header, *[frame_record(r) for r in self.records]])
            self.records = [b""] * len(self.records)  # keep the count, free the payloads
        return self.data


class _Uploader(Flusher):
    """The remote sinks' background thread; at exit it uploads open records too."""

    def drain_all(self) -> None:
        if busy.depth:  # cannot upload from inside an upload; that call's end will
            return
        for state in list(self._states):
            state.drain(fsync=True)


UPLOADER = _Uploader("npsummary-uploader")
install_exit_hooks(UPLOADER)


class SegmentState(PendingState):
    """Open records, sealed segments waiting for upload, and the upload loop.

    As for local files (``_eventfile``), every section holding ``lock`` or ``io_lock`` marks its
    thread busy, so a signal handler or finalizer that interrupts it never waits for them.
    """

    noun = "remote event file"
    flusher = UPLOADER

    def __init__(
        self,
        location: RunDirectory,
        suffix: str,
        flush_secs: float,
        segment_bytes: int,
        max_pending_bytes: int,
    ) -> None:
        super().__init__(flush_secs, 0, max_pending_bytes)
        self.location = location
        self.suffix = suffix
        self.segment_bytes = segment_bytes
        self.sealed: deque[_Segment] = deque()
        self.open_bytes = 0  # framed size of the open records (``pending``)
        self.uploaded_bytes = 0
        self.uploaded_objects = 0
        self.uploaded_names: list[str] = []  # for export_scalars_to_json (names are short)
        self.path = location.url
        self.stem = ""
        self.seq = 0

    def start(self) -> None:
        """Name this writer's segments (again after fork, or after a name collision).

        PIDs repeat across containers on one host, so a random part makes the names unique
        without them; the counter before it keeps a restarted stem sorting after the old one.
        """
        self.stem = (
            f"events.out.tfevents.{int(time.time()):010d}.{hostname()}.{os.getpid()}."
            f"{_next_counter():04d}.{secrets.token_hex(8)}"
        )
        self.seq = 0

    def held_records(self) -> int:
        return len(self.pending) + sum(len(s.records) for s in self.sealed)

    def take_deferred(self) -> None:
        before = len(self.pending)
        super().take_deferred()
        self.open_bytes += sum(len(r) + FRAMING for r in self.pending[before:])

    def _seal(self, full_only: bool) -> None:
        """Cut the open records into segments of at most ``segment_bytes`` (holding ``lock``)."""
        records, size, start = self.pending, 0, 0
        for index, record in enumerate(records):
            framed = len(record) + FRAMING
            if index > start and size + framed > self.segment_bytes:
                self._cut(records[start:index])
                start, size = index, 0
            size += framed
        if start < len(records) and not (full_only and size < self.segment_bytes):
            self._cut(records[start:])
            start, size = len(records), 0
        self.pending = records[start:]
        self.open_bytes = size

    def _cut(self, records: list[bytes]) -> None:
        self.sealed.append(_Segment(f"{self.stem}.{self.seq:08d}{self.suffix}", records))
        self.seq += 1

    def drain(self, *, fsync: bool) -> None:
        """Upload every sealed segment in order, stopping at the first failure.

        Woken early by a full segment, only full segments are sealed; otherwise (deadline,
        ``flush()``, exit, retry) every open record is.
        """
        b = busy
        b.depth += 1
        try:
            with self.io_lock:
                with self.lock:
                    if not self.stem:
                        return  # a forked child that never logged
                    if self.deferred:
                        self.take_deferred()
                    deadline_passed = 0.0 < self.deadline <= time.monotonic()
                    self._seal(full_only=self.wake_sent and not fsync and not deadline_passed)
                    self.wake_sent = False
                    if not self.pending:
                        self.deadline = 0.0
                self._upload_sealed()
        finally:
            b.depth -= 1  # inline: a KeyboardInterrupt could hit the entry of a called function
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()

    def _upload_sealed(self) -> None:
        renamed = False
        while True:
            with self.lock:
                if not self.sealed:
                    return
                segment = self.sealed[0]
            try:
                data = segment.encode()
                self.location.put(segment.name, data)
            except FileExistsError as exc:  # another writer's object: never replaced
                with self.lock:
                    self._rename_sealed()
                    if not renamed:
                        renamed = True
                        continue
                    self.record_failure(exc, self.location.url_of(segment.name))
                return
            except Exception as exc:  # any backend failure: keep the segment, retry later
                with self.lock:
                    self.record_failure(exc, self.location.url_of(segment.name))
                return
            with self.lock:
                self.sealed.popleft()
                self.record_success(segment.payload_bytes)
                self.uploaded_bytes += len(data)
                self.uploaded_objects += 1
                self.uploaded_names.append(segment.name)

    def _rename_sealed(self) -> None:
        """Give the segments not yet uploaded new names under a new stem (holding ``lock``); the
        next attempt uploads them there, after this run's earlier segments in name order."""
        self.start()
        for segment in self.sealed:
            segment.name = f"{self.stem}.{self.seq:08d}{self.suffix}"
            self.seq += 1

    def give_up(self) -> None:
        b = busy
        b.depth += 1
        try:
            with self.lock:
                self.unwritten += sum(len(s.records) for s in self.sealed)
                self.sealed.clear()
        finally:
            b.depth -= 1
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
        super().give_up()

    def close(self) -> None:
        """Upload everything accepted so far, then stop. Idempotent."""
        if self.closed:
            return
        self.closing = True  # from here on write() refuses (one statement: no lock needed)
        self.drain(fsync=True)
        b = busy
        b.depth += 1
        try:
            with self.io_lock:
                self.give_up()
        finally:
            b.depth -= 1
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
        UPLOADER.unregister(self)

    def reset_after_fork(self) -> None:
        super().reset_after_fork()
        self.sealed = deque()
        self.uploaded_names = []
        self.open_bytes = 0
        self.path = self.location.url
        self.stem = ""
        self.location.reset_after_fork()
