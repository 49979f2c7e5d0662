"""The EventSink seam: what every sink implements, the defaults the sinks share, the two sinks
that keep nothing on disk (:class:`MemorySink`, :class:`NullSink`), and the check that keeps a
sub-run name inside its logdir.

An :class:`EventSink` receives serialized ``Event`` payloads. The sinks that write files are
:class:`~npsummary._sinks.file.FileSink` (one local event file) and
:class:`~npsummary._sinks.segments.SegmentSink` (segment files on an fsspec URL).
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_FLUSH_SECS",
    "DEFAULT_MAX_PENDING_BYTES",
    "DEFAULT_MAX_QUEUE",
    "EventSink",
    "MemorySink",
    "NullSink",
    "check_run_name",
    "check_run_path",
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
        """Return a sink for the sub-run ``name`` (one path component, or safe components
        joined by ``/`` for a nested sub-run) beside this one."""


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
        check_run_path(name)
        if name not in self.children:
            self.children[name] = MemorySink()
        return self.children[name]


class NullSink:
    """An :class:`EventSink` that discards everything: ``SummaryWriter(write_to_disk=False)`` and
    the sink of a rank that does not write."""

    def write(self, payload: bytes) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def child(self, name: str) -> NullSink:
        return self


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


def check_run_path(name: str) -> str:
    """Return ``name`` if it is a relative path of safe components joined by ``/`` (a nested
    sub-run, as tensorboardX's ``add_scalars`` writes ``<main_tag>/<key>``), else raise; each
    component must pass :func:`check_run_name`."""
    if isinstance(name, str) and "/" in name:
        for part in name.split("/"):
            check_run_name(part)
        return name
    return check_run_name(name)
