"""``SummaryWriter.file_writer``: the low-level writer object of tensorboardX and torch.

Frameworks reach past ``SummaryWriter`` to this object: Lightning's ``TensorBoardLogger`` writes
its hparams summaries with ``experiment._get_file_writer().add_summary(...)``, stable-baselines3
its ``HParam`` with ``writer.file_writer.add_summary(...)``. Such summaries are ``Summary``
messages of TensorBoard's, tensorboardX's or torch's proto classes; any of them, npsummary's own,
or serialized bytes are accepted and written into the same event file as the ``SummaryWriter``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..._common.convert import to_step, to_walltime
from ..._common.messages import message_bytes, parse_message
from ..._format.wire import encode_event
from ..._sinks.base import EventSink

__all__ = ["MetadataDefaults", "RunFileWriter"]


class MetadataDefaults:
    """Step and wall time used when a call passes none, set by ``use_metadata``."""

    def __init__(self) -> None:
        self.step: int | None = None
        self.walltime: float | None = None

    @contextlib.contextmanager
    def use(self, global_step: Any, walltime: Any) -> Iterator[None]:
        # The error classes load on an error (import time: a writer does not need them).
        from ..._common.compat_errors import MetadataMissingError, MetadataNestingError

        if self.step is not None or self.walltime is not None:
            raise MetadataNestingError("use_metadata: default metadata is already set (nested use)")
        if global_step is None and walltime is None:
            raise MetadataMissingError("use_metadata: give global_step, walltime or both")
        step = None if global_step is None else to_step(global_step, "use_metadata", truncate=True)
        wall = None if walltime is None else to_walltime(walltime, "use_metadata")
        self.step, self.walltime = step, wall
        try:
            yield
        finally:
            self.step = self.walltime = None


class RunFileWriter:
    """tensorboardX's / torch's ``FileWriter`` API over one run of a ``SummaryWriter``.

    Args:
      logdir: the run directory (``get_logdir()``).
      sink: returns the run's current sink (a closed ``SummaryWriter`` opens a new file).
      defaults: the owner's ``use_metadata`` defaults.
      on_close: what ``close()`` does (closes the run's file).
    """

    def __init__(
        self,
        logdir: str,
        sink: Callable[[], EventSink],
        defaults: MetadataDefaults,
        on_close: Callable[[], None],
    ) -> None:
        self._logdir = logdir
        self._sink = sink
        self._defaults = defaults
        self._on_close = on_close

    def _stamp(self, global_step: Any, walltime: Any, what: str) -> tuple[int, float]:
        step = (
            (self._defaults.step or 0)
            if global_step is None
            else to_step(global_step, what, truncate=True)
        )
        if walltime is None:
            wall = self._defaults.walltime if self._defaults.walltime is not None else time.time()
        else:
            wall = to_walltime(walltime, what)
        return step, wall

    def get_logdir(self) -> str:
        """The run directory this object writes into."""
        return self._logdir

    def add_summary(self, summary: Any, global_step: Any = None, walltime: Any = None) -> None:
        """Write a ``Summary`` (a message of any TensorBoard-compatible package, or bytes)."""
        from ... import proto

        payload = message_bytes(summary, "Summary", "add_summary")
        parse_message(proto.Summary, payload, "add_summary")
        step, wall = self._stamp(global_step, walltime, "add_summary")
        self._sink().write(encode_event(wall, step, payload))

    def add_event(self, event: Any, step: Any = None, walltime: Any = None) -> None:
        """Write an ``Event``; its wall time is set (``walltime`` or now), and its step when
        ``step`` (or ``use_metadata``'s step) is given, as tensorboardX does."""
        from ... import proto

        data = message_bytes(event, "Event", "add_event")
        parsed = parse_message(proto.Event, data, "add_event")
        given_step = step if step is not None else self._defaults.step
        stamped_step, wall = self._stamp(given_step, walltime, "add_event")
        parsed.wall_time = wall
        if given_step is not None:
            parsed.step = stamped_step
        self._sink().write(bytes(parsed.SerializeToString()))

    def add_graph(self, graph_profile: Any, walltime: Any = None) -> None:
        """Write a graph: a ``GraphDef`` (message or bytes), or torch's ``(GraphDef,
        RunMetadata)`` pair, whose step stats go in a ``TaggedRunMetadata`` tagged ``step1``."""
        from ..._summaries.events import graph_events

        stats = None
        if isinstance(graph_profile, tuple) and len(graph_profile) == 2:
            graph_profile, stats = graph_profile
        _, wall = self._stamp(None, walltime, "add_graph")
        events = graph_events(graph_profile, "add_graph", run_metadata=stats, wall_time=wall)
        sink = self._sink()
        for event in events:
            sink.write(bytes(event.SerializeToString()))

    def add_onnx_graph(self, graph: Any, walltime: Any = None) -> None:
        """Write an already converted ``GraphDef`` (see ``SummaryWriter.add_onnx_graph``)."""
        self.add_graph(graph, walltime)

    def add_openvino_graph(self, graph: Any, walltime: Any = None) -> None:
        """Write an already converted ``GraphDef`` (see ``SummaryWriter.add_openvino_graph``)."""
        self.add_graph(graph, walltime)

    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Any = None, walltime: Any = None) -> Iterator[Any]:
        """Default step and wall time for the calls inside the ``with`` block."""
        with self._defaults.use(global_step, walltime):
            yield self

    def flush(self) -> None:
        """Write and fsync everything logged to this run so far."""
        self._sink().flush()

    def close(self) -> None:
        """Close this run's event file (a later write opens a new one)."""
        self._on_close()

    def reopen(self) -> None:
        """Nothing to do: a closed run opens a new event file on its next write."""
