"""A process of a plain multiprocessing job with ``RANK`` set (see test_distributed.py)."""

from __future__ import annotations

import os

from npsummary import SummaryWriter

STEPS = 4


def value(rank: int, step: int) -> float:
    """What rank ``rank`` logs at ``step`` (exact in float32)."""
    return rank * 100.0 + step * 0.5


def run_rank(rank: int, logdir: str, ranks: str | None) -> None:
    os.environ["RANK"] = str(rank)
    options = {} if ranks is None else {"ranks": ranks}
    with SummaryWriter(logdir, **options) as writer:  # type: ignore[arg-type]
        for step in range(STEPS):
            writer.add_scalar("value", value(rank, step), step)
