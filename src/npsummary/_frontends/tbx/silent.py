"""The ``SummaryWriter`` of a rank that writes nothing: the members whose real counterparts return
something other than None, with values of the same types (see :mod:`npsummary._core.ranks`).

A DDP script that works on rank 0 must work unchanged on every other rank: ``log_dir``,
``file_writer``, ``with writer.use_metadata(...)``, ``_get_file_writer().add_summary(...)`` and
the rest are there, cost nothing and write nothing.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..._common.convert import check_tag
from ..._core.ranks import silent_context
from ..._sinks.base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, NullSink
from .file_writer import MetadataDefaults, RunFileWriter

__all__ = ["silent_members"]


def _silent_file_writer(self: Any) -> RunFileWriter:
    # A real file writer over a sink that discards everything: its calls check their input as on
    # rank 0, and write nothing.
    sink = NullSink()
    return RunFileWriter(self._silent_logdir, lambda: sink, MetadataDefaults(), sink.close)


def _collective_histogram(
    self: Any,
    tag: Any,
    values: Any,
    global_step: Any = None,
    bins: Any = "tensorflow",
    walltime: Any = None,
    max_bins: Any = None,
    *,
    nonfinite: Any = "warn",
    process_group: Any = None,
) -> None:
    # A DTensor's or a process group's histogram is a collective call: this rank's part must
    # join the others' even though nothing is written here.
    from ..._summaries.histogram import is_spread, tensorboardx_histogram

    if is_spread(values, process_group):
        tensorboardx_histogram(check_tag(tag), values, bins, max_bins, process_group)


def _collective_distribution(
    self: Any,
    tag: Any,
    values: Any,
    global_step: Any = None,
    walltime: Any = None,
    buckets: Any = None,
    *,
    description: Any = None,
    nonfinite: Any = "warn",
    process_group: Any = None,
) -> None:
    from ..._summaries.histogram import is_spread, tf2_histogram_value

    if is_spread(values, process_group):
        tf2_histogram_value(check_tag(tag), values, buckets, None, process_group)


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
        "add_histogram": _collective_histogram,
        "add_distribution": _collective_distribution,
    }
