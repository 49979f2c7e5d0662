"""The ``SummaryWriter`` of a rank that writes nothing: the members whose real counterparts return
something other than None, with values of the same types (see :mod:`npsummary._core.ranks`).

A DDP script that works on rank 0 must work unchanged on every other rank: ``log_dir``,
``file_writer``, ``with writer.use_metadata(...)``, ``_get_file_writer().add_summary(...)`` and
the rest are there, cost nothing and write nothing.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..._core.ranks import silent_context
from ..._sinks.base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, NullSink
from .file_writer import MetadataDefaults, RunFileWriter

__all__ = ["silent_members"]


def _silent_file_writer(self: Any) -> RunFileWriter:
    # A real file writer over a sink that discards everything: its calls check their input as on
    # rank 0, and write nothing.
    sink = NullSink()
    return RunFileWriter(self._silent_logdir, lambda: sink, MetadataDefaults(), sink.close)


def silent_members(cls: type) -> dict[str, Any]:
    """``name -> member`` for the silent subclass of ``cls`` (a ``SummaryWriter``)."""
    logdir = property(lambda self: self._silent_logdir)
    return {
        "logdir": logdir,
        "log_dir": logdir,
        "purge_step": property(lambda self: None),
        "max_queue": property(lambda self: DEFAULT_MAX_QUEUE),
        "flush_secs": property(lambda self: float(DEFAULT_FLUSH_SECS)),
        "filename_suffix": property(lambda self: ""),
        "default_bins": inspect.getattr_static(cls, "default_bins"),  # pure: kept as it is
        "_get_file_writer": _silent_file_writer,
        "file_writer": property(_silent_file_writer),
        "all_writers": property(lambda self: {self._silent_logdir: _silent_file_writer(self)}),
        "use_metadata": silent_context,
    }
