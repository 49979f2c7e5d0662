"""A worker's decoding of a sweep's small runs, by step: framing, CRC checks, scalar matching,
and the whole read of 64 runs.

Run: python benchmarks/bench_decode.py [--cache /work/sweeps] [--before SRC] [--rounds 4]

Eight runs of ``bench_sweep.py``'s 1k sweep (generated there once) are joined into one buffer,
as a worker joins small runs, and each step runs on it 60 times; then ``read_runs`` of 64 runs,
30 times. The smallest CPU time of each is printed (the steadiest figure on a shared machine),
and every call's result is checked (every record framed and CRC-clean, 24,000 scalars matched).
``--before SRC`` measures another tree's npsummary (its ``src`` folder, e.g. a worktree of an
earlier commit) and this one alternately, each in a process of its own, ``--rounds`` times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import bench_sweep  # beside this script: its sweeps and their cache
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _smallest(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def measure(logdir: str) -> dict[str, float]:
    """Smallest CPU milliseconds of each step, in this process."""
    from npsummary.reader._fastscalar import match_scalars
    from npsummary.reader._framing import payload_ok, segment_records
    from npsummary.reader._io import LocalFileSystem
    from npsummary.reader._load import Options, read_runs
    from npsummary.reader._storage.sweep import open_sweep

    runs, fs = open_sweep(LocalFileSystem(), logdir, None)
    parts = []
    for run in runs[:8]:
        for path in run.files:
            with open(path, "rb") as f:
                parts.append(f.read())
    buf = b"".join(parts)
    offsets = np.cumsum([0, *map(len, parts)])
    records = segment_records(buf, offsets)
    assert records is not None
    starts, ends, _ = records
    assert payload_ok(buf, starts, ends).all()
    want = 8 * len(bench_sweep.SCALAR_TAGS) * bench_sweep.STEPS
    assert match_scalars(buf, starts, ends, {}).index.size == want
    options = Options(frozenset(["scalars"]))
    assert len(read_runs(fs, runs[:64], options)) == 64
    return {
        "framing": 1e3 * _smallest(lambda: segment_records(buf, offsets), 60),
        "crc": 1e3 * _smallest(lambda: payload_ok(buf, starts, ends), 60),
        "matching": 1e3 * _smallest(lambda: match_scalars(buf, starts, ends, {}), 60),
        "read_runs_64": 1e3 * _smallest(lambda: read_runs(fs, runs[:64], options), 30),
    }


def _line(label: str, ms: dict[str, float]) -> str:
    return (
        f"{label}: framing {ms['framing']:.3f} ms, CRC {ms['crc']:.3f} ms, matching "
        f"{ms['matching']:.3f} ms per 2 MB of 8 runs; read_runs {ms['read_runs_64'] / 64 * 1e3:.0f}"
        " us per run"
    )


def _in_child(src: str | None, logdir: str) -> dict[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join([src, HERE])
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--one", logdir],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    answer: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "npsummary-sweeps"))
    parser.add_argument("--before", help="another tree's src folder, measured alternately")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--one", metavar="LOGDIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    logdir = bench_sweep.make_sweep(args.cache, "1k")
    if not args.before:
        print(_line("this tree", measure(logdir)), flush=True)
        return
    for _ in range(args.rounds):
        print(_line("before", _in_child(args.before, logdir)), flush=True)
        print(_line("after ", _in_child(None, logdir)), flush=True)


if __name__ == "__main__":
    main()
