"""The ``tf.summary`` (TF2) API without TensorFlow.

Semantics mirror ``tensorflow/python/ops/summary_ops_v2.py``:

* A *default writer* and a *default step* are kept per thread. ``writer.as_default(step)``
  installs both and restores the previous ones (and flushes) on exit; ``set_as_default`` installs
  them for good.
* Summary functions return ``True`` when they wrote, ``False`` when there is no default writer or
  recording is off. With a writer but no step (neither argument nor default) they raise
  ``ValueError`` with TensorFlow's message.
* Writers created by :func:`create_file_writer` make their file immediately; ``flush_millis``
  defaults to 2000 (TensorFlow: 120000), ``max_queue`` to 10 and ``filename_suffix`` to ``.v2``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

from ._convert import check_tag, to_float, to_float32_range, to_step
from ._events import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink, FileSink
from .writer import EventWriter

__all__ = [
    "NoopSummaryWriter",
    "SummaryFileWriter",
    "create_file_writer",
    "create_noop_writer",
    "flush",
    "get_step",
    "scalar",
    "set_step",
]

NO_STEP_MESSAGE = (
    "No step set. Please specify one either through the `step` argument or through "
    "tf.summary.experimental.set_step()"
)


class _State(threading.local):
    def __init__(self) -> None:
        self.writer: SummaryFileWriter | None = None
        self.step: int | None = None
        self.record_if: bool | Callable[[], Any] = True
        self.name_scope: str = ""


_state = _State()


class SummaryFileWriter:
    """A writer created by :func:`create_file_writer` (``tf.summary.SummaryWriter``)."""

    def __init__(self, sink: EventSink, logdir: str = "") -> None:
        self._writer: EventWriter | None = EventWriter(sink)
        self._logdir = logdir

    @property
    def logdir(self) -> str:
        return self._logdir

    def _live(self) -> EventWriter:
        if self._writer is None:
            raise RuntimeError("SummaryWriter is already closed")
        return self._writer

    def set_as_default(self, step: Any = None) -> None:
        """Make this the default writer of the current thread (and set the step, if given)."""
        self._live()
        _state.writer = self
        if step is not None:
            _state.step = to_step(step, "step")

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[SummaryFileWriter]:
        """Context manager: default writer (and step) inside, previous ones restored and the
        writer flushed on exit."""
        self._live()
        old_writer, old_step = _state.writer, _state.step
        _state.writer = self
        if step is not None:
            _state.step = to_step(step, "step")
        try:
            yield self
        finally:
            _state.writer = old_writer
            if step is not None:
                _state.step = old_step
            if self._writer is not None:
                self._writer.sink.flush()

    def init(self) -> None:
        """Kept for API compatibility: the file already exists."""
        self._live()

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.sink.flush()

    def close(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.sink.close()

    def __enter__(self) -> SummaryFileWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class NoopSummaryWriter(SummaryFileWriter):
    """A writer that writes nothing; its ``as_default`` does not install it (as in TF)."""

    def __init__(self) -> None:
        self._writer = None
        self._logdir = ""

    def set_as_default(self, step: Any = None) -> None:
        if step is not None:
            _state.step = to_step(step, "step")

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[SummaryFileWriter]:
        old_step = _state.step
        if step is not None:
            _state.step = to_step(step, "step")
        try:
            yield self
        finally:
            if step is not None:
                _state.step = old_step

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
) -> SummaryFileWriter:
    """Create a writer for ``logdir`` (``tf.summary.create_file_writer``)."""
    if logdir is None:
        raise ValueError("logdir cannot be None")
    if isinstance(logdir, EventSink) and not isinstance(logdir, (str, os.PathLike)):
        return SummaryFileWriter(logdir)
    suffix = ".v2" if filename_suffix is None else filename_suffix
    if not suffix.startswith("."):
        suffix = "." + suffix
    flush_secs = DEFAULT_FLUSH_SECS if flush_millis is None else float(flush_millis) / 1000.0
    if not flush_secs > 0:
        raise ValueError(f"flush_millis must be positive, got {flush_millis!r}")
    queue = DEFAULT_MAX_QUEUE if max_queue is None else int(max_queue)
    path = os.fspath(logdir)
    sink = FileSink(path, suffix, flush_secs=flush_secs, max_queue=queue)
    return SummaryFileWriter(sink, path)


def create_noop_writer() -> NoopSummaryWriter:
    """Return a writer that records nothing (``tf.summary.create_noop_writer``)."""
    return NoopSummaryWriter()


def flush(writer: SummaryFileWriter | None = None, name: str | None = None) -> None:
    """Flush ``writer``, or the default writer; nothing happens when there is none."""
    if writer is None:
        writer = _state.writer
        if writer is None:
            return
    if not isinstance(writer, SummaryFileWriter):
        raise ValueError(f"flush() expects a SummaryWriter, got {type(writer).__name__}")
    writer.flush()


def set_step(step: Any) -> None:
    """Set the default step of the current thread (``tf.summary.experimental.set_step``)."""
    _state.step = None if step is None else to_step(step, "step")


def get_step() -> int | None:
    """Return the default step of the current thread, or ``None``."""
    return _state.step


def _should_record() -> bool:
    condition = _state.record_if
    if callable(condition):
        condition = condition()
    return bool(condition)


def _target(step: Any) -> tuple[EventWriter, int] | None:
    """Return the live default writer and the step to write at, or None to skip."""
    writer = _state.writer
    if writer is None or writer._writer is None or not _should_record():
        return None
    if step is None:
        step = _state.step
        if step is None:
            raise ValueError(NO_STEP_MESSAGE)
        return writer._writer, step
    return writer._writer, to_step(step, "step")


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write a scalar summary (``tf.summary.scalar``); returns whether it was written."""
    target = _target(step)
    if target is None:
        return False
    writer, step = target
    tag = _state.name_scope + check_tag(name, "name")
    value = to_float32_range(to_float(data, tag))
    writer.write_scalar(tag, value, step, time.time(), description)
    return True
