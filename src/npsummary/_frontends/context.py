"""Per-thread state of the ``tf.summary`` and ``tf.compat.v1.summary`` front ends.

* ``tf.summary``: the default writer, the default step and the recording condition, each per
  thread as in TensorFlow (``writer.as_default(step)``, ``set_step``, ``record_if``);
* the name scope (:func:`npsummary.name_scope`), which prefixes tags of both;
* ``tf.compat.v1.summary``: the tag names in use since the last merge (for TF1's ``_1``
  suffixes) and the summary collections waiting for ``merge_all``.

:func:`reset` puts the current thread back to the state of a new one (tests use it). The public
functions here (``set_step``, ``name_scope``, ``record_if`` …) are ``tf.summary``'s.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .._common.convert import check_tag, to_step

if TYPE_CHECKING:
    from .._common.types import StepLike

__all__ = [
    "get_step",
    "name_scope",
    "record_if",
    "reset",
    "scoped_tag",
    "set_step",
    "should_record",
    "should_record_summaries",
    "state",
    "summary_scope",
    "v1_state",
]


class _State(threading.local):
    def __init__(self) -> None:
        self.writer: Any = None  # the default tf.summary writer (a SummaryFileWriter) or None
        self.step: int | None = None
        self.record_if: bool | Callable[[], Any] = True
        self.name_scope: str = ""


class _V1State(threading.local):
    def __init__(self) -> None:
        self.names_in_use: dict[str, int] = {}
        self.round = 0  # number of FileWriter.add_summary calls in this thread
        # collection key -> (round, summary) pairs; stale ones are dropped lazily
        self.collections: dict[str, list[tuple[int, bytes]]] = {}
        self.warned_overflow = False


state = _State()
v1_state = _V1State()


def reset() -> None:
    """Forget the current thread's default writer, step, condition, scope and collections."""
    state.__init__()  # type: ignore[misc]
    v1_state.__init__()  # type: ignore[misc]


def set_step(step: StepLike) -> None:
    """Set the default step of the current thread (``tf.summary.experimental.set_step``)."""
    state.step = None if step is None else to_step(step, "step")


def get_step() -> int | None:
    """Return the default step of the current thread, or ``None``."""
    return state.step


def should_record() -> bool:
    condition = state.record_if
    if callable(condition):
        condition = condition()
    return bool(condition)


_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


def scoped_tag(name: Any) -> str:
    """The tag of a summary called ``name`` under the current name scope."""
    return state.name_scope + check_tag(name, "name")


@contextlib.contextmanager
def name_scope(name: str | None) -> Iterator[str]:
    """Context manager prefixing the tags of summaries written inside it, like ``tf.name_scope``.

    Scopes nest (``a`` then ``b`` gives tags ``a/b/<name>``); a name ending in ``/`` replaces the
    current scope instead of extending it, and an empty name or ``None`` clears it. Yields the
    scope string (``"a/b/"``). The scope is per thread and also applies to ``npsummary.v1``.
    """
    old = state.name_scope
    if name is None or (isinstance(name, str) and not name):
        scope = ""
    else:
        name = check_tag(name, "name_scope name")
        scope = name if name.endswith("/") else old + name + "/"
    state.name_scope = scope
    try:
        yield scope
    finally:
        state.name_scope = old


@contextlib.contextmanager
def summary_scope(
    name: str | None, default_name: str = "summary", values: Any = None
) -> Iterator[tuple[str, str]]:
    """``tf.summary.experimental.summary_scope``: yields ``(tag, scope)`` for a summary.

    ``tag`` is the current name scope plus ``name`` verbatim; ``scope`` is a name scope entered
    for the duration of the block, built from ``name`` stripped of characters outside
    ``[-_/.A-Za-z0-9]`` (or ``default_name`` if nothing is left). ``values`` is ignored.
    """
    default_name = check_tag(default_name, "summary_scope default_name")
    name = default_name if name is None else check_tag(name, "summary_scope name") or default_name
    tag = scoped_tag(name)
    scope_name = _INVALID_SCOPE_CHARACTERS.sub("", name) or default_name
    with name_scope(scope_name) as scope:
        yield tag, scope


@contextlib.contextmanager
def record_if(condition: bool | Callable[[], Any]) -> Iterator[None]:
    """Context manager: summaries inside write only while ``condition`` holds.

    ``condition`` is a bool (or anything ``bool()`` accepts) or a callable evaluated at every
    summary call, e.g. ``lambda: step % 100 == 0``. The previous condition is restored on exit.
    """
    old = state.record_if
    state.record_if = condition
    try:
        yield
    finally:
        state.record_if = old


def should_record_summaries() -> bool:
    """Whether a summary written now would be recorded: a default writer exists and the
    ``record_if`` condition holds."""
    writer = state.writer
    if writer is None or writer._writer is None:
        return False
    return should_record()
