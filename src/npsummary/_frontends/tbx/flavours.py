"""The tensorboardX flavour of ``SummaryWriter``: tensorboardX's files where it and torch differ.

:class:`npsummary.SummaryWriter` writes what ``torch.utils.tensorboard`` writes (torch is the
default: it is what most code that imports a ``SummaryWriter`` today runs, and where the two
differ torch's form is the one TensorBoard's dashboards read best). A script that came from
tensorboardX keeps its run and tag names with :class:`TensorboardXSummaryWriter`, which
``npsummary.patch()`` installs as ``tensorboardX.SummaryWriter``:

* ``add_scalars`` nests its sub-runs, ``<main_tag>/<key>`` (torch: ``<main_tag>_<key>``); each
  part of the path is made one safe directory name, so no key leaves the logdir.
* ``add_scalar``, ``add_scalars``' value tag, ``add_histogram``, ``add_image``, ``add_images``,
  ``add_figure`` and ``add_video`` clean their tag as tensorboardX's summary builders do:
  characters outside ``[-/\\w.]`` become ``_`` and leading ``/`` are dropped (torch keeps tags
  verbatim).

Everything else is the same in both flavours (docs/MIGRATION.md §3 lists what remains).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from ..._core.event_writer import safe_run_name
from .summary_writer import SummaryWriter

__all__ = ["TensorboardXSummaryWriter", "clean_tag"]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w.]")
_Method = TypeVar("_Method", bound=Callable[..., Any])


def clean_tag(tag: Any) -> Any:
    """tensorboardX's ``_clean_tag``: characters outside ``[-/\\w.]`` become ``_``, leading
    ``/`` are dropped. A tag that is no str is returned as is (the writer refuses it, naming it)."""
    if not isinstance(tag, str):
        return tag
    return _INVALID_TAG_CHARACTERS.sub("_", tag).lstrip("/")


def _cleaning_first_argument(method: _Method) -> _Method:
    """``method`` with its tag (first argument, or ``tag=``) cleaned; same signature."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            args = (clean_tag(args[0]), *args[1:])
        elif "tag" in kwargs:
            kwargs["tag"] = clean_tag(kwargs["tag"])
        return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class TensorboardXSummaryWriter(SummaryWriter):
    """:class:`npsummary.SummaryWriter` writing tensorboardX's run and tag names (see the module
    docstring); same arguments and methods."""

    flavour: ClassVar[str] = "tensorboardX"

    add_scalar = _cleaning_first_argument(SummaryWriter.add_scalar)
    add_histogram = _cleaning_first_argument(SummaryWriter.add_histogram)
    add_image = _cleaning_first_argument(SummaryWriter.add_image)
    add_images = _cleaning_first_argument(SummaryWriter.add_images)
    add_figure = _cleaning_first_argument(SummaryWriter.add_figure)
    add_video = _cleaning_first_argument(SummaryWriter.add_video)

    @classmethod
    def _silent_members(cls) -> dict[str, Any]:
        # a silent rank's collective histogram must check the tag rank 0 writes: the cleaned one
        members = super()._silent_members()
        members["add_histogram"] = _cleaning_first_argument(members["add_histogram"])
        return members

    def _scalars_value_tag(self, main_tag: str) -> str:
        cleaned: str = clean_tag(main_tag)
        return cleaned

    def _scalars_run_path(self, main_tag: str, key: str) -> list[str]:
        # tensorboardX: os.path.join(logdir, main_tag, key); empty parts are no directory.
        parts = [part for part in f"{main_tag}/{key}".replace("\\", "/").split("/") if part]
        return ["/".join(safe_run_name(part) for part in parts) or "_"]
