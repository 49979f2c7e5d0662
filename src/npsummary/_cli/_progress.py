"""A progress line on stderr, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from ._safe import printable

__all__ = ["Progress"]


class Progress:
    """Rewrites one stderr line at most 10 times a second; silent when stderr is not a tty."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = 0.0
        self._shown = False

    def show(self, text: str, *, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._last >= 0.1:
            self._last = now
            sys.stderr.write("\r\x1b[K" + printable(text[:200]))
            sys.stderr.flush()
            self._shown = True

    def reading(self, total: int | None = None) -> Callable[[str, int], None]:
        """A reader's progress callback (run name, records so far) that shows how many of the
        ``total`` runs have been reached: ``reading 1,234/10,000 runs (12%), 3,702,000 records,
        run 'lr=0.1'``."""
        seen: set[str] = set()

        def show(run: str, records: int) -> None:
            seen.add(run)
            if not self.enabled:
                return
            runs = f"{len(seen):,} runs"
            if total is not None:
                runs = f"{len(seen):,}/{total:,} runs ({100 * len(seen) // max(total, 1)}%)"
            self.show(f"reading {runs}, {records:,} records, run {run!r}")

        return show

    def done(self) -> None:
        if self.enabled and self._shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._shown = False
