"""The npsummary internals the integrations use, imported in this one place.

Everything else in :mod:`npsummary.integrations` goes through npsummary's public API.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .._frontends.context import state
from .._sinks.projector import write_file

__all__ = ["default_writer_without_flush", "write_file"]


@contextlib.contextmanager
def default_writer_without_flush(writer: Any) -> Iterator[None]:
    """``writer.as_default()`` minus the flush on exit (Flax's ``auto_flush=False``)."""
    previous = state.writer
    state.writer = writer
    try:
        yield
    finally:
        state.writer = previous
