"""A sweep of runs: npsummary.reader against TensorBoard's Rust data server and tbparse.

Run: python benchmarks/bench_sweep.py --cache /work/sweeps [--sizes 1k,10k] [--generate-only]

Data (generated once into --cache, reused while DIR/local-1k/.complete exists): local-1k and
local-10k, run folders run-00000... each written by npsummary's SummaryWriter with 3 scalar tags
x 1,000 steps (add_scalar) and a 1,000-value histogram every 100 steps (242 KB per run).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

SIZES = {"1k": 1000, "10k": 10000}
SCALAR_TAGS = ("train/loss", "train/accuracy", "lr")
STEPS = 1000


def write_run(directory: str, seed: int, first: int = 0, steps: int = STEPS) -> None:
    """One run of the sweep (steps ``first .. first + steps - 1``) into ``directory``."""
    import npsummary

    rng = np.random.default_rng(seed)
    writer = npsummary.SummaryWriter(directory, max_queue=10000, flush_secs=3600)
    loss = 2.0 * np.exp(-np.arange(first, first + steps) / 300) + rng.random(steps) * 0.05
    for i in range(steps):
        s = first + i
        writer.add_scalar(SCALAR_TAGS[0], float(loss[i]), s)
        writer.add_scalar(SCALAR_TAGS[1], float(1 - loss[i] / 3), s)
        writer.add_scalar(SCALAR_TAGS[2], 0.1 * 0.999**s, s)
        if s % 100 == 0:
            writer.add_histogram("weights", rng.normal(0, 1 + s / 1000, 1000), s)
    writer.close()


def make_sweep(cache: str, size: str) -> str:
    """The sweep ``local-<size>`` under ``cache``, generated on first use."""
    logdir = os.path.join(cache, f"local-{size}")
    if os.path.exists(os.path.join(logdir, ".complete")):
        return logdir
    count = SIZES[size]
    tmp = logdir + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    t0 = time.perf_counter()
    for r in range(count):
        write_run(os.path.join(tmp, f"run-{r:05d}"), r)
        if r % 500 == 499:
            print(f"  {size}: {r + 1} runs in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    open(os.path.join(tmp, ".complete"), "w").close()
    shutil.rmtree(logdir, ignore_errors=True)
    os.rename(tmp, logdir)
    return logdir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "npsummary-sweeps"))
    parser.add_argument("--sizes", default="1k,10k")
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()
    sizes = args.sizes.split(",")
    for size in sizes:
        make_sweep(args.cache, size)
    if args.generate_only:
        return


if __name__ == "__main__":
    main()
