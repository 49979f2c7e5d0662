"""Events that carry no summary: session logs, graphs, meta graphs and run metadata.

Every front end that writes one of them (``SummaryWriter``'s ``purge_step`` and ``add_graph``,
its ``file_writer``, ``v1.FileWriter``) builds it here. Users' messages (any library's, or their
bytes) go through :func:`npsummary._common.messages.message_bytes`. The events returned carry
no wall time or step unless one is given: the front end stamps them as its API says.
"""

from __future__ import annotations

from typing import Any

from .._common.messages import message_bytes, parse_message

__all__ = [
    "graph_events",
    "meta_graph_event",
    "run_metadata_event",
    "session_log_event",
    "session_start_event",
]


def session_start_event(step: int, wall_time: float) -> Any:
    """``SessionLog.START`` at ``step``: TensorBoard discards a run's events from ``step`` on
    (``purge_step``)."""
    from .. import proto

    event = proto.Event(step=step, wall_time=wall_time)
    event.session_log.status = proto.SESSION_LOG_START
    return event


def session_log_event(session_log: Any, what: str = "session_log") -> Any:
    """An event holding a user's ``SessionLog`` (a message or its bytes, which must parse)."""
    from .. import proto

    data = message_bytes(session_log, "SessionLog", what)
    event = proto.Event()
    event.session_log.CopyFrom(parse_message(proto.SessionLog, data, what))
    return event


def graph_events(
    graph: Any, what: str, *, run_metadata: Any = None, wall_time: float | None = None
) -> list[Any]:
    """The ``graph_def`` event of a ``GraphDef`` (a message or its bytes) and, with
    ``run_metadata`` (torch's step stats), a ``tagged_run_metadata`` event tagged ``step1``,
    as tensorboardX and torch write them."""
    from .. import proto

    events = [proto.Event(graph_def=message_bytes(graph, "GraphDef", what))]
    if run_metadata is not None:
        events.append(run_metadata_event(run_metadata, "step1", what))
    if wall_time is not None:
        for event in events:
            event.wall_time = wall_time
    return events


def meta_graph_event(meta_graph_def: Any, what: str = "meta_graph_def") -> Any:
    """The ``meta_graph_def`` event of a ``MetaGraphDef`` (a message or its bytes)."""
    from .. import proto

    return proto.Event(meta_graph_def=message_bytes(meta_graph_def, "MetaGraphDef", what))


def run_metadata_event(run_metadata: Any, tag: str, what: str = "run_metadata") -> Any:
    """The ``tagged_run_metadata`` event of a ``RunMetadata`` (a message or its bytes)."""
    from .. import proto

    event = proto.Event()
    event.tagged_run_metadata.tag = tag
    event.tagged_run_metadata.run_metadata = message_bytes(run_metadata, "RunMetadata", what)
    return event
