"""The writers of the ``tf.summary`` front end: ``create_file_writer``, the no-op writer,
and ``flush``.

As in TensorFlow, a writer made by :func:`create_file_writer` creates its file immediately;
``flush_millis`` defaults to 2000 (TensorFlow: 120000), ``max_queue`` to 10 and
``filename_suffix`` to ``.v2``. ``writer.as_default(step)`` installs the writer (and step) as
the current thread's default and restores the previous ones (and flushes) on exit;
``set_as_default`` installs them for good.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..._common.convert import to_step
from ..._core.event_writer import EventWriter, LogdirTarget, SinkOptions, WriterHandle
from ..._core.ranks import rank_run
from ..._sinks.base import EventSink
from ..context import state

if TYPE_CHECKING:
    from ..._common.types import StepLike
    from ..._core.ranks import Ranks

__all__ = [
    "NoopSummaryWriter",
    "SummaryFileWriter",
    "create_file_writer",
    "create_noop_writer",
    "flush",
]


class SummaryFileWriter(WriterHandle):
    """A writer created by :func:`create_file_writer` (``tf.summary.SummaryWriter``)."""

    def __init__(self, writer: EventWriter | None, logdir: str = "") -> None:
        self._writer = writer
        self._logdir = logdir

    @property
    def logdir(self) -> str:
        """The run directory ("" when writing to a custom sink)."""
        return self._logdir

    def _live(self) -> EventWriter:
        if self._writer is None:
            raise RuntimeError("SummaryWriter is already closed")
        return self._writer

    def set_as_default(self, step: StepLike = None) -> None:
        """Make this the default writer of the current thread (and set the step, if given)."""
        self._live()
        new_step = None if step is None else to_step(step, "step")  # validate before changing
        state.writer = self
        if new_step is not None:
            state.step = new_step

    @contextlib.contextmanager
    def as_default(self, step: StepLike = None) -> Iterator[SummaryFileWriter]:
        """Context manager: default writer (and step) inside, previous ones restored and the
        writer flushed on exit."""
        self._live()
        new_step = None if step is None else to_step(step, "step")  # validate before changing
        old_writer, old_step = state.writer, state.step
        state.writer = self
        if new_step is not None:
            state.step = new_step
        try:
            yield self
        finally:
            state.writer = old_writer
            if step is not None:
                state.step = old_step
            if self._writer is not None:
                self._writer.sink.flush()

    def init(self) -> None:
        """Kept for API compatibility: the file already exists."""
        self._live()


class NoopSummaryWriter(SummaryFileWriter):
    """A writer that writes nothing; its ``as_default`` does not install it (as in TF)."""

    def __init__(self) -> None:
        super().__init__(None)

    def set_as_default(self, step: StepLike = None) -> None:
        if step is not None:
            state.step = to_step(step, "step")

    @contextlib.contextmanager
    def as_default(self, step: StepLike = None) -> Iterator[SummaryFileWriter]:
        old_step = state.step
        if step is not None:
            state.step = to_step(step, "step")
        try:
            yield self
        finally:
            if step is not None:
                state.step = old_step

    def init(self) -> None:
        pass


def create_file_writer(
    logdir: str | os.PathLike[str] | EventSink,
    max_queue: int | None = None,
    flush_millis: int | None = None,
    filename_suffix: str | None = None,
    name: str | None = None,
    experimental_trackable: bool = False,
    experimental_mesh: Any = None,
    *,
    rank: int | None = None,
    ranks: Ranks = None,
) -> SummaryFileWriter:
    """Create a writer for ``logdir`` (``tf.summary.create_file_writer``).

    Args:
      logdir: run directory (created if missing), or an :class:`~npsummary.EventSink`.
      max_queue: pending events that make the background thread write early (default 10).
      flush_millis: longest time an event waits in memory, in ms (default 2000).
      filename_suffix: appended to the file name, with a leading ``.`` (default ``.v2``).
      name, experimental_trackable, experimental_mesh: accepted for compatibility; unused.
      rank, ranks: as for :class:`npsummary.SummaryWriter`: by default only global rank 0
        writes; on other ranks this returns a no-op writer (summary calls under it return
        False and write nothing); ``ranks="all"`` or a list of ranks write the sub-runs
        ``<logdir>/rank_<k>``.

    Returns:
      A :class:`SummaryFileWriter` whose event file already exists (a
      :class:`NoopSummaryWriter` on a rank that does not write).

    Raises:
      TypeError, ValueError: an argument of the wrong type or value.
    """
    run = rank_run(rank, ranks)
    if run is None:
        return NoopSummaryWriter()
    target = LogdirTarget(logdir, run)
    suffix = ".v2" if filename_suffix is None else filename_suffix
    if isinstance(suffix, str) and not suffix.startswith("."):
        suffix = "." + suffix
    options = SinkOptions.checked(
        max_queue=max_queue,
        flush_secs=flush_millis,
        filename_suffix=suffix,
        flush_name="flush_millis",
        flush_scale=0.001,
    )
    return SummaryFileWriter(target.open(options), target.logdir)


def create_noop_writer() -> NoopSummaryWriter:
    """Return a writer that records nothing (``tf.summary.create_noop_writer``)."""
    return NoopSummaryWriter()


def flush(writer: SummaryFileWriter | None = None, name: str | None = None) -> None:
    """Flush ``writer``, or the default writer; nothing happens when there is none."""
    if writer is None:
        writer = state.writer
        if writer is None:
            return
    if not isinstance(writer, SummaryFileWriter):
        raise ValueError(f"flush(): writer must be a SummaryWriter, got {type(writer).__name__}")
    writer.flush()
