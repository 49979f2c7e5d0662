"""The live Reader's refresh, in rounds: CPU of each refresh against its first read.

Run: python benchmarks/bench_refresh.py [--cache /work/sweeps] [--sweep 1k] [--rounds 4]

A copy of the sweep (``bench_sweep.py``'s layout, generated there once) is read by
``reader.Reader(kinds=["scalars"])``; then, ``--rounds`` times, every run grows by 1% (10 steps
appended, as a writer appends them) and one new run appears, and ``scalars()`` is called again.
Prints the first read's CPU seconds, each refresh's, and the smallest refresh over the first
read (the steadiest figure on a shared machine). The last result is checked against a fresh
``reader.scalars`` value for value.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import bench_sweep  # beside this script: its sweeps, their growth and its cache
import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "npsummary-sweeps"))
    parser.add_argument("--sweep", default="1k", choices=sorted(bench_sweep.SIZES))
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    from npsummary import reader

    work = tempfile.mkdtemp(prefix="npsummary-refresh-")
    try:
        logdir = os.path.join(work, "sweep")
        shutil.copytree(bench_sweep.make_sweep(args.cache, args.sweep), logdir)
        live = reader.Reader(logdir, kinds=["scalars"])
        start = time.process_time()
        live.scalars()
        first = time.process_time() - start
        rounds = []
        got = {}
        for i in range(args.rounds):
            bench_sweep.grow(logdir)
            os.rename(os.path.join(logdir, "run-new"), os.path.join(logdir, f"run-new-{i}"))
            start = time.process_time()
            got = live.scalars()
            rounds.append(time.process_time() - start)
        fresh = reader.scalars(logdir)
        assert list(got) == list(fresh)
        for key, want in fresh.items():
            s = got[key]
            assert np.array_equal(s.steps, want.steps) and np.array_equal(s.values, want.values)
            assert np.array_equal(s.wall_times, want.wall_times)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.sweep} runs: first read {first:.2f} CPU s; refreshes "
        + ", ".join(f"{r:.3f}" for r in rounds)
        + f" CPU s; smallest / first {min(rounds) / first:.3f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
