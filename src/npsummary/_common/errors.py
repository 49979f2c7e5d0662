"""Every exception and warning npsummary raises of its own, and how warnings find the user.

Bad input is always a built-in ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind,
bad value) whose message names the tag; the classes here cover what is not bad input:

* :class:`EventWriteError` — the disk (or other storage) failed; raised at the next call.
* :class:`NonFiniteWarning` — NaN or ±Inf values were left out of a histogram or drawn as 0 in
  an image.
* :class:`BinCountCappedWarning` — a histogram asked for more bins than can be written, so
  adjacent bins were grouped.

Warnings are attributed to the user's own line: :func:`warn_user` walks the stack past every
frame inside this package, whichever entry point (``SummaryWriter``, ``npsummary.histogram``,
``npsummary.v1``) was called.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["BinCountCappedWarning", "EventWriteError", "NonFiniteWarning", "warn_user"]


class EventWriteError(OSError):
    """Writing an event file failed; raised at the first call after the failure."""


class NonFiniteWarning(RuntimeWarning):
    """NaN or ±Inf values were left out of a histogram, or drawn as 0 in an image."""


class BinCountCappedWarning(RuntimeWarning):
    """A histogram's bin rule asked for more bins than allowed; adjacent bins were grouped."""


# npsummary/, two levels up from npsummary/_common/errors.py
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _stacklevel() -> int:
    """The ``stacklevel`` of the first caller frame outside this package, as seen from the
    ``warnings.warn`` call in :func:`warn_user`."""
    frame = sys._getframe(2)  # the caller of warn_user
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn_user(message: str, category: type[Warning]) -> None:
    """Emit ``message`` as ``category``, attributed to the first line outside npsummary."""
    warnings.warn(message, category, stacklevel=_stacklevel())
