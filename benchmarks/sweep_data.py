"""Generated sweeps for the sweep benchmarks, written once and cached.

Run: python benchmarks/sweep_data.py [--cache /work/sweeps] [--names local-1k,local-10k,...]

Every run is written by npsummary's SummaryWriter: 3 scalar tags x STEPS steps (``add_scalar``)
and a 1,000-value histogram every 100 steps (242 KB per run at 1,000 steps), run folders
``run-00000`` ... A sweep is complete when its ``.complete`` marker exists; it is generated into
``NAME.tmp`` and renamed, so a sweep another process is still writing is never read half-made
(`benchmarks/bench_sweep.py` writes ``local-1k`` and ``local-10k`` the same way: either
script's copy serves both). Layouts beside the standard one:

- ``files-1k``: 1,000 runs, each written in 4 sessions (4 event files of 250 steps);
- ``nested-1k``: 500 runs each with ``train`` and ``eval`` sub-runs (1,000 runs in all);
- ``tags-100``: 100 runs of 30 scalar tags x 1,000 steps (no histograms);
- ``steps-100``: 100 runs of 3 tags x 10,000 steps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

import numpy as np

SCALAR_TAGS = ("train/loss", "train/accuracy", "lr")
STEPS = 1000


def write_run(
    directory: str,
    seed: int,
    first: int = 0,
    steps: int = STEPS,
    tags: int = 3,
    histograms: bool = True,
) -> None:
    """One run (steps ``first .. first + steps - 1``) into ``directory``: the three scalar tags
    of the sweep (more tags: ``extra/NN`` beside them) and a histogram every 100 steps."""
    import npsummary

    rng = np.random.default_rng(seed)
    writer = npsummary.SummaryWriter(directory, max_queue=10000, flush_secs=3600)
    loss = 2.0 * np.exp(-np.arange(first, first + steps) / 300) + rng.random(steps) * 0.05
    for i in range(steps):
        s = first + i
        writer.add_scalar(SCALAR_TAGS[0], float(loss[i]), s)
        writer.add_scalar(SCALAR_TAGS[1], float(1 - loss[i] / 3), s)
        writer.add_scalar(SCALAR_TAGS[2], 0.1 * 0.999**s, s)
        for t in range(3, tags):
            writer.add_scalar(f"extra/{t:02d}", float(loss[i] * t), s)
        if histograms and s % 100 == 0:
            writer.add_histogram("weights", rng.normal(0, 1 + s / 1000, 1000), s)
    writer.close()


def _runs_of(name: str) -> list[tuple[str, dict[str, int | bool]]]:
    """(folder, write_run keywords) of each session of sweep ``name``."""
    if name in ("local-1k", "local-10k"):
        count = 1000 if name == "local-1k" else 10000
        return [(f"run-{r:05d}", {"seed": r}) for r in range(count)]
    if name == "files-1k":
        return [
            (f"run-{r:05d}", {"seed": r * 4 + k, "first": k * 250, "steps": 250})
            for r in range(1000)
            for k in range(4)
        ]
    if name == "nested-1k":
        return [
            (f"run-{r:05d}/{sub}", {"seed": r * 2 + i})
            for r in range(500)
            for i, sub in enumerate(("train", "eval"))
        ]
    if name == "tags-100":
        return [(f"run-{r:05d}", {"seed": r, "tags": 30, "histograms": False}) for r in range(100)]
    if name == "steps-100":
        return [(f"run-{r:05d}", {"seed": r, "steps": 10 * STEPS}) for r in range(100)]
    raise ValueError(f"unknown sweep {name!r}")


def make_sweep(cache: str, name: str) -> str:
    """The sweep ``name`` under ``cache``, generated on first use (see the module docstring)."""
    logdir = os.path.join(cache, name)
    if os.path.exists(os.path.join(logdir, ".complete")):
        return logdir
    tmp = logdir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    sessions = _runs_of(name)
    for i, (folder, kwargs) in enumerate(sessions):
        write_run(os.path.join(tmp, folder), **kwargs)  # type: ignore[arg-type]
        if i % 1000 == 999:
            print(
                f"  {name}: {i + 1} sessions in {time.perf_counter() - t0:.0f} s", file=sys.stderr
            )
    open(os.path.join(tmp, ".complete"), "w").close()
    shutil.rmtree(logdir, ignore_errors=True)
    os.rename(tmp, logdir)
    return logdir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default="/work/sweeps")
    parser.add_argument("--names", default="local-1k,local-10k")
    args = parser.parse_args()
    for name in args.names.split(","):
        print(make_sweep(args.cache, name))


if __name__ == "__main__":
    main()
