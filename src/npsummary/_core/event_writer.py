"""The shared writer core under the three front ends.

Every front end (``SummaryWriter``, the ``tf.summary`` writers, ``v1.FileWriter``) does the same
three things through this module:

1. check its sink options once (:meth:`SinkOptions.checked`) and turn its logdir argument into
   a :class:`LogdirTarget` (a path, or an :class:`~npsummary.EventSink` given by the user);
2. open an :class:`EventWriter` on it when the first event needs one (:meth:`LogdirTarget.open`);
3. write serialized ``Summary`` values (built by :mod:`npsummary._summaries`) with a step and a
   wall time through that writer, which frames nothing itself: the sink does the I/O.

:class:`WriterHandle` gives a front end ``flush``, idempotent ``close`` and ``with``.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .._common import messages as _messages
from .._common.convert import check_filename_suffix, check_int, to_duration
from .._common.messages import check_event_size
from .._format.wire import encode_event, encode_summary
from .._sinks.base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink
from .._sinks.file import FileSink
from .._summaries.scalar import ScalarEncoder, SimpleScalarEncoder

if TYPE_CHECKING:
    from .._summaries.nonfinite import NonFiniteGuard

__all__ = [
    "ClosingContext",
    "EventWriter",
    "LogdirTarget",
    "SinkOptions",
    "WriterHandle",
    "safe_run_name",
    "subrun_name",
]


class SinkOptions(NamedTuple):
    """How a writer's event file is named and flushed; checked once, the same for every front
    end: ``max_queue`` must be an int >= 0 (``TypeError``/``ValueError``), ``flush_secs`` a
    positive finite number of seconds, ``filename_suffix`` a str."""

    filename_suffix: str = ""
    flush_secs: float = DEFAULT_FLUSH_SECS
    max_queue: int = DEFAULT_MAX_QUEUE

    @classmethod
    def checked(
        cls,
        *,
        max_queue: Any = None,
        flush_secs: Any = None,
        filename_suffix: Any = "",
        flush_name: str = "flush_secs",
        flush_scale: float = 1.0,
    ) -> SinkOptions:
        """Validate the options as given by a user; ``None`` means the default.

        ``flush_name`` and ``flush_scale`` let ``create_file_writer`` pass ``flush_millis``.
        """
        queue = (
            DEFAULT_MAX_QUEUE if max_queue is None else check_int(max_queue, "max_queue", minimum=0)
        )
        if flush_secs is None:
            seconds = DEFAULT_FLUSH_SECS
        else:
            seconds = to_duration(flush_secs, flush_name, scale=flush_scale)
        return cls(check_filename_suffix(filename_suffix), seconds, queue)


class LogdirTarget:
    """Where a writer's events go: a run directory (a path or an fsspec URL such as
    ``s3://bucket/run``), or a sink the user passed instead; ``run`` names a sub-run of it
    (``rank_<k>`` when every rank writes)."""

    def __init__(self, logdir: Any, run: str = "") -> None:
        if logdir is None:
            raise ValueError("logdir cannot be None")
        if isinstance(logdir, EventSink) and not isinstance(logdir, (str, os.PathLike)):
            self.sink: EventSink | None = logdir
            self.logdir = ""
        elif isinstance(logdir, (str, os.PathLike)):
            self.sink = None
            self.logdir = os.fspath(logdir)
            if isinstance(self.logdir, bytes):
                raise TypeError("logdir must be a str path, not bytes")
        else:
            raise TypeError(f"logdir must be a path or an EventSink, got {type(logdir).__name__}")
        # "://" is a cheap pre-check: the URL module (and fsspec) load only for a URL.
        self.remote = "://" in self.logdir and _is_url(self.logdir)
        if run:
            if self.sink is not None:
                self.sink = self.sink.child(run)
            elif self.remote:
                self.logdir = f"{self.logdir.rstrip('/')}/{run}"
            else:
                self.logdir = os.path.join(self.logdir, run)

    def open(self, options: SinkOptions) -> EventWriter:
        """An :class:`EventWriter` on a new event file (or on the given sink)."""
        if self.sink is not None:
            return EventWriter(self.sink)
        if self.remote:
            from .._sinks.open_url import open_url_sink

            return EventWriter(
                open_url_sink(
                    self.logdir,
                    options.filename_suffix,
                    flush_secs=options.flush_secs,
                    max_queue=options.max_queue,
                )
            )
        sink = FileSink(
            self.logdir,
            options.filename_suffix,
            flush_secs=options.flush_secs,
            max_queue=options.max_queue,
        )
        return EventWriter(sink)


def _is_url(logdir: str) -> bool:
    from .._common.urls import is_url

    return is_url(logdir)


_MAX_RUN_NAME_BYTES = 200  # file systems allow 255 bytes per path component


def safe_run_name(name: str) -> str:
    """Turn a tag into one path component that cannot leave its parent directory.

    Separators and NUL become ``_``; ``.``/``..``/empty are replaced; a name longer than 200
    UTF-8 bytes is shortened and given a hash of the full name, so it stays unique and valid.
    """
    cleaned = name.replace("/", "_").replace("\\", "_").replace("\x00", "_")
    if cleaned in ("", ".", ".."):
        cleaned = cleaned.replace(".", "_") or "_"
    encoded = cleaned.encode("utf-8")
    if len(encoded) > _MAX_RUN_NAME_BYTES:
        import hashlib  # only for over-long names; costs milliseconds at import

        digest = hashlib.sha1(encoded).hexdigest()[:16]
        head = encoded[: _MAX_RUN_NAME_BYTES - 17].decode("utf-8", errors="ignore")
        cleaned = f"{head}~{digest}"
    return cleaned


def subrun_name(main_tag: str, key: str) -> str:
    """The sub-run directory ``add_scalars(main_tag, {key: ...})`` writes ``key`` to.

    ``<main_tag>_<key>``, as tensorboardX names it, made one safe path component by
    :func:`safe_run_name`. Distinct keys get distinct names: a ``/``, ``\\`` or NUL in ``key`` is
    written ``%2F``, ``%5C``, ``%00`` (so ``"train/a"`` and ``"train_a"`` stay two curves), and a
    ``%`` followed by two hex digits is written ``%25``; any other key is kept as it is.
    """
    if "/" in key or "\\" in key or "\x00" in key or "%" in key:
        import re

        key = re.sub(r"%(?=[0-9A-Fa-f]{2})|[/\\\x00]", lambda m: f"%{ord(m[0]):02X}", key)
    return safe_run_name(f"{main_tag}_{key}")


class EventWriter:
    """Stamps serialized summaries with step and wall time and hands them to a sink."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.scalars = ScalarEncoder()
        self.simple_scalars = SimpleScalarEncoder()
        # For the front ends' inlined scalar paths: one attribute look-up each instead of two.
        self.plain_scalars = self.scalars.plain
        self.plain_simple_scalars = self.simple_scalars.plain
        self.sink_write = sink.write
        self.children: dict[str, EventWriter] = {}

    @property
    def check_nonfinite(self) -> NonFiniteGuard:
        """The non-finite policy of this writer's histograms and images (warns once per tag)."""
        guard: NonFiniteGuard | None = self.__dict__.get("_nonfinite")
        if guard is None:
            # Made on first use: scalars never need it, so its module does not load with the
            # writers. setdefault is atomic: racing first calls share one guard.
            from .._summaries.nonfinite import NonFiniteGuard

            guard = self.__dict__.setdefault("_nonfinite", NonFiniteGuard())
        return guard

    # Every event is checked against protobuf's 2 GiB limit here, before it is framed (builders
    # of big payloads, tensors and raw protos, check sooner, before encoding them).

    def write_values(self, values: list[bytes], step: int, walltime: float) -> None:
        """Write one event holding the serialized ``Summary.Value`` messages ``values``."""
        size = sum(map(len, values)) + 6 * len(values)  # + each value's field header
        if size > _messages.MAX_EVENT_BYTES:
            check_event_size(size, ", ".join(_value_tag(v) for v in values))
        self.sink.write(encode_event(walltime, step, encode_summary(values)))

    def write_summary(self, summary: bytes, step: int, walltime: float, tag: str = "") -> None:
        """Write one event holding a serialized ``Summary`` (``tag`` names it in errors)."""
        check_event_size(len(summary), tag or "summary")
        self.sink.write(encode_event(walltime, step, summary))

    def write_scalar(
        self,
        tag: str,
        value: float,
        step: int,
        walltime: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> None:
        """Write one TF2 scalar event (the hot path: cached per-tag bytes)."""
        self.sink.write(self.scalars.event(tag, value, step, walltime, description, display_name))

    def write_simple_scalar(
        self,
        tag: str,
        value: float,
        step: int,
        walltime: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> None:
        """Write one legacy ``simple_value`` scalar event (tensorboardX's and torch's form)."""
        self.sink.write(
            self.simple_scalars.event(tag, value, step, walltime, description, display_name)
        )

    def write_event(self, event: Any) -> None:
        """Write an ``Event`` message as it is."""
        check_event_size(event.ByteSize(), "event")
        self.sink.write(bytes(event.SerializeToString()))

    def child(self, run: str) -> EventWriter:
        """The writer of the sub-run ``run`` (one path component), created on first use."""
        child = self.children.get(run)
        if child is None:
            child = self.children[run] = EventWriter(self.sink.child(run))
        return child


def _value_tag(value: bytes) -> str:
    """The tag of a serialized ``Summary.Value`` (its field 1, written first), for errors."""
    if value[:1] != b"\x0a":
        return "?"
    length, shift, i = 0, 0, 1
    while i < len(value) and i < 6:
        length |= (value[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not value[i - 1] & 0x80:
            break
    return bytes(value[i : i + length]).decode("utf-8", errors="replace")


_ContextT = TypeVar("_ContextT", bound="ClosingContext")


class ClosingContext:
    """``with obj:`` closes ``obj`` on exit."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _ContextT) -> _ContextT:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class WriterHandle(ClosingContext):
    """Owner of an :class:`EventWriter` that can be flushed and closed, and used in ``with``."""

    _writer: EventWriter | None

    def flush(self) -> None:
        """Write and fsync everything logged so far (sub-runs included) before returning."""
        if self._writer is not None:
            self._writer.sink.flush()

    def close(self) -> None:
        """Flush and close the event files. Idempotent."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.sink.close()
