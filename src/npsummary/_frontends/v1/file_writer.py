"""``tf.compat.v1.summary.FileWriter``: ``Summary`` protos and events into a run directory."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from ..._common.convert import check_tag, to_step
from ..._common.errors import warn_user
from ..._common.messages import check_event_size, message_bytes, parse_message
from ..._core.event_writer import ClosingContext, EventWriter, LogdirTarget, SinkOptions
from ..._core.ranks import RankGated
from ..._sinks.base import DEFAULT_MAX_QUEUE, EventSink
from ..context import v1_state

if TYPE_CHECKING:
    from ..._common.types import GlobalStepLike
    from ..._core.ranks import Ranks

__all__ = ["FileWriter"]


class FileWriter(RankGated, ClosingContext):
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

    ``logdir`` may be an fsspec URL (``s3://bucket/run``). ``rank``/``ranks`` follow
    :class:`npsummary.SummaryWriter`: by default only global rank 0 writes, other ranks get a
    writer that accepts every call and writes nothing; ``ranks="all"`` or a list of ranks write
    the sub-runs ``<logdir>/rank_<k>``.
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
        *,
        rank: int | None = None,
        ranks: Ranks = None,
    ) -> None:
        self._target = LogdirTarget(logdir, self._rank_run(rank, ranks))
        self._options = SinkOptions.checked(
            max_queue=max_queue, flush_secs=flush_secs, filename_suffix=filename_suffix
        )
        if self._target.sink is None and not self._target.remote:
            os.makedirs(self._target.logdir, exist_ok=True)
        self._writer: EventWriter | None = None
        self._closed = False
        self._warned = False
        self._seen_tags: set[str] = set()  # tags whose metadata went to the file _seen_file
        self._seen_file: str | None = None
        if filename_suffix:
            self._get_writer()  # TF1 creates a suffixed file at once
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _get_writer(self) -> EventWriter | None:
        if self._closed:
            if not self._warned:
                self._warned = True
                warn_user(
                    f"FileWriter({self._target.logdir!r}) is closed; events are dropped until "
                    "reopen()",
                    RuntimeWarning,
                )
            return None
        if self._writer is None:
            self._writer = self._target.open(self._options)
        return self._writer

    def get_logdir(self) -> str:
        """The directory this writer writes to ("" for a custom sink)."""
        return self._target.logdir

    def _write(self, event: Any, global_step: GlobalStepLike) -> bool:
        """Stamp ``event`` and write it; False when the writer is closed (dropped)."""
        step = None if global_step is None else to_step(global_step, "global_step", truncate=True)
        writer = self._get_writer()
        if writer is None:
            return False
        event.wall_time = time.time()
        if step is not None:
            event.step = step
        writer.write_event(event)
        return True

    def add_summary(self, summary: Any, global_step: GlobalStepLike = None) -> None:
        """Write a ``Summary`` (serialized bytes, e.g. from :func:`npsummary.v1.merge_all`, or
        a message) at ``global_step``. ``None`` (an empty ``merge_all``) is ignored. Tag names
        may be used again afterwards, as after ``merge_all``."""
        from ... import proto

        v1_state.names_in_use.clear()
        v1_state.round += 1
        if summary is None:
            return
        data = message_bytes(summary, "Summary", "summary")
        check_event_size(len(data), "summary")
        parsed = parse_message(proto.Summary, data, "summary")
        self._follow_file()
        first_seen: set[str] = set()
        for value in parsed.value:
            if value.tag in self._seen_tags or value.tag in first_seen:
                value.ClearField("metadata")
            else:
                first_seen.add(value.tag)
        event = proto.Event()
        event.summary.CopyFrom(parsed)
        if self._write(event, global_step):  # tags count as sent only once written
            self._seen_tags |= first_seen

    def _follow_file(self) -> None:
        """Metadata is stripped per file: forget the tags sent once the file they went to is
        gone (the logdir was removed; the sink starts a new file) or another file is written."""
        writer = None if self._closed else self._writer
        path = getattr(writer.sink, "path", None) if writer is not None else None
        if path and not os.path.exists(path):
            self._seen_tags, self._seen_file = set(), None  # sent again into the next file
        elif self._seen_file is None:
            self._seen_file = path
        elif path != self._seen_file:
            self._seen_tags, self._seen_file = set(), path

    def add_event(self, event: Any) -> None:
        """Write an ``Event`` proto (or its serialized bytes) as is."""
        from ... import proto

        data = message_bytes(event, "Event", "event")
        check_event_size(len(data), "event")
        parse_message(proto.Event, data, "event")  # never write a record TensorBoard can't parse
        writer = self._get_writer()
        if writer is not None:
            writer.sink.write(data)

    def add_session_log(self, session_log: Any, global_step: GlobalStepLike = None) -> None:
        """Write a ``SessionLog`` (e.g. ``SessionLog(status=SessionLog.START)``)."""
        from ..._summaries.events import session_log_event

        self._write(session_log_event(session_log), global_step)

    def add_graph(
        self, graph: Any, global_step: GlobalStepLike = None, graph_def: Any = None
    ) -> None:
        """Write a ``GraphDef`` (``graph``, or the deprecated ``graph_def``) as ``graph_def``."""
        from ..._summaries.events import graph_events

        source, what = (graph, "graph") if graph is not None else (graph_def, "graph_def")
        if source is None:
            raise ValueError("add_graph needs a graph or a graph_def")
        if hasattr(source, "as_graph_def"):
            source = source.as_graph_def()
        (event,) = graph_events(source, what)
        self._write(event, global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: GlobalStepLike = None) -> None:
        """Write a ``MetaGraphDef`` (a message or its bytes) as ``meta_graph_def``."""
        from ..._summaries.events import meta_graph_event

        self._write(meta_graph_event(meta_graph_def), global_step)

    def add_run_metadata(
        self, run_metadata: Any, tag: str, global_step: GlobalStepLike = None
    ) -> None:
        """Write a ``RunMetadata`` (a message or its bytes) as ``tagged_run_metadata``."""
        from ..._summaries.events import run_metadata_event

        self._write(run_metadata_event(run_metadata, check_tag(tag, "tag")), global_step)

    def flush(self) -> None:
        """Write everything added so far to disk."""
        if self._writer is not None:
            self._writer.sink.flush()

    def close(self) -> None:
        """Flush and close the file; later events are dropped until :meth:`reopen`."""
        writer, self._writer = self._writer, None
        self._closed = True
        if writer is not None:
            writer.sink.close()

    def reopen(self) -> None:
        """After :meth:`close`: write later events to a new file in the same directory."""
        if self._closed:
            if self._target.sink is not None:
                raise ValueError("a FileWriter on a custom sink cannot be reopened")
            self._closed = False
            self._warned = False
            self._seen_tags = set()
