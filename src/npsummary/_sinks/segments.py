"""The segment sink: a run on a store that cannot append, as a sequence of event files.

Each segment is a complete event file (``file_version`` record first), uploaded once and never
rewritten, named

    ``events.out.tfevents.{time:010d}.{host}.{pid}.{counter:04d}.{random:016x}.{seq:08d}{suffix}``

so that a run's names sort in write order (TensorBoard reads a run's files in name order and never
returns to an earlier one; segments are therefore also uploaded strictly in order).

* The first segment (the ``file_version`` record alone) is uploaded before the constructor of a
  run returns, so a wrong bucket, missing credentials or a missing package fail at once, naming
  the URL, and TensorBoard lists the run immediately.
* Logged records wait in memory. A segment is sealed and uploaded by a background thread (one for
  all remote sinks, apart from the local files' one, so a slow server never delays a local file)
  when the open records reach ``segment_bytes`` or ``flush_secs`` after the first of them,
  whichever comes first; :meth:`SegmentSink.flush` uploads the open records at once. Bytes
  uploaded are the event bytes plus one ~50-byte header per segment, at any run length.
* Names are unique without relying on PIDs (containers on one host share them): the random part
  is drawn for each writer (again after ``fork()``). An upload never replaces an existing object:
  it is a conditional put where fsspec offers one (``pipe_file(mode="create")``), else a check
  first (through boto3 alone: both, for S3-compatible servers that ignore the condition). If the
  name is taken by other bytes, this writer's waiting segments get a new stem (sorting after its
  earlier ones) and are uploaded under it.
* A failed upload is retried with the same name and the same bytes (a retry after a lost response
  finds its own object and counts it as uploaded, never duplicates), with exponential backoff in
  the background and at every ``flush()``. Segments wait, in order, up to
  ``max_pending_bytes``; beyond it new records are dropped and counted. The error is raised by
  the next ``write``, ``flush`` or ``close`` as :class:`EventWriteError` naming the object's URL.
* Open records are uploaded at interpreter exit. After ``fork()`` a child starts segments of its
  own on first use.
"""

from __future__ import annotations

import errno
import weakref
from typing import Any

from .._common.convert import check_filename_suffix
from .._common.errors import EventWriteError
from .base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_PENDING_BYTES
from .flusher import busy, run_deferred_signal
from .location import RunDirectory, open_location
from .segment_state import DEFAULT_SEGMENT_BYTES, FRAMING, UPLOADER, SegmentState
from .threaded import ThreadedSink

__all__ = ["DEFAULT_SEGMENT_BYTES", "SegmentSink"]


