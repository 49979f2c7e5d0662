"""What happens to NaN and ±Inf: they never reach a bucket or a pixel value; the caller's
*policy* decides what the user hears of them.

* ``"warn"`` (default): left out, and a :class:`~npsummary.NonFiniteWarning` names the tag and
  the counts, once per tag and writer, attributed to the user's line;
* ``"raise"``: ``ValueError`` before anything is written (TF1's behaviour, which ends the step);
* ``"ignore"``: left out silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._common.convert import check_choice
from .._common.errors import NonFiniteWarning, warn_user

if TYPE_CHECKING:
    from .._common.types import NonFinitePolicy
    from .._histogram import NonFinite

__all__ = ["NONFINITE_POLICIES", "NonFiniteGuard", "check_policy"]

NONFINITE_POLICIES = ("warn", "raise", "ignore")


def check_policy(nonfinite: Any, tag: str) -> NonFinitePolicy:
    """Return ``nonfinite`` if it is a known policy, else raise ``ValueError`` naming ``tag``."""
    return check_choice(nonfinite, "nonfinite", NONFINITE_POLICIES, tag=tag)  # type: ignore[return-value]


class NonFiniteGuard:
    """Applies the non-finite policy to histograms and images; warns once per tag."""

    def __init__(self) -> None:
        self._warned: set[str] = set()

    def __call__(self, tag: str, counts: NonFinite, policy: NonFinitePolicy) -> None:
        if not counts.total or policy == "ignore":
            return
        message = (
            f"{tag!r}: {counts.nan} NaN, {counts.posinf} +Inf and {counts.neginf} -Inf values "
            "left out of the histogram"
        )
        if policy == "raise":
            raise ValueError(message)
        self.warn_once(tag, message)

    def warn_once(self, tag: str, message: str) -> None:
        """Emit ``message`` as a NonFiniteWarning unless ``tag`` was warned about already."""
        if tag not in self._warned:
            self._warned.add(tag)
            warn_user(message + " (warned once per tag)", NonFiniteWarning)

    def nan_pixels(self, tag: str, count: int) -> None:
        """Report ``count`` NaN pixel values of image ``tag`` drawn as 0."""
        self.warn_once(tag, f"{tag!r}: {count} NaN pixel values drawn as 0")
