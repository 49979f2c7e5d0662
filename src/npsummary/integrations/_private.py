"""The npsummary internals the integrations use, imported in this one place, and the one rule
they share: every process writes.

Everything else in :mod:`npsummary.integrations` goes through npsummary's public API.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from .._common.urls import is_url, local_path
from .._frontends.context import state
from .._frontends.tf2.writer import SummaryFileWriter, create_file_writer
from .._sinks.projector import write_run_file

__all__ = [
    "default_writer_without_flush",
    "every_process_writer",
    "local_logdir",
    "run_path",
    "write_run_file",
]


def every_process_writer(logdir: str | os.PathLike[str]) -> SummaryFileWriter:
    """``npsummary.create_file_writer(logdir)`` that writes on every process, whatever rank the
    environment names.

    Keras, Flax, CLU, optuna-integration and TensorBoard's ``hp.KerasCallback`` create a
    TensorFlow writer on every process; none has a rank rule. Their users gate by hand where
    processes would duplicate each other (CLU's ``just_logging=jax.process_index() > 0``), and
    processes that are independent workers (an Optuna study run with ``srun -n 4``, a sweep of
    SLURM tasks) log distinct runs: npsummary's rule (only rank 0 writes) would lose them.
    """
    return create_file_writer(logdir, rank=0)


def run_path(logdir: str | os.PathLike[str], name: str) -> str:
    """``<logdir>/<name>``: joined with ``/`` for a URL, with ``os.path.join`` for a path."""
    text = os.fspath(logdir)
    if is_url(text):
        return f"{text.rstrip('/')}/{name}"
    return os.path.join(text, name)


def local_logdir(logdir: str) -> str | None:
    """The local directory of ``logdir`` (a path, or a ``file://`` URL); None for other URLs."""
    return local_path(logdir) if is_url(logdir) else logdir


@contextlib.contextmanager
def default_writer_without_flush(writer: Any) -> Iterator[None]:
    """``writer.as_default()`` minus the flush on exit (Flax's ``auto_flush=False``)."""
    previous = state.writer
    state.writer = writer
    try:
        yield
    finally:
        state.writer = previous
