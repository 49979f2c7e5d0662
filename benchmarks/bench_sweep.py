"""A sweep of runs: npsummary.reader against TensorBoard's Rust data server and tbparse.

Run: python benchmarks/bench_sweep.py --cache /work/sweeps [--sizes 1k,10k] [--no-tbparse]
     [--refresh 1k] [--generate-only]

Data (generated once into --cache, reused while DIR/local-<size>/.complete exists): local-1k
and local-10k, run folders run-00000... each written by npsummary's SummaryWriter with 3 scalar
tags x 1,000 steps (add_scalar) and a 1,000-value histogram every 100 steps (242 KB per run).

Side by side, in one run, each measurement in a child process of its own (wall and CPU time of
the call, and the child's ru_maxrss as its peak memory; for ``reader.scalars`` the CPU time
includes its worker processes', and their peak is given beside the child's):

- ``reader.scalars`` on each size, against TensorBoard's Rust data server (the binary of
  tensorboard-data-server, started with the arguments TensorBoard's ``--load_fast=true`` gives
  it, ``--reload once``): its time from start until its gRPC ``ListScalars`` shows every run
  with all three tags at the last step, polled every 0.1 s; its CPU time and peak (VmHWM) from
  /proc; stopped by PID;
- tbparse's ``SummaryReader(...).scalars`` on 1k (with ``--no-tbparse``, left out);
- peak memory of ``reader.to_pandas`` and of ``npsummary export --format parquet``;
- the refresh cost of ``reader.Reader(kinds=["scalars"])`` on a copy of ``--refresh``'s sweep:
  its first ``scalars()``, then every run grown by 1% (10 steps appended to its event file, as
  a writer still writing appends them) and one new run, then ``scalars()`` again, checked equal
  to a fresh ``reader.scalars`` value for value.

Every result is checked: the number of scalars, and the Rust server's last step per tag.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

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


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(fn: Any) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def grow(logdir: str) -> int:
    """Every run of ``logdir`` grows by 1% (10 steps appended to its event file, records framed
    by npsummary's writer) and one new run appears; returns the scalars added."""
    scratch = tempfile.mkdtemp(prefix="npsummary-grow-")
    try:
        runs = sorted(glob.glob(os.path.join(logdir, "run-*")))
        for i, run in enumerate(runs):
            directory = os.path.join(scratch, str(i))
            write_run(directory, 1_000_000 + i, first=STEPS, steps=STEPS // 100)
            (new,) = glob.glob(os.path.join(directory, "*tfevents*"))
            with open(new, "rb") as f:
                data = f.read()
            first = 16 + int.from_bytes(data[:8], "little")  # past the file_version record
            (old,) = glob.glob(os.path.join(run, "*tfevents*"))
            with open(old, "ab") as f:
                f.write(data[first:])
        write_run(os.path.join(logdir, "run-new"), 99_999)
        return len(runs) * 3 * (STEPS // 100) + 3 * STEPS
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _count(series: dict[Any, Any]) -> int:
    return sum(len(s) for s in series.values())


def child(what: str, logdir: str) -> dict[str, Any]:
    """One measurement, in this (child) process."""
    from npsummary import reader

    if what == "scalars":
        from bench_sweep_read import _Workers  # the reader's workers are the forkserver's

        pool = _Workers()
        out, wall, cpu = _timed(lambda: reader.scalars(logdir))
        workers_cpu = pool.cpu_s()
        return {
            "wall": wall,
            "cpu": cpu + workers_cpu,
            "workers_cpu": workers_cpu,
            "scalars": _count(out),
            "peak_mb": _peak_mb(),
            "worker_peak_mb": pool.peak_mb,
        }
    if what == "to_pandas":
        out, wall, cpu = _timed(lambda: reader.to_pandas(logdir))
        rows = len(out)
        return {"wall": wall, "cpu": cpu, "scalars": rows, "peak_mb": _peak_mb()}
    if what == "export":
        from npsummary._cli import main as cli

        out_dir = tempfile.mkdtemp(prefix="npsummary-export-")
        try:
            status, wall, cpu = _timed(
                lambda: cli(["export", logdir, "--format", "parquet", "--out", out_dir])
            )
            size = os.path.getsize(os.path.join(out_dir, "scalars.parquet"))
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        assert status == 0
        return {"wall": wall, "cpu": cpu, "file_mb": size / 1e6, "peak_mb": _peak_mb()}
    if what == "tbparse":
        from tbparse import SummaryReader

        out, wall, cpu = _timed(lambda: SummaryReader(logdir, pivot=False).scalars)
        return {"wall": wall, "cpu": cpu, "scalars": len(out), "peak_mb": _peak_mb()}
    if what == "refresh":
        live = reader.Reader(logdir, kinds=["scalars"])
        first, t_first, c_first = _timed(live.scalars)
        _, t_same, _ = _timed(live.scalars)
        added = grow(logdir)
        grown, t_grown, c_grown = _timed(live.scalars)
        fresh, t_fresh, _ = _timed(lambda: reader.scalars(logdir))
        assert list(grown) == list(fresh) and _count(grown) == _count(first) + added
        for key, s in fresh.items():
            g = grown[key]
            assert np.array_equal(g.steps, s.steps) and np.array_equal(g.values, s.values)
            assert np.array_equal(g.wall_times, s.wall_times)
        return {
            "first": t_first,
            "first_cpu": c_first,
            "unchanged": t_same,
            "refresh": t_grown,
            "refresh_cpu": c_grown,
            "fresh_after": t_fresh,
            "scalars": _count(grown),
            "added": added,
        }
    raise ValueError(what)


def _in_child(what: str, logdir: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", what, logdir],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        raise RuntimeError(f"{what} on {logdir} failed:\n{result.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def _port(path: str) -> int:
    """The port the data server wrote (0 until the whole line is there)."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return 0
    return int(text) if text.endswith("\n") else 0


def rust_server(logdir: str, runs: int) -> dict[str, Any]:
    """TensorBoard's Rust data server on ``logdir``: seconds until every run is loaded."""
    import grpc
    from tensorboard.data.proto import data_provider_pb2 as pb
    from tensorboard.data.proto import data_provider_pb2_grpc as pb_grpc
    from tensorboard_data_server import server_binary

    scratch = tempfile.mkdtemp(prefix="npsummary-rust-")
    port_file = os.path.join(scratch, "port")
    start = time.perf_counter()
    # The arguments tensorboard --load_fast=true passes (data/server_ingester.py), loading once.
    proc = subprocess.Popen(
        [
            server_binary(),
            f"--logdir={logdir}",
            "--reload=once",
            "--samples-per-plugin=",
            "--host=127.0.0.1",
            "--port=0",
            f"--port-file={port_file}",
            "--die-after-stdin",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not _port(port_file):
            if proc.poll() is not None:
                raise RuntimeError("the data server exited")
            time.sleep(0.01)
        port = _port(port_file)
        channel = grpc.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 1 << 30)]
        )
        stub = pb_grpc.TensorBoardDataProviderStub(channel)
        request = pb.ListScalarsRequest(plugin_filter=pb.PluginFilter(plugin_name="scalars"))
        while True:
            answer = stub.ListScalars(request)
            done = sum(
                len(run.tags) == len(SCALAR_TAGS)
                and all(t.metadata.max_step == STEPS - 1 for t in run.tags)
                for run in answer.runs
            )
            if done == runs:
                break
            time.sleep(0.1)
        wall = time.perf_counter() - start
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        with open(f"/proc/{proc.pid}/status") as f:
            hwm = next(line for line in f if line.startswith("VmHWM"))
        channel.close()
        return {"wall": wall, "cpu": cpu, "peak_mb": int(hwm.split()[1]) / 1024}
    finally:
        proc.kill()  # our own child, by its PID
        proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "npsummary-sweeps"))
    parser.add_argument("--sizes", default="1k,10k")
    parser.add_argument("--refresh", default="1k", help="the sweep whose copy grows ('' for none)")
    parser.add_argument("--no-tbparse", action="store_true")
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("WHAT", "LOGDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    sizes = [size for size in args.sizes.split(",") if size]
    for size in {*sizes, *([args.refresh] if args.refresh else [])}:
        make_sweep(args.cache, size)
    if args.generate_only:
        return
    print(_load(), flush=True)
    for size in sizes:
        logdir = make_sweep(args.cache, size)
        runs = SIZES[size]
        want = runs * len(SCALAR_TAGS) * STEPS
        rust = rust_server(logdir, runs)
        ours = _in_child("scalars", logdir)
        assert ours["scalars"] == want, ours
        print(
            f"{size} runs, reader.scalars: {ours['wall']:.1f} s wall, {ours['cpu']:.1f} CPU s "
            f"({ours['workers_cpu']:.1f} in workers), peak {ours['peak_mb']:.0f} MB (+ "
            f"{ours['worker_peak_mb']:.0f} MB per worker) | Rust data server: "
            f"{rust['wall']:.1f} s wall, {rust['cpu']:.1f} CPU s, peak {rust['peak_mb']:.0f} MB "
            f"| ratio {ours['wall'] / rust['wall']:.2f}x wall, "
            f"{ours['cpu'] / rust['cpu']:.2f}x CPU",
            flush=True,
        )
        if size == "1k" and not args.no_tbparse:
            tb = _in_child("tbparse", logdir)
            assert tb["scalars"] == want, tb
            print(
                f"{size} runs, tbparse: {tb['wall']:.1f} s wall, {tb['cpu']:.1f} CPU s, peak "
                f"{tb['peak_mb']:.0f} MB | ours/tbparse {ours['wall'] / tb['wall']:.3f}x wall",
                flush=True,
            )
        frame = _in_child("to_pandas", logdir)
        assert frame["scalars"] == want, frame
        export = _in_child("export", logdir)
        print(
            f"{size} runs, reader.to_pandas: {frame['wall']:.1f} s, peak {frame['peak_mb']:.0f} MB "
            f"({frame['peak_mb'] * 2**20 / want:.0f} B per row) | export --format parquet: "
            f"{export['wall']:.1f} s, peak {export['peak_mb']:.0f} MB, file "
            f"{export['file_mb']:.0f} MB",
            flush=True,
        )
    if args.refresh:
        work = tempfile.mkdtemp(prefix="npsummary-refresh-")
        try:
            logdir = os.path.join(work, "sweep")
            shutil.copytree(make_sweep(args.cache, args.refresh), logdir)
            r = _in_child("refresh", logdir)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print(
            f"{args.refresh} runs, Reader.scalars: first {r['first']:.2f} s, unchanged "
            f"{r['unchanged']:.3f} s, after 1% more steps and one new run "
            f"{r['refresh']:.3f} s ({r['refresh_cpu']:.3f} CPU s; {r['added']:,} scalars added, "
            f"all {r['scalars']:,} equal to a fresh read of {r['fresh_after']:.2f} s) | ratio "
            f"{r['refresh'] / r['first']:.3f} of the first read's wall time, "
            f"{r['refresh_cpu'] / r['first_cpu']:.3f} of its CPU time ({r['first_cpu']:.2f} s)",
            flush=True,
        )
    print(_load(), flush=True)


if __name__ == "__main__":
    main()