class SegmentSink(ThreadedSink):
    """An :class:`EventSink` writing a run to a URL as a sequence of segment files.

    Args:
      url: run directory as an fsspec URL (``s3://bucket/run``, ``memory://run``); an ``s3://``
        URL is written through boto3 where s3fs is missing and boto3 is installed.
      filename_suffix: appended to every segment name verbatim.
      flush_secs: longest time a logged record waits before its segment is uploaded.
      segment_bytes: open records that make a segment full and upload it at once.
      max_pending_bytes: memory bound on records not yet uploaded while uploads keep failing.
      filesystem: an fsspec filesystem to write through instead of the one the URL names (e.g.
        ``s3fs.S3FileSystem(profile="ml")``); ``url`` is then a path or URL on it.

    Raises:
      ImportError: fsspec, or the package of the URL's protocol, is missing (named; for
        ``s3://``, neither s3fs nor boto3 is installed).
      EventWriteError: the first segment could not be uploaded (the URL is named).
    """

    def __init__(
        self,
        url: str,
        filename_suffix: str = "",
        *,
        flush_secs: float = DEFAULT_FLUSH_SECS,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
        filesystem: Any = None,
    ) -> None:
        filename_suffix = check_filename_suffix(filename_suffix)
        if isinstance(segment_bytes, bool) or not isinstance(segment_bytes, int):
            raise TypeError(f"segment_bytes must be an int, got {segment_bytes!r}")
        if segment_bytes < 1:
            raise ValueError(f"segment_bytes must be >= 1, got {segment_bytes}")
        options = (filename_suffix, flush_secs, segment_bytes, max_pending_bytes)
        self._setup(open_location(url, filesystem), options)
        self._upload_header()

    def _setup(self, location: RunDirectory, options: tuple[str, float, int, int]) -> None:
        suffix, flush_secs, segment_bytes, max_pending_bytes = options
        self._options = options
        self._state: SegmentState = SegmentState(
            location, suffix, flush_secs, segment_bytes, max_pending_bytes
        )
        self._state.start()
        self._init_children()
        UPLOADER.register(self._state)
        # Only enqueues: a finalizer runs wherever the GC does and must take no lock (_flusher).
        self._finalizer = weakref.finalize(self, UPLOADER.retire, self._state)

    def _upload_header(self) -> None:
        state = self._state
        state._cut([])  # no other thread knows this state yet: no lock
        state.drain(fsync=True)
        if state.sealed:
            error = state.error
            state.error = None
            self._finalizer.detach()
            state.give_up()
            UPLOADER.unregister(state)
            raise EventWriteError(
                getattr(error, "errno", None) or errno.EIO,
                f"cannot write to {state.error_path}: {error}",
            ) from error

    @property
    def url(self) -> str:
        """URL of the run directory."""
        return self._state.location.url

    @property
    def uploaded_bytes(self) -> int:
        """Bytes of segments uploaded so far by this sink (sub-runs not included)."""
        return self._state.uploaded_bytes

    @property
    def uploaded_objects(self) -> int:
        """Segments uploaded so far by this sink (sub-runs not included)."""
        return self._state.uploaded_objects

    def uploaded_segments(self) -> list[str]:
        """Names of the segments this sink uploaded so far, in order (sub-runs not included)."""
        return list(self._state.uploaded_names)

    def read_segment(self, name: str) -> bytes:
        """The bytes of the segment ``name`` of this run, as stored.

        Raises:
          FileNotFoundError: no such object (e.g. removed from the store).
        """
        data = self._state.location.read(name)
        if data is None:
            raise FileNotFoundError(self._state.location.url_of(name))
        return data

    def write(self, payload: bytes) -> None:
        """Queue one serialized event.

        Raises:
          EventWriteError: an earlier upload of this run failed (the error is raised once).
          ValueError: the sink is closed (or being closed).
        """
        state = self._state
        b = busy
        if b.depth:  # re-entered: never wait for a lock this thread may hold (see _flusher)
            state.add_deferred(payload)
            return
        if state.error is not None or state.dropped:
            state.raise_error()
        if not state.stem or state.closing:
            self._restart()
        if state.pending_bytes > state.max_pending_bytes and not state.failing:
            state.drain(fsync=False)  # uploads are slower than logging: wait rather than drop
        b.depth = 1  # as FileSink.write: marked before the lock, unmarked after it is released
        try:
            with state.lock:
                if state.closing:
                    raise ValueError(f"event files at {state.location.url} are closed")
                full = state.open_bytes + len(payload) + FRAMING >= state.segment_bytes
                wake = state.enqueue(payload, full)
                if state.pending and state.pending[-1] is payload:
                    state.open_bytes += len(payload) + FRAMING
        finally:
            b.depth = 0
            if b.deferred_signal is not None:
                run_deferred_signal()
        if wake:
            UPLOADER.wake()

    def _restart(self) -> None:
        state = self._state
        if state.closing:
            raise ValueError(f"event files at {state.location.url} are closed")
        b = busy
        b.depth += 1
        try:
            with state.lock:
                if not state.stem:
                    state.start()  # a forked child: segments of its own
        finally:
            b.depth -= 1
            if not b.depth and b.deferred_signal is not None:
                run_deferred_signal()
        UPLOADER.register(state)

    def _new_child(self, name: str) -> SegmentSink:
        # A sub-run's first segment carries its header: no upload in a logging call.
        sink = SegmentSink.__new__(SegmentSink)
        sink._setup(self._state.location.child(name), self._options)
        return sink
