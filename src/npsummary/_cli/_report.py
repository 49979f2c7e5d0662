"""What the commands tell the user besides their output: nothing found, and what was skipped.

A read that finds nothing is an error with the reason (no event file, no run matching
``--runs``, no tag matching ``--tags``, a file that is not an event file); a read that skipped
records says how many and where, on stderr, and fails under ``--strict``.
"""

from __future__ import annotations

import sys
from typing import Any

from ._errors import CommandError
from ._safe import printable

__all__ = ["NotAnEventFile", "count", "explain_nothing", "report_skipped", "skipped_summary"]

_SHOWN = 10


class NotAnEventFile(CommandError):
    """The path given is one file, and not an event file: the skipped bytes are the file."""


def count(n: int, noun: str) -> str:
    """``n`` and the noun in the number it takes: "1 torn tail", "2 torn tails", "1,024 records"
    (the last word is pluralised: "corrupt record" -> "corrupt records")."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def explain_nothing(
    logdir: str, runs: str | None, tags: str | None, what: str, records: int
) -> CommandError:
    """The error for a read of ``logdir`` that found no ``what`` (e.g. "scalars") in the
    ``records`` valid records it read."""
    from ..reader._discover import compile_filter, discover
    from ..reader._io import filesystem_for

    fs = filesystem_for(logdir)
    if not fs.isdir(logdir):
        return NotAnEventFile(
            f"{logdir} is not an event file: it holds no valid TFRecord ({fs.size(logdir):,} bytes)"
        )
    every = [run.name for run in discover(fs, logdir)]
    if not every:
        return CommandError(f"no event files (names containing 'tfevents') under {logdir}")
    run_re = compile_filter(runs, "--runs")
    matched = [name for name in every if run_re is None or run_re.search(name)]
    if not matched:
        return CommandError(f"no run matches --runs {runs!r}; the runs are {_names(every)}")
    scope = count(len(matched), "run")
    if not records:
        return CommandError(f"the event files of {scope} under {logdir} hold no valid record")
    if tags is not None:
        return CommandError(f"no tag of {what} matches --tags {tags!r} in {scope}")
    return CommandError(f"no {what} in {scope} of {logdir}")


def skipped_summary(stats: Any) -> str:
    """One line: the corrupt records, undecodable values and torn tails a read skipped."""
    parts = []
    if stats.corrupt_records:
        corrupt = count(stats.corrupt_records, "corrupt record")
        parts.append(f"{corrupt} ({count(stats.corrupt_bytes, 'byte')})")
    if stats.bad_values:
        parts.append(count(stats.bad_values, "undecodable value"))
    if stats.torn_tails:
        parts.append(f"{count(stats.torn_tails, 'torn tail')} (a writer still writing, or killed)")
    return "skipped " + ", ".join(parts) if parts else ""


def report_skipped(command: str, stats: Any) -> None:
    """Tell stderr what a read skipped, with the first problems (file, offset, run, tag)."""
    line = skipped_summary(stats)
    if not line:
        return
    print(f"npsummary {command}: {line}", file=sys.stderr)
    for problem in stats.problems[:_SHOWN]:
        print(f"  {printable(problem)}", file=sys.stderr)
    more = (
        stats.corrupt_records
        + stats.bad_values
        + stats.torn_tails
        - min(len(stats.problems), _SHOWN)
    )
    if more > 0:
        print(f"  ... and {more:,} more", file=sys.stderr)
