"""npsummary's own time and memory on a local sweep: scalars, to_pandas and export.

Run: python benchmarks/bench_sweep_read.py [--cache /work/sweeps] [--sweeps local-1k,local-10k]
     [--workers 1,auto] [--what scalars,pandas,parquet] [--src /work/main/src]

``--src`` measures another tree's npsummary (the code before a change; one thread only when it
has no ``workers``).

Each measurement runs in a fresh interpreter (``--one``) so that peaks do not mix: wall time,
CPU seconds of the process and of its worker processes, the peak RSS of the process and of its
largest worker, the RSS after imports (the baseline), and what was produced (values and the
bytes of the output arrays; for to_pandas the frame's bytes per row). Sweeps come from
``sweep_data.py`` (generated on first use). The side-by-side comparison with TensorBoard's Rust
data server and tbparse is ``bench_sweep.py``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _stat(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _forkserver_pid() -> int | None:
    from multiprocessing import forkserver

    pid: int | None = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return pid


class _Workers:
    """The reader's worker processes are the forkserver's children, not ours: their peak RSS is
    sampled from /proc while they run, their CPU read from the forkserver's reaped-children
    times once they are gone."""

    def __init__(self) -> None:
        import threading

        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.05):
            server = _forkserver_pid()
            if server is None:
                continue
            for entry in os.listdir("/proc"):
                if not entry.isdigit():
                    continue
                try:
                    if int(_stat(int(entry))[1]) != server:
                        continue
                    with open(f"/proc/{entry}/status") as f:
                        for line in f:
                            if line.startswith("VmHWM:"):
                                mb = int(line.split()[1]) / 1024
                                self.peak_mb = max(self.peak_mb, mb)
                except (OSError, ValueError, IndexError):
                    continue

    def cpu_s(self) -> float:
        self._stop.set()
        self._thread.join()
        server = _forkserver_pid()
        if server is None:
            return 0.0
        ticks = os.sysconf("SC_CLK_TCK")
        last = -1.0
        for _ in range(50):  # until the forkserver has reaped every worker
            fields = _stat(server)
            now = (int(fields[13]) + int(fields[14])) / ticks
            if now == last:
                return now
            last = now
            time.sleep(0.2)
        return last


def one(what: str, logdir: str, workers: int | None) -> dict[str, Any]:
    """One measurement in this process (called by a fresh interpreter)."""
    from npsummary import reader

    base = _rss_mb()
    pool = _Workers()
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict[str, Any] = {}
    import inspect

    if "workers" not in inspect.signature(reader.scalars).parameters:  # the code before
        if workers != 1:
            raise SystemExit("this npsummary reads in one thread only: --workers 1")
        kw: dict[str, Any] = {}
    else:
        kw = {"workers": workers}
    if what == "scalars":
        series = reader.scalars(logdir, **kw)
        values = sum(len(s) for s in series.values())
        out["values"] = values
        out["output_mb"] = sum(
            s.steps.nbytes + s.wall_times.nbytes + s.values.nbytes for s in series.values()
        ) / (1 << 20)
    elif what == "pandas":
        frame = reader.to_pandas(logdir, **kw)
        out["values"] = len(frame)
        out["output_mb"] = frame.memory_usage(deep=True).sum() / (1 << 20)
        out["bytes_per_row"] = frame.memory_usage(deep=True).sum() / max(len(frame), 1)
    elif what == "parquet":
        from npsummary._cli import main

        with tempfile.TemporaryDirectory() as tmp:
            argv = ["export", logdir, "--format", "parquet", "--out", tmp]
            if main(argv) != 0:
                raise SystemExit("export failed")
            out["file_mb"] = os.path.getsize(os.path.join(tmp, "scalars.parquet")) / (1 << 20)
    else:
        raise ValueError(what)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    out.update(
        wall_s=round(wall, 2),
        cpu_s=round(cpu, 2),
        worker_cpu_s=round(pool.cpu_s(), 2),
        peak_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        worker_peak_mb=round(pool.peak_mb, 1),
        baseline_mb=round(base, 1),
    )
    if out.get("values"):
        out["us_per_value_cpu"] = round(
            (out["cpu_s"] + out["worker_cpu_s"]) / out["values"] * 1e6, 3
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default="/work/sweeps")
    parser.add_argument("--sweeps", default="local-1k,local-10k")
    parser.add_argument("--workers", default="1,auto")
    parser.add_argument("--what", default="scalars,pandas,parquet")
    parser.add_argument("--one", nargs=3, metavar=("WHAT", "LOGDIR", "WORKERS"))
    parser.add_argument("--src", help="the npsummary to measure (its src folder), e.g. main's")
    args = parser.parse_args()
    if args.one:
        what, logdir, w = args.one
        print(json.dumps(one(what, logdir, None if w == "auto" else int(w))))
        return
    sys.path.insert(0, HERE)
    from sweep_data import make_sweep

    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[:3]}", flush=True)
    for name in args.sweeps.split(","):
        logdir = make_sweep(args.cache, name)
        for what in args.what.split(","):
            for w in args.workers.split(","):
                if what != "scalars" and w != args.workers.split(",")[-1]:
                    continue  # tables with the default workers only
                cmd = [sys.executable, __file__, "--one", what, logdir, w]
                env = dict(os.environ)
                if args.src:
                    env["PYTHONPATH"] = args.src
                done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
                if done.returncode:
                    print(f"{name} {what} workers={w}: FAILED\n{done.stderr}", flush=True)
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{name} {what} workers={w}: {json.dumps(result)}", flush=True)


if __name__ == "__main__":
    main()
