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
* The recording condition (:func:`record_if`) and the name scope (:func:`name_scope`, which
  stands in for ``tf.name_scope``) are per thread too. Summary tags are ``<scope><name>``;
  :func:`write` and :func:`write_raw_pb` take their tags verbatim, as in TensorFlow.
* ``graph`` and the ``trace_*`` functions raise ``NotImplementedError``: there is no TensorFlow
  graph or function execution to record.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ._convert import as_array, check_tag, to_float, to_float32_range, to_step
from ._format.wire import encode_event
from ._histsummary import tf2_value
from ._sink import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink, FileSink
from ._summary import tensor_proto
from .writer import EventWriter, WriterHandle

__all__ = [
    "NoopSummaryWriter",
    "SummaryFileWriter",
    "audio",
    "create_file_writer",
    "create_noop_writer",
    "flush",
    "get_step",
    "graph",
    "name_scope",
    "record_if",
    "scalar",
    "set_step",
    "should_record_summaries",
    "summary_scope",
    "text",
    "trace_export",
    "trace_off",
    "trace_on",
    "write",
    "write_raw_pb",
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


class SummaryFileWriter(WriterHandle):
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
        new_step = None if step is None else to_step(step, "step")  # validate before changing
        _state.writer = self
        if new_step is not None:
            _state.step = new_step

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator[SummaryFileWriter]:
        """Context manager: default writer (and step) inside, previous ones restored and the
        writer flushed on exit."""
        self._live()
        new_step = None if step is None else to_step(step, "step")  # validate before changing
        old_writer, old_step = _state.writer, _state.step
        _state.writer = self
        if new_step is not None:
            _state.step = new_step
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
    if not isinstance(suffix, str):
        raise TypeError(f"filename_suffix must be a str, got {type(suffix).__name__}")
    if not suffix.startswith("."):
        suffix = "." + suffix
    try:
        flush_secs = DEFAULT_FLUSH_SECS if flush_millis is None else float(flush_millis) / 1000.0
    except (TypeError, ValueError) as exc:
        raise TypeError(f"flush_millis must be a number, got {flush_millis!r}") from exc
    if not 0 < flush_secs < math.inf:
        raise ValueError(f"flush_millis must be positive and finite, got {flush_millis!r}")
    if max_queue is None:
        queue = DEFAULT_MAX_QUEUE
    elif isinstance(max_queue, bool) or not isinstance(max_queue, (int, np.integer)):
        raise TypeError(f"max_queue must be an int, got {max_queue!r}")
    elif max_queue < 0:
        raise ValueError(f"max_queue must be >= 0, got {max_queue}")
    else:
        queue = int(max_queue)
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


def _target(step: Any, label: str) -> tuple[EventWriter, int] | None:
    """Return the live default writer and the step to write at, or None to skip.

    As in TF, nothing (not even the step) is looked at when there is no writer or recording is
    off. ``label`` (the tag) names the summary in step errors.
    """
    writer = _state.writer
    if writer is None or writer._writer is None or not _should_record():
        return None
    if step is None:
        step = _state.step
        if step is None:
            raise ValueError(NO_STEP_MESSAGE)
        return writer._writer, step
    return writer._writer, to_step(step, label)


def _recording() -> bool:
    writer = _state.writer
    return writer is not None and writer._writer is not None and _should_record()


def _record(name: Any, step: Any, build: Callable[[EventWriter, str], bytes]) -> bool:
    """The common body of the summary functions: skip (False) or build one value and write it.

    ``build(writer, tag)`` runs only when something is recorded, so the data is not even
    looked at under ``record_if(False)`` or without a default writer.
    """
    begun = _begin(name, step)
    if begun is None:
        return False
    writer, step, tag = begun
    writer.write_values([build(writer, tag)], step, time.time())
    return True


def _begin(name: Any, step: Any) -> tuple[EventWriter, int, str] | None:
    """Writer, step and tag of a summary about to be written, or None when nothing records."""
    if not _recording():
        return None
    tag = _tag(name)
    target = _target(step, tag)
    if target is None:
        return None
    return target[0], target[1], tag


def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write a scalar summary (``tf.summary.scalar``); returns whether it was written."""
    begun = _begin(name, step)
    if begun is None:
        return False
    writer, step, tag = begun
    value = to_float32_range(to_float(data, tag))
    writer.write_scalar(tag, value, step, time.time(), description)
    return True


# -- name scopes, recording condition -------------------------------------------------------------

_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


def _tag(name: Any) -> str:
    """The tag of a summary called ``name`` under the current name scope."""
    return _state.name_scope + check_tag(name, "name")


@contextlib.contextmanager
def name_scope(name: str | None) -> Iterator[str]:
    """Context manager prefixing the tags of summaries written inside it, like ``tf.name_scope``.

    Scopes nest (``a`` then ``b`` gives tags ``a/b/<name>``); a name ending in ``/`` replaces the
    current scope instead of extending it, and an empty name or ``None`` clears it. Yields the
    scope string (``"a/b/"``). The scope is per thread and also applies to ``npsummary.v1``.
    """
    old = _state.name_scope
    if not name:
        scope = ""
    else:
        name = check_tag(name, "name_scope name")
        scope = name if name.endswith("/") else old + name + "/"
    _state.name_scope = scope
    try:
        yield scope
    finally:
        _state.name_scope = old


@contextlib.contextmanager
def summary_scope(
    name: str | None, default_name: str = "summary", values: Any = None
) -> Iterator[tuple[str, str]]:
    """``tf.summary.experimental.summary_scope``: yields ``(tag, scope)`` for a summary.

    ``tag`` is the current name scope plus ``name`` verbatim; ``scope`` is a name scope entered
    for the duration of the block, built from ``name`` stripped of characters outside
    ``[-_/.A-Za-z0-9]`` (or ``default_name`` if nothing is left). ``values`` is ignored.
    """
    name = name or default_name
    tag = _tag(name)
    scope_name = _INVALID_SCOPE_CHARACTERS.sub("", name) or default_name
    with name_scope(scope_name) as scope:
        yield tag, scope


@contextlib.contextmanager
def record_if(condition: bool | Callable[[], Any]) -> Iterator[None]:
    """Context manager: summaries inside write only while ``condition`` holds.

    ``condition`` is a bool (or anything ``bool()`` accepts) or a callable evaluated at every
    summary call, e.g. ``lambda: step % 100 == 0``. The previous condition is restored on exit.
    """
    old = _state.record_if
    _state.record_if = condition
    try:
        yield
    finally:
        _state.record_if = old


def should_record_summaries() -> bool:
    """Whether a summary written now would be recorded: a default writer exists and the
    ``record_if`` condition holds."""
    writer = _state.writer
    if writer is None or writer._writer is None:
        return False
    return _should_record()


# -- more summary kinds -------------------------------------------------------------------------


def text(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
    """Write a text summary (``tf.summary.text``); ``data`` is a str, bytes or an array of
    them, rendered as Markdown (0-d) or a table (1-d, 2-d) by TensorBoard."""
    from ._audio import string_array, text_value

    return _record(
        name,
        step,
        lambda _, tag: text_value(tag, string_array(data, tag), description=description),
    )


def histogram(
    name: str,
    data: Any,
    step: Any = None,
    buckets: int | None = None,
    description: str | None = None,
) -> bool:
    """Write a histogram summary (``tf.summary.histogram``): ``buckets`` (default 30) equal-width
    buckets as ``[k, 3]`` rows ``(left, right, count)``, identical to TensorFlow's output.

    NaN and ±Inf are left out of the buckets (TensorFlow would write NaN edges) and reported once
    per tag with a :class:`~npsummary.NonFiniteWarning`. The data is not looked at when nothing
    is recorded.
    """

    def build(writer: EventWriter, tag: str) -> bytes:
        value, nonfinite = tf2_value(tag, data, buckets, description)
        writer.check_nonfinite(tag, nonfinite, "warn")
        return value

    return _record(name, step, build)


def distribution(
    name: str,
    data: Any,
    step: Any = None,
    buckets: int | None = None,
    description: str | None = None,
) -> bool:
    """Write data for TensorBoard's Distributions tab.

    TensorBoard derives distributions from histogram data (it has no format of its own), so this
    is :func:`histogram` under the name users look for; the tag shows in both tabs.
    """
    return histogram(name, data, step, buckets, description)


def image(
    name: str,
    data: Any,
    step: Any = None,
    max_outputs: int = 3,
    description: str | None = None,
) -> bool:
    """Write an image summary (``tf.summary.image``).

    ``data`` is ``[k, h, w, c]`` with c in 1..4; the first ``max_outputs`` images are converted
    exactly as ``tf.image.convert_image_dtype(data, tf.uint8, saturate=True)`` does (floats:
    ``trunc(clip(x * 255.5, 0, 255))``, NaN -> 0; integers shifted) and stored as PNG.
    """
    from ._imgsummary import tf_image_value

    return _record(
        name,
        step,
        lambda _, tag: tf_image_value(tag, data, max_outputs, description=description),
    )


def audio(
    name: str,
    data: Any,
    sample_rate: int,
    step: Any = None,
    max_outputs: int = 3,
    encoding: str | None = None,
    description: str | None = None,
) -> bool:
    """Write an audio summary (``tf.summary.audio``).

    ``data`` has shape ``[k, t, c]`` (clips, frames, channels) with values in ``[-1, 1]``; the
    first ``max_outputs`` clips are stored as 16-bit PCM WAV, encoded as TensorFlow does.
    ``encoding`` must be ``None`` or ``"wav"``.
    """
    if encoding is None:
        encoding = "wav"
    if encoding != "wav":
        raise ValueError(f"Unknown encoding: {encoding!r}")
    from ._audio import audio_clips, audio_value

    return _record(
        name,
        step,
        lambda _, tag: audio_value(
            tag, audio_clips(data, max_outputs, tag), sample_rate, description=description
        ),
    )


def _as_tensor_array(tensor: Any, tag: str) -> np.ndarray:
    """Convert ``tensor`` as ``tf.convert_to_tensor`` would: NumPy keeps its dtype, Python
    floats become float32, ints int32 (int64 when too large) and strings DT_STRING."""
    from ._audio import string_array

    if isinstance(tensor, (np.ndarray, np.generic)):
        array = np.asarray(tensor)
    elif isinstance(tensor, (str, bytes)):
        return string_array(tensor, tag)
    else:
        array = as_array(tensor, tag)
        if not hasattr(tensor, "__array__"):
            if array.dtype == np.float64:
                array = array.astype(np.float32)
            elif array.dtype == np.int64 and (
                array.size == 0 or (array.min() >= -(2**31) and array.max() < 2**31)
            ):
                array = array.astype(np.int32)
    if array.dtype.kind in "SUO":
        return string_array(array, tag)
    return array


def write(
    tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None
) -> bool:
    """Write a generic tensor summary (``tf.summary.write``).

    ``tensor`` is an array-like or a callable returning one, called only when the summary is
    recorded. ``metadata`` is a ``SummaryMetadata`` proto (any protobuf message with
    ``SerializeToString``), its serialized bytes, or ``None``. ``tag`` is used verbatim: name
    scopes do not apply, as in TensorFlow.
    """
    tag = check_tag(tag, "tag")
    if step is not None:
        step = to_step(step, tag)
    if metadata is None:
        serialized = b""
    elif hasattr(metadata, "SerializeToString"):
        serialized = bytes(metadata.SerializeToString())
    elif isinstance(metadata, (bytes, bytearray, memoryview)):
        serialized = bytes(metadata)
    else:
        raise TypeError(
            f"{tag!r}: metadata must be a SummaryMetadata proto or bytes, "
            f"got {type(metadata).__name__}"
        )
    target = _target(step, tag)
    if target is None:
        return False
    writer, step = target
    from . import proto

    md = proto.SummaryMetadata.FromString(serialized)
    array = _as_tensor_array(tensor() if callable(tensor) else tensor, tag)
    value = proto.SummaryValue(tag=tag)
    value.tensor.CopyFrom(tensor_proto(array, tag))
    if serialized:  # TF writes no metadata field for empty metadata
        value.metadata.CopyFrom(md)
    writer.write_values([bytes(value.SerializeToString())], step, time.time())
    return True


def write_raw_pb(tensor: Any, step: Any = None, name: str | None = None) -> bool:
    """Write serialized ``Summary`` protos as one event
    (``tf.summary.experimental.write_raw_pb``).

    ``tensor`` is one serialized ``Summary`` (bytes, or a message with ``SerializeToString``)
    or a sequence/array of them; their values are concatenated into a single event.
    """
    label = "write_raw_pb" if name is None else check_tag(name, "name")
    if step is not None:
        step = to_step(step, label)
    target = _target(step, label)
    if target is None:
        return False
    writer, step = target
    from . import proto

    items = [tensor] if isinstance(tensor, (bytes, bytearray)) else tensor
    if hasattr(items, "SerializeToString"):
        items = [items]
    if isinstance(items, np.ndarray):
        items = items.reshape(-1).tolist()
    parts = []
    for i, item in enumerate(items):
        if hasattr(item, "SerializeToString"):
            item = item.SerializeToString()
        if not isinstance(item, (bytes, bytearray)):
            raise TypeError(
                f"write_raw_pb: element {i} must be a serialized Summary (bytes), "
                f"got {type(item).__name__}"
            )
        try:
            proto.Summary.FromString(bytes(item))
        except Exception as exc:
            raise ValueError(f"write_raw_pb: bad Summary binary proto at index {i}: {exc}") from exc
        parts.append(bytes(item))
    writer.sink.write(encode_event(time.time(), step, b"".join(parts)))
    return True


# -- graph and tracing: no TensorFlow graphs exist here ------------------------------------------

_NO_GRAPHS = (
    "npsummary writes summaries without TensorFlow, so there is no TensorFlow graph or "
    "function execution to {what}. Describe the model with text() instead."
)


def graph(graph_data: Any) -> bool:
    """Not supported: ``tf.summary.graph`` serializes a TensorFlow graph."""
    raise NotImplementedError(_NO_GRAPHS.format(what="write"))


def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: Any = None) -> None:
    """Not supported: ``tf.summary.trace_on`` traces TensorFlow function executions."""
    raise NotImplementedError(_NO_GRAPHS.format(what="trace"))


def trace_export(name: str, step: Any = None, profiler_outdir: Any = None) -> None:
    """Not supported: ``tf.summary.trace_export`` exports a TensorFlow trace."""
    raise NotImplementedError(_NO_GRAPHS.format(what="export a trace of"))


def trace_off() -> None:
    """Not supported: ``tf.summary.trace_off`` stops a TensorFlow trace."""
    raise NotImplementedError(_NO_GRAPHS.format(what="stop tracing"))
