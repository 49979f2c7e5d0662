"""``GlobalSummaryWriter``: tensorboardX's writer whose steps count themselves, per tag, across
processes.

Each ``add_scalar``, ``add_image`` or ``add_text`` call takes the next step of its tag (0, 1,
2, ...), counted in one table shared by the processes forked from the one that created the writer
(a ``multiprocessing`` manager, as tensorboardX uses), so workers of a pool log one series
without agreeing on steps. Every process writes its own event file in the writer's run (file
names carry the pid), and TensorBoard merges the files of a run. Values are written by a
tensorboardX-flavoured :class:`~npsummary.TensorboardXSummaryWriter`: same files, checks and
errors.
"""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

from .flavours import TensorboardXSummaryWriter

__all__ = ["GlobalSummaryWriter"]

_global_writer: GlobalSummaryWriter | None = None
_global_lock = threading.Lock()


class GlobalSummaryWriter:
    """tensorboardX's ``GlobalSummaryWriter``: same arguments (``coalesce_process`` is accepted
    and has no effect, as in tensorboardX), and a writer for each call's own step."""

    def __init__(
        self,
        logdir: Any = None,
        comment: str = "",
        purge_step: Any = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
        write_to_disk: bool = True,
        log_dir: Any = None,
        coalesce_process: bool = True,
        **kwargs: Any,
    ) -> None:
        self.smw = TensorboardXSummaryWriter(
            logdir=logdir,
            comment=comment,
            purge_step=purge_step,
            max_queue=max_queue,
            flush_secs=flush_secs,
            filename_suffix=filename_suffix,
            write_to_disk=write_to_disk,
            log_dir=log_dir,
            **kwargs,
        )
        self._manager = multiprocessing.Manager()
        self.lock = self._manager.Lock()
        self._steps = self._manager.dict()

    def _next_step(self, kind: str, tag: str) -> int:
        key = f"{kind}\0{tag}"
        step = int(self._steps.get(key, -1)) + 1
        self._steps[key] = step
        return step

    def add_scalar(self, tag: str, scalar_value: Any, walltime: Any = None) -> None:
        """Log ``scalar_value`` at the next step of ``tag``."""
        with self.lock:
            self.smw.add_scalar(tag, scalar_value, self._next_step("scalar", tag), walltime)

    def add_image(
        self, tag: str, img_tensor: Any, walltime: Any = None, dataformats: str = "CHW"
    ) -> None:
        """Log an image at the next step of ``tag``."""
        with self.lock:
            step = self._next_step("image", tag)
            self.smw.add_image(tag, img_tensor, step, walltime=walltime, dataformats=dataformats)

    def add_text(self, tag: str, text_string: Any, walltime: Any = None) -> None:
        """Log text at the next step of ``tag``."""
        with self.lock:
            step = self._next_step("text", tag)
            self.smw.add_text(tag, text_string, global_step=step, walltime=walltime)

    @staticmethod
    def getSummaryWriter() -> GlobalSummaryWriter:
        """The process's global writer, created with the default logdir on first use."""
        global _global_writer
        with _global_lock:
            if _global_writer is None or _global_writer.smw is None:
                _global_writer = GlobalSummaryWriter()
            return _global_writer

    @property
    def file_writer(self) -> Any:
        """The low-level writer of the run (``add_summary``, ``add_event``, ...)."""
        return self.smw._get_file_writer()

    def flush(self) -> None:
        """Write everything logged by this process so far."""
        self.smw.flush()

    def close(self) -> None:
        """Flush and close this process's file.

        As in tensorboardX, the writer stays usable: a later call opens a new event file in the
        same run and goes on counting from the shared steps. The step table lives until the
        writer is garbage collected or the program exits (its manager's own finalizer stops it).
        """
        self.smw.flush()
        self.smw.close()
