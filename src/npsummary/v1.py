"""``tf.compat.v1.summary`` (TF1-style summaries) without TensorFlow.

TF1 code builds summary ops once and evaluates them with ``sess.run`` every step. Here each
function computes its summary immediately and returns it as serialized ``Summary`` bytes, so a
ported training loop calls the summary functions every step, then :func:`merge_all`, then
``FileWriter.add_summary``::

    writer = npsummary.v1.FileWriter("logs/train")
    for step in range(steps):
        npsummary.v1.scalar("loss", loss)
        npsummary.v1.histogram("weights", w)
        writer.add_summary(npsummary.v1.merge_all(), step)

Formats are TF1's (FORMAT.md §4, §6.2):

* ``scalar`` → ``simple_value`` (float32); ``histogram`` → legacy ``HistogramProto`` with TF1's
  exponential buckets; ``image`` → one ``Summary.Image`` (PNG) per image with TF1's float
  normalisation, tags ``<tag>/image/<i>`` (``<tag>/image`` when ``max_outputs`` is 1); ``audio``
  → one ``Summary.Audio`` (WAV) per clip, tags ``<tag>/audio/<i>`` (or ``<tag>/audio``). None
  of these carry metadata, as in TF1; TensorBoard migrates them when it reads them.
* ``text`` and ``tensor_summary`` → tensors with plugin metadata, exactly as TF1 wrote them.

Tags follow TF1: illegal characters (outside ``[-/\\w.]``) become ``_``, leading ``/`` are
dropped, the current :func:`npsummary.name_scope` is prepended, ``family`` gives
``family/<scope>/family/name``, and a name already used is uniquified (``loss``, ``loss_1``, …)
as TensorFlow's graph did.

Steps: TF1 built each summary once; a ported loop creates it again every step. So names count
as used only until the next :func:`merge_all` or ``FileWriter.add_summary`` in the thread, and a
loop that logs the same summaries every step keeps the same tags, whether it merges them or
writes them one by one. ``merge_all(key)`` merges the summaries collected under ``key`` since
the previous ``merge_all(key)``, except those older than the last two ``add_summary`` calls:
summaries never merged are not kept (and past ``MAX_PENDING`` in one collection the oldest are
dropped, with a ``RuntimeWarning``).

Deviations, all deliberate:

* Summaries are collected per thread and expire as described above (TF1: per graph, forever).
* TF2's redirection of v1 ops to a default v2 writer is not emulated: these functions always
  return bytes.
* ``FileWriter`` names files like ``create_file_writer`` (with pid and counter), so two writers
  started in the same second never overwrite each other (TF1 issue #33595); ``flush_secs``
  defaults to 2 s instead of 120 s. See :class:`FileWriter`.
"""

from __future__ import annotations

import os
import re
import threading
import time
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import _tf2
from ._audio import (
    audio_clips,
    legacy_audio_values,
    string_array,
    text_value,
)
from ._convert import as_array, check_tag, to_float, to_float32_range, to_step
from ._sink import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink, FileSink
from ._summary import tensor_proto
from .writer import ClosingContext

__all__ = [
    "Event",  # noqa: F822 (lazy, see __getattr__)
    "FileWriter",
    "SessionLog",  # noqa: F822 (lazy, see __getattr__)
    "Summary",  # noqa: F822 (lazy, see __getattr__)
    "TaggedRunMetadata",  # noqa: F822 (lazy, see __getattr__)
    "audio",
    "clean_tag",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "tensor_summary",
    "text",
]

SUMMARIES = "summaries"  # tf.compat.v1.GraphKeys.SUMMARIES
#: Summaries kept per collection for merge_all() before the oldest are dropped.
MAX_PENDING = 10_000

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w.]")


