"""Scalar methods of ``SummaryWriter``: ``add_scalar`` and ``add_scalars``, written as
tensorboardX and torch write them (a float32 ``simple_value``, :mod:`npsummary._summaries.scalar`).

``add_scalar`` takes the arguments of both tensorboardX and torch. Positions 5 and 6 differ
between them (tensorboardX: ``display_name, summary_description``; torch: ``new_style,
double_precision``): npsummary keeps tensorboardX's names there, takes torch's as keywords, and
reads a positional bool as torch's and a str as tensorboardX's.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..._common.convert import check_flag, check_text, scalar_dict, to_float, to_float32_range
from ..._core.event_writer import EventWriter, subrun_name
from ..._summaries.scalar import (
    FLOAT32_OVERFLOW,
    PACKED_STEP_LIMIT,
    pack_step_event,
    torch_scalar_value,
)
from .base import TbxWriterBase

if TYPE_CHECKING:
    from ..._common.types import GlobalStepLike, ScalarLike

__all__ = ["ScalarMethods"]

_NO_TITLE = ""  # the default of both titles (the empty str is a singleton in CPython)
_now = time.time


def _torch_positions(
    display_name: Any, summary_description: Any, new_style: Any, double_precision: Any
) -> tuple[Any, Any, Any, Any]:
    """Read a bool at position 5 or 6 as torch's ``new_style`` / ``double_precision``."""
    if display_name.__class__ is bool:
        new_style, display_name = display_name or new_style, ""
    if summary_description.__class__ is bool:
        double_precision, summary_description = summary_description or double_precision, ""
    return display_name, summary_description, new_style, double_precision


def _scalar_options(
    tag: str, display_name: Any, description: Any, new_style: Any, double_precision: Any
) -> tuple[str, str, bool, bool]:
    """Checked options: the two titles ("" for none) and the two flags."""
    titles = [
        check_text(display_name, "display_name", tag=tag) or "",
        check_text(description, "summary_description", tag=tag) or "",
    ]
    return (
        titles[0],
        titles[1],
        check_flag(new_style, "new_style", tag=tag),
        check_flag(double_precision, "double_precision", tag=tag),
    )


class ScalarMethods(TbxWriterBase):
    """``add_scalar`` and ``add_scalars``."""

    def _scalars_run_path(self, main_tag: str, key: str) -> list[str]:
        """The sub-run of ``add_scalars(main_tag, {key: ...})``, as path components: torch's
        single ``<main_tag>_<key>`` (:func:`~npsummary._core.event_writer.subrun_name`)."""
        return [subrun_name(main_tag, key)]

    def _scalars_value_tag(self, main_tag: str) -> str:
        """The tag of every ``add_scalars`` value: ``main_tag`` as given (torch)."""
        return main_tag

    def _scalars_child(self, writer: EventWriter, main_tag: str, key: str) -> EventWriter:
        for component in self._scalars_run_path(main_tag, key):
            writer = writer.child(component)
        return writer

    def add_scalar(
        self,
        tag: str,
        scalar_value: ScalarLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        display_name: str | bool | None = "",
        summary_description: str | bool | None = "",
        *,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one scalar as tensorboardX and torch do: a float32 ``simple_value``.

        Args:
          tag: the chart's name.
          scalar_value: a Python or NumPy number, a 0-d or size-1 array, or any object with
            ``__array__`` or ``__float__`` (a torch or JAX scalar).
          global_step: step; default: the step given to :meth:`set_step`.
          walltime: seconds since the epoch; default: now.
          display_name: tensorboardX's title, stored in the value's metadata.
          summary_description: tensorboardX's Markdown description, stored likewise.
          new_style: torch's option: a rank-0 DT_FLOAT tensor with ``scalars`` metadata.
          double_precision: torch's option, with ``new_style``: a DT_DOUBLE tensor, which
            TensorBoard's default loader skips (``--load_fast=false`` shows it).

        Raises:
          TypeError, ValueError: bad input, naming the tag; nothing is written.
        """
        # The hot path: a float, an int step below 2**21, no wall time or titles, a tag logged
        # before (so already checked). Everything else takes the general path below, which
        # gives the same bytes and fills the per-tag cache this path reads.
        writer = self._writer
        if (
            writer is not None
            and scalar_value.__class__ is float
            and -FLOAT32_OVERFLOW < scalar_value < FLOAT32_OVERFLOW  # False for NaN
            and global_step.__class__ is int
            and 0 < global_step < PACKED_STEP_LIMIT
            and walltime is None
            and display_name is _NO_TITLE
            and summary_description is _NO_TITLE
            and new_style is False
            and tag.__class__ is str
            and self._meta.walltime is None
        ):
            entry = writer.plain_simple_scalars.get(tag)
            if entry is not None:
                writer.sink_write(pack_step_event(entry, scalar_value, global_step, _now()))
                return
        if display_name.__class__ is bool or summary_description.__class__ is bool:
            display_name, summary_description, new_style, double_precision = _torch_positions(
                display_name, summary_description, new_style, double_precision
            )
        tag, step, wall = self._resolve(tag, global_step, walltime)
        value = scalar_value if type(scalar_value) is float else to_float(scalar_value, tag)
        if (
            new_style is not False
            or display_name.__class__ is not str
            or summary_description.__class__ is not str
            or display_name
            or summary_description
        ):
            title, note, torch_form, double = _scalar_options(
                tag, display_name, summary_description, new_style, double_precision
            )
            if torch_form:
                number = value if double else to_float32_range(value)
                scalar = torch_scalar_value(tag, number, double_precision=double)
                self._get_writer().write_values([scalar], step, wall)
                return
            display_name, summary_description = title, note
        self._get_writer().write_simple_scalar(
            tag,
            to_float32_range(value),
            step,
            wall,
            summary_description or None,
            display_name or None,
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, ScalarLike],
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
    ) -> None:
        """Log several scalars as one chart: each key becomes the sub-run ``<main_tag>_<key>``
        (torch's naming; the tensorboardX flavour nests ``<main_tag>/<key>``), each value a
        ``simple_value`` tagged ``main_tag``. Sub-run names come from
        :func:`~npsummary._core.event_writer.subrun_name`: a ``/`` in a key is written ``%2F``, so
        distinct keys never share a sub-run.

        Args:
          main_tag: the chart's name (the tag in every sub-run).
          tag_scalar_dict: sub-run key -> value (values as :meth:`add_scalar`).
          global_step, walltime: as :meth:`add_scalar`.

        Raises:
          TypeError, ValueError: bad input; every value is checked before anything is written.
          OSError: a sub-run could not be created; nothing was written.
        """
        main_tag, step, wall = self._resolve(main_tag, global_step, walltime)
        values = scalar_dict(tag_scalar_dict, "tag_scalar_dict", tag=main_tag)
        writer = self._get_writer()
        # Every sub-run is opened before any is written: a sub-run that cannot be created (EACCES,
        # EMFILE, ...) fails the call before it logged anything.
        children = [(self._scalars_child(writer, main_tag, key), value) for key, value in values]
        value_tag = self._scalars_value_tag(main_tag)
        for child, value in children:
            child.write_simple_scalar(value_tag, value, step, wall)
