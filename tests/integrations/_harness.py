"""Shared pieces of the framework tests: two runs of the same training, one through torch's
writer and one through npsummary's, must read back the same (``tb_compare``), except for what
differs between any two runs: runs named by the clock and tags that measure time."""

from __future__ import annotations

import re
from pathlib import Path

from tb_compare import accumulators, assert_same_run

REASON = "needs torch and the frameworks: runs in .ci/stages/40-frameworks.sh"
_TIME_RUN = re.compile(r"(^|/)\d{9,}\.\d+$")


def run_name(run: str) -> str:
    """Runs named by ``time.time()`` (torch's ``add_hparams`` child runs) compare by position."""
    return _TIME_RUN.sub(r"\1<time>", run)


def assert_same_training(ours: Path, theirs: Path, *, timing_tags: tuple[str, ...] = ()) -> None:
    """Same runs, tags, steps and values, ignoring tags containing any of ``timing_tags``."""

    def ignore(tag: str) -> bool:
        return any(marker in tag for marker in timing_tags)

    mine = {run_name(r): acc for r, acc in accumulators(ours).items()}
    other = {run_name(r): acc for r, acc in accumulators(theirs).items()}
    assert sorted(mine) == sorted(other), (sorted(mine), sorted(other))
    assert other, "no run was written"
    for run, acc in other.items():
        assert_same_run(f"run {run!r}", mine[run], acc, ignore_tags=ignore)