def __getattr__(name: str) -> Any:
    # Proto classes, imported lazily to keep `import npsummary.v1` light.
    if name in ("Event", "SessionLog", "Summary", "TaggedRunMetadata"):
        from . import proto

        return getattr(proto, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _V1State(threading.local):
    def __init__(self) -> None:
        self.names_in_use: dict[str, int] = {}
        self.round = 0  # number of FileWriter.add_summary calls in this thread
        # collection key -> (round, summary) pairs; stale ones are dropped lazily
        self.collections: dict[str, list[tuple[int, bytes]]] = {}
        self.warned_overflow = False


def _fresh(round_: int) -> bool:
    """Whether a summary collected in ``round_`` can still be merged (see "Steps")."""
    return round_ >= _v1.round - 1


_v1 = _V1State()


def clean_tag(name: str) -> str:
    """Replace characters outside ``[-/\\w.]`` with ``_`` and drop leading slashes (TF1)."""
    return _INVALID_TAG_CHARACTERS.sub("_", check_tag(name, "name")).lstrip("/")


def _unique_name(name: str) -> str:
    """``tf.Graph.unique_name``: ``name``, else ``name_1``, ``name_2``… (case-insensitive)."""
    used = _v1.names_in_use
    key = name.lower()
    i = used.get(key, 0)
    used[key] = i + 1
    if i == 0:
        return name
    base = key
    while key in used:
        key = f"{base}_{i}"
        i += 1
    used[key] = 1
    return f"{name}_{i - 1}"


def _summary_tag(name: Any, family: Any = None) -> str:
    """The tag TF1's ``summary_scope`` gives a summary called ``name`` (see module docstring)."""
    name = clean_tag(check_tag(name, "name"))
    if family is not None:
        family = clean_tag(check_tag(family, "family"))
        base = f"{family}/{name}"
    else:
        base = name
    if not base:
        raise ValueError("summary name must not be empty")
    tag = _unique_name(_tf2._state.name_scope + base)
    return tag if family is None else f"{family}/{tag}"


def _collect(summary: bytes, collections: Iterable[str] | None) -> bytes:
    keys = [SUMMARIES] if collections is None else list(collections)
    for key in keys:
        pending = _v1.collections.setdefault(key, [])
        if pending and not _fresh(pending[0][0]):
            pending[:] = [entry for entry in pending if _fresh(entry[0])]
        pending.append((_v1.round, summary))
        if len(pending) > MAX_PENDING:
            del pending[: len(pending) - MAX_PENDING]
            if not _v1.warned_overflow:
                _v1.warned_overflow = True
                warnings.warn(
                    f"more than {MAX_PENDING} npsummary.v1 summaries are waiting for "
                    f"merge_all({key!r}); the oldest are dropped. Call merge_all() each step, "
                    "or pass collections=[] to summaries you write yourself.",
                    RuntimeWarning,
                    stacklevel=3,
                )
    return summary


def _one_value(value: bytes) -> bytes:
    """Serialized ``Summary`` holding one serialized ``Summary.Value``."""
    from ._summary import summary_bytes

    return summary_bytes([value])


# -- summaries ----------------------------------------------------------------------------------


def scalar(
    name: str, tensor: Any, collections: Iterable[str] | None = None, family: str | None = None
) -> bytes:
    """``tf.compat.v1.summary.scalar``: a ``simple_value`` summary (float32)."""
    from . import proto

    tag = _summary_tag(name, family)
    value = proto.SummaryValue(tag=tag, simple_value=to_float32_range(to_float(tensor, tag)))
    return _collect(_one_value(bytes(value.SerializeToString())), collections)


def histogram(
    name: str, values: Any, collections: Iterable[str] | None = None, family: str | None = None
) -> bytes:
    """``tf.compat.v1.summary.histogram``: a legacy ``HistogramProto`` with TF1's buckets
    (NaN or infinite values raise ``ValueError``, as the TF1 op fails)."""
    from ._histogram import tf1_histogram
    from ._histsummary import legacy_value

    tag = _summary_tag(name, family)
    array = as_array(values, tag)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{tag!r}: histogram values must be real numbers, got {array.dtype}")
    h = tf1_histogram(array, exact_sum=True)
    if h.nonfinite.nan:
        raise ValueError(f"Nan in summary histogram for: {tag}")
    if h.nonfinite.total:
        raise ValueError(f"Infinity in summary histogram for: {tag}")
    return _collect(_one_value(legacy_value(tag, h)), collections)


def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Iterable[str] | None = None,
    family: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.image``: one PNG ``Summary.Image`` per image of ``[k, h, w, c]``
    (c = 1, 3 or 4). uint8 is stored as is; floats are normalised per image as TF1 does."""
    from . import proto
    from ._format.png import encode_png
    from ._image import tf1_normalize_image

    tag = _summary_tag(name, family)
    array = as_array(tensor, tag)
    if array.ndim != 4 or array.shape[-1] not in (1, 3, 4):
        raise ValueError(
            f"{tag!r}: images must have shape [k, h, w, c] with c in (1, 3, 4), "
            f"got shape {array.shape}"
        )
    if array.dtype != np.uint8 and array.dtype.kind != "f":
        raise TypeError(f"{tag!r}: images must be uint8 or floating point, got {array.dtype}")
    if isinstance(max_outputs, bool) or not isinstance(max_outputs, (int, np.integer)):
        raise TypeError(f"{tag!r}: max_outputs must be an int, got {max_outputs!r}")
    if max_outputs < 1:
        raise ValueError(f"{tag!r}: max_outputs must be at least 1, got {max_outputs}")
    k, height, width, channels = array.shape
    if height < 1 or width < 1:
        raise ValueError(f"{tag!r}: images must be at least 1x1 pixels, got shape {array.shape}")
    values = []
    for i in range(min(int(max_outputs), k)):
        pixels = array[i] if array.dtype == np.uint8 else tf1_normalize_image(array[i])
        value = proto.SummaryValue(tag=f"{tag}/image/{i}" if max_outputs > 1 else f"{tag}/image")
        value.image.height = height
        value.image.width = width
        value.image.colorspace = channels
        value.image.encoded_image_string = encode_png(np.ascontiguousarray(pixels))
        values.append(bytes(value.SerializeToString()))
    from ._summary import summary_bytes

    return _collect(summary_bytes(values), collections)


def audio(
    name: str,
    tensor: Any,
    sample_rate: Any,
    max_outputs: int = 3,
    collections: Iterable[str] | None = None,
    family: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.audio``: one WAV ``Summary.Audio`` per clip of ``[k, t, c]`` or
    ``[k, t]`` floats in ``[-1, 1]``."""
    from ._summary import summary_bytes

    tag = _summary_tag(name, family)
    array = as_array(tensor, tag)
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    clips = audio_clips(array, max_outputs, tag)
    rate = to_float(sample_rate, tag)
    if not rate >= 1:
        raise ValueError(f"{tag!r}: sample_rate must be positive, got {sample_rate!r}")
    return _collect(
        summary_bytes(legacy_audio_values(tag, clips, rate, int(max_outputs))), collections
    )


def text(name: str, tensor: Any, collections: Iterable[str] | None = None) -> bytes:
    """``tf.compat.v1.summary.text``: a string tensor of any shape with text metadata."""
    tag = _summary_tag(name)
    return _collect(_one_value(text_value(tag, string_array(tensor, tag))), collections)


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Iterable[str] | None = None,
    summary_metadata: Any = None,
    family: str | None = None,
    display_name: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.tensor_summary``: any tensor with the given ``SummaryMetadata``
    (a proto or its serialized bytes)."""
    from . import proto

    tag = _summary_tag(name, family)
    if summary_metadata is None:
        md = proto.SummaryMetadata()
    elif hasattr(summary_metadata, "SerializeToString"):
        md = proto.SummaryMetadata.FromString(summary_metadata.SerializeToString())
    else:
        md = proto.SummaryMetadata.FromString(bytes(summary_metadata))
    if summary_description is not None:
        md.summary_description = summary_description
    if display_name is not None:
        md.display_name = display_name
    value = proto.SummaryValue(tag=tag)
    value.tensor.CopyFrom(tensor_proto(_tf2._as_tensor_array(tensor, tag), tag))
    value.metadata.CopyFrom(md)
    value.metadata.SetInParent()  # present even when empty, as TF1's op writes it
    return _collect(_one_value(bytes(value.SerializeToString())), collections)


def _summary_bytes_of(item: Any, what: str) -> bytes:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    if hasattr(item, "SerializeToString"):
        return bytes(item.SerializeToString())
    if isinstance(item, np.ndarray) and item.dtype.kind in "SO":
        return b"".join(_summary_bytes_of(x, what) for x in item.reshape(-1))
    raise TypeError(f"{what} must be serialized Summary bytes, got {type(item).__name__}")


def merge(
    inputs: Iterable[Any], collections: Iterable[str] | None = None, name: str | None = None
) -> bytes:
    """``tf.compat.v1.summary.merge``: one serialized ``Summary`` with the values of all
    ``inputs``. A tag appearing twice raises ``ValueError``, as TF's MergeSummary does."""
    from . import proto

    if isinstance(inputs, (bytes, bytearray)):
        inputs = [inputs]
    merged = proto.Summary()
    seen: set[str] = set()
    for i, item in enumerate(inputs):
        summary = _parse(
            proto.Summary, _summary_bytes_of(item, f"merge input {i}"), f"merge input {i}"
        )
        for value in summary.value:
            if value.tag in seen:
                raise ValueError(f"Duplicate tag {value.tag} found in summary inputs")
            seen.add(value.tag)
        merged.MergeFrom(summary)
    out = bytes(merged.SerializeToString())
    if collections is not None:
        _collect(out, collections)
    return out


def merge_all(
    key: str = SUMMARIES, scope: str | None = None, name: str | None = None
) -> bytes | None:
    """``tf.compat.v1.summary.merge_all``: merge the summaries added to collection ``key`` in
    this thread since the last ``merge_all(key)`` (see "Steps" in the module docstring), or
    return ``None`` if there are none.

    The collection is emptied and tag names may be used again, so the next step's summaries get
    the same tags. ``scope`` keeps only tags matching it (``re.match``).
    """
    pending = [s for r, s in _v1.collections.pop(key, []) if _fresh(r)]
    _v1.names_in_use.clear()
    if scope is not None:
        from . import proto

        pattern = re.compile(scope)
        kept = []
        for item in pending:
            summary = proto.Summary.FromString(item)
            values = [v for v in summary.value if pattern.match(v.tag)]
            del summary.value[:]
            summary.value.extend(values)
            if values:
                kept.append(bytes(summary.SerializeToString()))
        pending = kept
    if not pending:
        return None
    return merge(pending)


# -- FileWriter ---------------------------------------------------------------------------------


def _parse(cls: Any, data: bytes, what: str) -> Any:
    """``cls.FromString(data)``, with protobuf's DecodeError turned into a ValueError."""
    try:
        return cls.FromString(data)
    except Exception as exc:  # DecodeError; its class differs between protobuf backends
        raise ValueError(f"{what} is not a serialized {cls.DESCRIPTOR.name}: {exc}") from exc


def _serialized(message: Any, what: str) -> bytes:
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    if hasattr(message, "SerializeToString"):
        return bytes(message.SerializeToString())
    raise TypeError(f"{what} must be a protobuf message or bytes, got {type(message).__name__}")


class FileWriter(ClosingContext):
    """``tf.compat.v1.summary.FileWriter``: writes ``Summary`` protos and events to a new event
    file in ``logdir``.

    As in TF1 the directory is created at once and the file on the first event; TF1's
    metadata stripping applies (a tag's metadata is kept on its first value in each file only;
    TensorBoard keys a tag's type on that first value). Differences from TF1:

    * File names carry the pid and a counter (``events.out.tfevents.<secs>.<host>.<pid>.<n>``
      plus ``filename_suffix``): TF1's ``<secs>.<host>`` names let a writer reopened within the
      same second overwrite the previous file.
    * ``flush_secs=None`` means 2 s (TF1: 120 s); pass a number to choose.
    * Construction works anywhere (TF1 raises under eager execution).
    * Events written after :meth:`close` are dropped with a warning (TF1 drops them silently);
      :meth:`reopen` starts a new file.

    ``graph`` may be a serialized ``GraphDef``, a message with ``SerializeToString`` or an object
    with ``as_graph_def()``; it is written as ``Event.graph_def``.
    """

    def __init__(
        self,
        logdir: str | os.PathLike[str] | EventSink,
        graph: Any = None,
        max_queue: int = DEFAULT_MAX_QUEUE,
        flush_secs: float | None = None,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ) -> None:
        if logdir is None:
            raise ValueError("logdir cannot be None")
        if isinstance(logdir, EventSink) and not isinstance(logdir, (str, os.PathLike)):
            self._sink_given: EventSink | None = logdir
            self._logdir = ""
        else:
            self._sink_given = None
            self._logdir = os.fspath(logdir)
            os.makedirs(self._logdir, exist_ok=True)
        flush = DEFAULT_FLUSH_SECS if flush_secs is None else float(flush_secs)
        if not flush > 0:
            raise ValueError(f"flush_secs must be positive, got {flush_secs!r}")
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 0:
            raise ValueError(f"max_queue must be a non-negative int, got {max_queue!r}")
        self._options = (filename_suffix or "", flush, max_queue)
        self._sink: EventSink | None = None
        self._closed = False
        self._warned = False
        self._seen_tags: set[str] = set()
        if filename_suffix:
            self._get_sink()  # TF1 creates a suffixed file at once
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _get_sink(self) -> EventSink | None:
        if self._closed:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"FileWriter({self._logdir!r}) is closed; events are dropped until reopen()",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return None
        if self._sink is None:
            if self._sink_given is not None:
                self._sink = self._sink_given
            else:
                suffix, flush, max_queue = self._options
                self._sink = FileSink(self._logdir, suffix, flush_secs=flush, max_queue=max_queue)
        return self._sink

    def get_logdir(self) -> str:
        """The directory this writer writes to ("" for a custom sink)."""
        return self._logdir

    def _write(self, event: Any, global_step: Any) -> None:
        sink = self._get_sink()
        if sink is None:
            return
        event.wall_time = time.time()
        if global_step is not None:
            event.step = to_step(global_step, "global_step")
        sink.write(bytes(event.SerializeToString()))

    def add_summary(self, summary: Any, global_step: Any = None) -> None:
        """Write a ``Summary`` (serialized bytes, e.g. from :func:`merge_all`, or a message)
        at ``global_step``. ``None`` (an empty ``merge_all``) is ignored. Tag names may be used
        again afterwards, as after :func:`merge_all`."""
        from . import proto

        _v1.names_in_use.clear()
        _v1.round += 1
        if summary is None:
            return
        parsed = _parse(proto.Summary, _serialized(summary, "summary"), "summary")
        for value in parsed.value:
            if value.tag in self._seen_tags:
                value.ClearField("metadata")
            else:
                self._seen_tags.add(value.tag)
        event = proto.Event()
        event.summary.CopyFrom(parsed)
        self._write(event, global_step)

    def add_event(self, event: Any) -> None:
        """Write an ``Event`` proto (or its serialized bytes) as is."""
        from . import proto

        data = _serialized(event, "event")
        _parse(proto.Event, data, "event")  # never write a record TensorBoard cannot parse
        sink = self._get_sink()
        if sink is not None:
            sink.write(data)

    def add_session_log(self, session_log: Any, global_step: Any = None) -> None:
        """Write a ``SessionLog`` (e.g. ``SessionLog(status=SessionLog.START)``)."""
        from . import proto

        event = proto.Event()
        event.session_log.CopyFrom(
            _parse(proto.SessionLog, _serialized(session_log, "session_log"), "session_log")
        )
        self._write(event, global_step)

    def add_graph(self, graph: Any, global_step: Any = None, graph_def: Any = None) -> None:
        """Write a ``GraphDef`` (``graph``, or the deprecated ``graph_def``) as ``graph_def``."""
        from . import proto

        source = graph if graph is not None else graph_def
        if source is None:
            raise ValueError("add_graph needs a graph or a graph_def")
        if hasattr(source, "as_graph_def"):
            source = source.as_graph_def()
        event = proto.Event(graph_def=_serialized(source, "graph"))
        self._write(event, global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: Any = None) -> None:
        """Write a ``MetaGraphDef`` (a message or its bytes) as ``meta_graph_def``."""
        from . import proto

        event = proto.Event(meta_graph_def=_serialized(meta_graph_def, "meta_graph_def"))
        self._write(event, global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Any = None) -> None:
        """Write a ``RunMetadata`` (a message or its bytes) as ``tagged_run_metadata``."""
        from . import proto

        event = proto.Event()
        event.tagged_run_metadata.tag = check_tag(tag, "tag")
        event.tagged_run_metadata.run_metadata = _serialized(run_metadata, "run_metadata")
        self._write(event, global_step)

    def flush(self) -> None:
        """Write everything added so far to disk."""
        if self._sink is not None:
            self._sink.flush()

    def close(self) -> None:
        """Flush and close the file; later events are dropped until :meth:`reopen`."""
        sink, self._sink = self._sink, None
        self._closed = True
        if sink is not None:
            sink.close()

    def reopen(self) -> None:
        """After :meth:`close`: write later events to a new file in the same directory."""
        if self._closed:
            if self._sink_given is not None:
                raise ValueError("a FileWriter on a custom sink cannot be reopened")
            self._closed = False
            self._warned = False
            self._seen_tags = set()
