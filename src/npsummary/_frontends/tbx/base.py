"""The plumbing of the tensorboardX / torch ``SummaryWriter`` front end: its logdir, file
options, default step and the per-call resolution of tag, step and wall time.

The ``add_*`` methods live in mixins (:mod:`npsummary._frontends.tbx.images` and others) and in
:mod:`npsummary.writer`, all on this base; each only validates, builds through
:mod:`npsummary._summaries` and writes through :meth:`TbxWriterBase._get_writer`.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, ClassVar

from ..._common.convert import INT64_MAX, INT64_MIN, check_tag, to_step, to_walltime
from ..._core.event_writer import EventWriter, LogdirTarget, SinkOptions, WriterHandle
from ..._core.ranks import RankGated
from ..._sinks.base import EventSink, NullSink
from ..._sinks.eventfile import hostname
from .file_writer import MetadataDefaults

if TYPE_CHECKING:
    from ..._common.types import GlobalStepLike, StepLike

__all__ = ["TbxWriterBase"]


def _default_logdir(comment: str) -> str:
    from datetime import datetime  # milliseconds at import, needed only without a logdir

    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{hostname()}{comment}")


class TbxWriterBase(RankGated, WriterHandle):
    """Logdir, options, default step and lazy (re)opening shared by every ``add_*`` method."""

    _target: LogdirTarget
    _options: SinkOptions
    _step: int
    _purge_step: int | None
    _given_purge_step: int | None
    _write_to_disk: bool
    _meta: MetadataDefaults

    @classmethod
    def _silent_members(cls) -> dict[str, Any]:
        """What the silent writer of a rank that writes nothing returns (see ``_core.ranks``)."""
        from .silent import silent_members

        return silent_members(cls)

    #: The library whose files this writer writes where tensorboardX and torch differ
    #: (docs/MIGRATION.md §3): ``"torch"`` here, ``"tensorboardX"`` in
    #: :class:`npsummary.TensorboardXSummaryWriter`.
    flavour: ClassVar[str] = "torch"

    def _setup(
        self,
        logdir: str | os.PathLike[str] | EventSink | None,
        log_dir: str | os.PathLike[str] | None,
        comment: str,
        purge_step: StepLike,
        options: SinkOptions,
        run: str = "",
        write_to_disk: bool = True,
    ) -> None:
        if logdir is None:
            logdir = log_dir
        elif log_dir is not None:
            raise TypeError("pass logdir or log_dir, not both")
        if logdir is None:
            logdir = _default_logdir(check_tag(comment, "comment"))
        self._target = LogdirTarget(logdir, run)
        self._options = options
        self._writer: EventWriter | None = None
        self._step = 0
        self._purge_step = None if purge_step is None else to_step(purge_step, "purge_step")
        self._given_purge_step = self._purge_step
        self._write_to_disk = write_to_disk
        self._meta = MetadataDefaults()  # use_metadata's step and wall time
        self._open()

    def _open(self) -> EventWriter:
        if self._write_to_disk:
            writer = self._target.open(self._options)
        else:  # tensorboardX's write_to_disk=False: every call checked, nothing written
            writer = EventWriter(NullSink())
        if self._purge_step is not None:
            from ..._summaries.events import session_start_event

            event = session_start_event(self._purge_step, time.time())
            # TensorBoard's Python loader takes the first START of a run as the session's
            # beginning and purges (steps >= START.step) only on a later one. The crashed
            # writer usually wrote none, so write two: the second purges in every case.
            writer.write_event(event)
            writer.write_event(event)
            self._purge_step = None
        self._writer = writer
        return writer

    def _get_writer(self) -> EventWriter:
        # After close(), tensorboardX and torch start a new file on the next add_*; so do we.
        return self._writer or self._open()

    def get_logdir(self) -> str:
        """Return the run directory ("" when writing to a custom sink)."""
        return self._target.logdir

    @property
    def sink(self) -> EventSink:
        """The sink receiving this writer's events."""
        return self._get_writer().sink

    def set_step(self, step: GlobalStepLike) -> None:
        """Set the step used by ``add_*`` calls that pass ``global_step=None``."""
        self._step = to_step(step, "set_step", truncate=True)

    def _resolve(self, tag: Any, global_step: Any, walltime: Any) -> tuple[str, int, float]:
        """The checked tag, step and wall time of one call (the hot path stays cheap)."""
        tag = tag if type(tag) is str and tag.isascii() else check_tag(tag)
        if global_step is None:
            step = self._step if self._meta.step is None else self._meta.step
        elif type(global_step) is int and INT64_MIN <= global_step <= INT64_MAX:
            step = global_step
        else:
            step = to_step(global_step, tag, truncate=True)
        if walltime is None:
            wall = time.time() if self._meta.walltime is None else self._meta.walltime
        else:
            wall = to_walltime(walltime, tag)
        return tag, step, wall
