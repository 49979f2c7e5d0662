"""The ``tf.summary`` (TF2) summary functions without TensorFlow.

Semantics mirror ``tensorflow/python/ops/summary_ops_v2.py``:

* Summary functions write through the current thread's default writer (see
  :mod:`npsummary._frontends.tf2.writer`) and return ``True`` when they wrote, ``False`` when there
  is no default writer or recording is off. With a writer but no step (neither argument nor
  default) they raise ``ValueError`` with TensorFlow's message.
* The recording condition (:func:`record_if`) and the name scope (:func:`name_scope`, which
  stands in for ``tf.name_scope``) are per thread too. Summary tags are ``<scope><name>``;
  :func:`write` and :func:`write_raw_pb` take their tags verbatim, as in TensorFlow.
* The data is not looked at when nothing is recorded.
* ``graph`` and the ``trace_*`` functions raise ``NotImplementedError``: there is no TensorFlow
  graph or function execution to record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._common.convert import (
    as_array,
    as_list,
    check_int,
    check_tag,
    check_text,
    to_float,
    to_float32_range,
    to_step,
)
from ..._common.messages import check_event_size, message_bytes, parse_message
from ..._core.event_writer import EventWriter
from ..._summaries.metadata import written_metadata
from ..._summaries.scalar import FLOAT32_OVERFLOW, PACKED_STEP_LIMIT, pack_step_event
from ..context import (
    get_step,
    name_scope,
    record_if,
    scoped_tag,
    set_step,
    should_record,
    should_record_summaries,
    state,
    summary_scope,
)

if TYPE_CHECKING:
    from ..._common.types import ArrayLike, ScalarLike, StepLike

__all__ = [
    "audio",
    "distribution",
    "get_step",
    "graph",
    "histogram",
    "image",
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


def _default_writer() -> EventWriter | None:
    """The live default writer of this thread if summaries are recorded now, else None."""
    writer = state.writer
    if writer is None or writer._writer is None or not should_record():
        return None
    live: EventWriter = writer._writer
    return live


def _step_for(step: Any, label: str) -> int:
    """The step to write at: the argument, else the thread's default, else TF's error."""
    if step is None:
        if state.step is None:
            raise ValueError(NO_STEP_MESSAGE)
        return state.step
    return to_step(step, label)


def _record(name: Any, step: Any, build: Callable[[EventWriter, str], bytes]) -> bool:
    """The common body of the summary functions: skip (False) or build one value and write it.

    As in TF, nothing (not even the step) is looked at when there is no writer or recording is
    off, and ``build(writer, tag)`` runs only when something is recorded.
    """
    writer = _default_writer()
    if writer is None:
        return False
    tag = scoped_tag(name)
    step = _step_for(step, tag)
    writer.write_values([build(writer, tag)], step, time.time())
    return True


def scalar(
    name: str, data: ScalarLike, step: StepLike = None, description: str | None = None
) -> bool:
    """Write a scalar summary (``tf.summary.scalar``).

    Args:
      name: tag (after the current name scope).
      data: a real number (stored as float32).
      step: step; default: the thread's default step.
      description: Markdown shown in TensorBoard.

    Returns:
      Whether the summary was written.

    Raises:
      TypeError, ValueError: bad input, naming the tag; ``ValueError`` also when there is a
        default writer but no step.
    """
    # The hot path (a float, an int step or the default one, no description, a tag logged
    # before) reads the thread's state once and packs the event from the per-tag cache; any
    # other call takes the general path, which gives the same bytes.
    current = state
    handle = current.writer
    if handle is None:
        return False
    writer = handle._writer
    if writer is None or (current.record_if is not True and not should_record()):
        return False
    if (
        data.__class__ is float
        and -FLOAT32_OVERFLOW < data < FLOAT32_OVERFLOW  # False for NaN
        and description is None
        and name.__class__ is str
    ):
        if step is None:
            step = current.step
        scope = current.name_scope
        entry = writer.plain_scalars.get(scope + name if scope else name)
        if entry is not None and step.__class__ is int and 0 < step < PACKED_STEP_LIMIT:
            writer.sink_write(pack_step_event(entry, data, step, time.time()))
            return True
    tag = scoped_tag(name)
    step = _step_for(step, tag)
    value = to_float32_range(to_float(data, tag))
    description = check_text(description, "description", tag=tag)
    writer.write_scalar(tag, value, step, time.time(), description)
    return True


# -- more summary kinds -------------------------------------------------------------------------


def text(name: str, data: ArrayLike, step: StepLike = None, description: str | None = None) -> bool:
    """Write a text summary (``tf.summary.text``); ``data`` is a str, bytes or an array of
    them, rendered as Markdown (0-d) or a table (1-d, 2-d) by TensorBoard. Returns whether it
    was written; bad input raises ``TypeError``/``ValueError`` naming the tag."""
    from ..._summaries.text import string_array, text_value

    def build(_: EventWriter, tag: str) -> bytes:
        note = check_text(description, "description", tag=tag)
        return text_value(tag, string_array(data, tag), description=note)

    return _record(name, step, build)


def histogram(
    name: str,
    data: ArrayLike,
    step: StepLike = None,
    buckets: int | None = None,
    description: str | None = None,
    *,
    process_group: Any = None,
) -> bool:
    """Write a histogram summary (``tf.summary.histogram``): ``buckets`` (default 30) equal-width
    buckets as ``[k, 3]`` rows ``(left, right, count)``, identical to TensorFlow's output.

    NaN and ±Inf are left out of the buckets (TensorFlow would write NaN edges) and reported once
    per tag with a :class:`~npsummary.NonFiniteWarning`. Returns whether it was written.

    ``data`` may be a ``DTensor``, or each rank's own values with ``process_group=`` (a
    ``torch.distributed`` process group): the histogram of all of them, merged by a collective
    call that every rank of the group makes while recording is on, with a writer or not (only
    a rank with one writes; see ``SummaryWriter.add_histogram``).
    """
    from ..._summaries.histogram import is_spread, tf2_histogram_value

    def build(writer: EventWriter, tag: str) -> bytes:
        note = check_text(description, "description", tag=tag)
        value, nonfinite = tf2_histogram_value(tag, data, buckets, note, process_group)
        writer.check_nonfinite(tag, nonfinite, "warn")
        return value

    if _default_writer() is None and is_spread(data, process_group) and should_record():
        tag = scoped_tag(name)  # no writer on this rank: take part in the merge, write nothing
        tf2_histogram_value(tag, data, buckets, None, process_group)
        return False
    return _record(name, step, build)


def distribution(
    name: str,
    data: ArrayLike,
    step: StepLike = None,
    buckets: int | None = None,
    description: str | None = None,
    *,
    process_group: Any = None,
) -> bool:
    """Write data for TensorBoard's Distributions tab.

    TensorBoard derives distributions from histogram data (it has no format of its own), so this
    is :func:`histogram` under the name users look for; the tag shows in both tabs.
    """
    return histogram(name, data, step, buckets, description, process_group=process_group)


def image(
    name: str,
    data: ArrayLike,
    step: StepLike = None,
    max_outputs: int = 3,
    description: str | None = None,
) -> bool:
    """Write an image summary (``tf.summary.image``).

    ``data`` is ``[k, h, w, c]`` with c in 1..4; the first ``max_outputs`` images are converted
    exactly as ``tf.image.convert_image_dtype(data, tf.uint8, saturate=True)`` does (floats:
    ``trunc(clip(x * 255.5, 0, 255))``, NaN -> 0; integers shifted) and stored as PNG.
    Returns whether it was written.
    """
    from ..._summaries.image import tf_image_value

    def build(_: EventWriter, tag: str) -> bytes:
        note = check_text(description, "description", tag=tag)
        images = as_array(data, tag)
        if images.ndim != 4 or images.shape[-1] not in (1, 2, 3, 4):
            raise ValueError(
                f"{tag!r}: tf.summary.image expects [k, h, w, c] with c in {{1, 2, 3, 4}}, got "
                f"shape {images.shape}"
            )
        count = check_int(max_outputs, "max_outputs", tag=tag, minimum=0)
        return tf_image_value(tag, images, count, description=note)

    return _record(name, step, build)


def audio(
    name: str,
    data: ArrayLike,
    sample_rate: int,
    step: StepLike = None,
    max_outputs: int = 3,
    encoding: str | None = None,
    description: str | None = None,
) -> bool:
    """Write an audio summary (``tf.summary.audio``).

    ``data`` has shape ``[k, t, c]`` (clips, frames, channels) with values in ``[-1, 1]``; the
    first ``max_outputs`` clips are stored as 16-bit PCM WAV, encoded as TensorFlow does.
    ``encoding`` must be ``None`` or ``"wav"``. Returns whether it was written.
    """
    from ..._summaries.audio import audio_clips, audio_value

    if encoding is not None and not (isinstance(encoding, str) and encoding == "wav"):
        # Raised even without a default writer, as TF does.
        raise ValueError(
            f"{name!r:.80}: Unknown encoding: encoding must be 'wav', got {encoding!r:.60}"
        )

    def build(_: EventWriter, tag: str) -> bytes:
        note = check_text(description, "description", tag=tag)
        rate = check_int(sample_rate, "sample_rate", tag=tag, minimum=1)
        return audio_value(tag, audio_clips(data, max_outputs, tag), rate, description=note)

    return _record(name, step, build)


def write(
    tag: str,
    tensor: ArrayLike | Callable[[], ArrayLike],
    step: StepLike = None,
    metadata: Any = None,
    name: str | None = None,
) -> bool:
    """Write a generic tensor summary (``tf.summary.write``).

    ``tensor`` is an array-like or a callable returning one, called only when the summary is
    recorded. ``metadata`` is a ``SummaryMetadata`` proto (any protobuf message with
    ``SerializeToString``), its serialized bytes, or ``None``. ``tag`` is used verbatim: name
    scopes do not apply, as in TensorFlow. Returns whether it was written.
    """
    from ..._summaries.tensor import as_tensor_array, tensor_bytes, tensor_value

    tag = check_tag(tag, "tag")
    if step is not None:
        step = to_step(step, tag)
    md = written_metadata(metadata, tag, "metadata")
    writer = _default_writer()
    if writer is None:
        return False
    step = _step_for(step, tag)
    array = as_tensor_array(tensor() if callable(tensor) else tensor, tag)
    writer.write_values([tensor_value(tag, tensor_bytes(array, tag), md)], step, time.time())
    return True


def _serialized_summaries(tensor: Any, label: str) -> list[bytes]:
    """``write_raw_pb``'s input as a list of validated serialized ``Summary`` messages."""
    from ... import proto

    items = [tensor] if isinstance(tensor, (bytes, bytearray)) else tensor
    if hasattr(items, "SerializeToString"):
        items = [items]
    if isinstance(items, np.ndarray):
        items = items.reshape(-1).tolist()
    parts = [
        message_bytes(item, "Summary", f"{label}: tensor at index {i}")
        for i, item in enumerate(as_list(items, label, "tensor"))
    ]
    check_event_size(sum(map(len, parts)), label)  # before parsing or joining anything that big
    for i, part in enumerate(parts):
        parse_message(proto.Summary, part, f"{label}: tensor at index {i}")
    return parts


def write_raw_pb(tensor: Any, step: StepLike = None, name: str | None = None) -> bool:
    """Write serialized ``Summary`` protos as one event
    (``tf.summary.experimental.write_raw_pb``).

    ``tensor`` is one serialized ``Summary`` (bytes, or a message with ``SerializeToString``)
    or a sequence/array of them; their values are concatenated into a single event. Returns
    whether it was written.
    """
    label = "write_raw_pb" if name is None else check_tag(name, "name")
    if step is not None:
        step = to_step(step, label)
    writer = _default_writer()
    if writer is None:
        return False
    step = _step_for(step, label)
    parts = _serialized_summaries(tensor, label)
    writer.write_summary(b"".join(parts), step, time.time(), label)
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
