"""What the sinks written by a background thread share: sub-runs, error collection across them,
and the re-entrancy rule for ``flush``, ``close`` and ``child``.

A :class:`ThreadedSink` holds one :class:`~npsummary._sinks.pending.PendingState` (its records,
its errors, its locks and the background thread that writes it, ``state.flusher``) and the sinks
of its sub-runs. :class:`~npsummary._sinks.file.FileSink` and
:class:`~npsummary._sinks.segments.SegmentSink` supply the state, ``write`` (their hot path) and
how a sub-run's sink is made.

Re-entrancy: a signal handler or finalizer may call ``flush`` or ``close`` while its own thread
is inside npsummary holding a lock of the sink (``busy.depth`` is then non-zero, see
``_flusher``). Such a call never waits for a lock: ``flush`` wakes the background thread, which
writes at once; ``close`` refuses further writes and hands the state to the background thread to
write and release.
"""

from __future__ import annotations

import weakref
from typing import Any, TypeVar, cast

from .base import check_run_path
from .flusher import busy
from .pending import PendingState

__all__ = ["ThreadedSink"]

_Sink = TypeVar("_Sink", bound="ThreadedSink")


class ThreadedSink:
    """Sub-runs, ``flush``, ``close`` and ``child`` of a sink whose state a background thread
    writes. Subclasses set ``_state`` and ``_finalizer`` (which retires the state when the sink is
    collected), call :meth:`_init_children`, and implement ``write`` and :meth:`_new_child`."""

    _state: PendingState
    _finalizer: weakref.finalize[..., Any]

    def _init_children(self) -> None:
        self._children: dict[str, ThreadedSink] = {}

    def _new_child(self: _Sink, name: str) -> _Sink:
        """A sink for the sub-run ``name`` (checked), with this sink's options."""
        raise NotImplementedError

    def _flush_state(self) -> None:
        """Write this sink's own records and make them durable, then raise a pending error."""
        state = self._state
        if not state.closed:
            state.drain(fsync=True)
            state.raise_error()

    def flush(self) -> None:
        """Write this run's records and its sub-runs' and make them durable; a failure in one
        does not stop the others, and the first error is raised after all were tried.

        Called re-entrantly, it only wakes the background thread, which writes at once.
        """
        if busy.depth:
            self._state.flusher.wake()
            return
        errors: list[OSError] = []
        try:
            self._flush_state()
        except OSError as exc:
            errors.append(exc)
        for child in list(self._children.values()):
            try:
                child.flush()
            except OSError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def close(self) -> None:
        """Flush and close this run and its sub-runs (all of them, even if one fails), then
        raise the first error. Idempotent. A ``write`` that returned before ``close`` returns is
        kept; a later one raises ``ValueError``.

        Called re-entrantly, it refuses further writes at once and hands the writing and the
        closing to the background thread.
        """
        errors: list[OSError] = []
        for child in list(self._children.values()):
            try:
                child.close()
            except OSError as exc:
                errors.append(exc)
        state = self._state
        self._finalizer.detach()
        if busy.depth:
            state.closing = True
            state.flusher.retire(state)
        elif not state.closed:
            state.close()
            try:
                state.raise_error()
            except OSError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def child(self: _Sink, name: str) -> _Sink:
        """The sink of the sub-run ``name`` (one path component), made on first use."""
        sink = self._children.get(name)
        if sink is not None:
            return cast(_Sink, sink)  # _children holds sinks of self's own type
        check_run_path(name)  # one component, or nested parts (tensorboardX flavour)
        # Two threads logging a new sub-run at once must share one sink, or the loser's records
        # would miss flush() and close(). The lock is re-entrant: a signal handler creating a
        # sub-run while its thread creates another passes (the worst outcome is a second sink
        # for one name, whose records are still written).
        with self._state.children_lock:
            sink = self._children.get(name)
            if sink is None:
                sink = self._new_child(name)
                self._children[name] = sink
        return cast(_Sink, sink)
