"""Per-thread state of the ``tf.summary`` and ``tf.compat.v1.summary`` front ends.

* ``tf.summary``: the default writer, the default step and the recording condition, each per
  thread as in TensorFlow (``writer.as_default(step)``, ``set_step``, ``record_if``);
* the name scope (:func:`npsummary.name_scope`), which prefixes tags of both;
* ``tf.compat.v1.summary``: the tag names in use since the last merge (for TF1's ``_1``
  suffixes) and the summary collections waiting for ``merge_all``.

:func:`reset` puts the current thread back to the state of a new one (tests use it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["reset", "state", "v1_state"]


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
