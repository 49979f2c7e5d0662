"""Histograms of a sharded parameter on 4 ranks (gloo, CPU): merged where it lives vs gathered.

    python benchmarks/bench_sharded.py                 # launches torchrun twice (4 ranks each)
    python benchmarks/bench_sharded.py --size 4e6      # a smaller parameter
    python benchmarks/bench_sharded.py --single        # one process: add_histogram of CPU
                                                       # tensors and NumPy arrays (run it with
                                                       # PYTHONPATH=src of two checkouts)

A float32 ``DTensor`` of ``--size`` elements (default 4e7), ``Shard(0)`` over 4 ranks, built
from each rank's own shard (no rank ever holds the whole tensor before the timing). Each mode
runs in its own torchrun job, so that each rank's peak RSS belongs to that mode alone:

* ``merged``: ``writer.add_histogram("w", dtensor, step)`` on every rank (npsummary: each rank
  buckets its shard, two all_reduce calls, rank 0 writes);
* ``gather``: ``writer.add_histogram("w", dtensor.full_tensor(), step)`` (what a user does with
  tensorboardX or torch: every rank gets the whole tensor, rank 0 writes).

Reported per mode: median time per call over ``--repeat`` calls (after one warm-up), each
rank's peak RSS (VmHWM, reset after the warm-up call) above its RSS then, and the bytes each rank
received in collectives (all_reduce: the reduced vectors; full_tensor: the other shards).
The files of both modes are compared: same buckets, counts, min, max and num.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORLD = 4


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak_rss() -> int:
    """Reset this process's peak RSS (VmHWM) to its current RSS (Linux: clear_refs 5) and
    return that RSS in KiB."""
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return _status_kib("VmRSS")


def _child(mode: str, size: int, repeat: int, out: Path) -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Shard

    import npsummary
    from npsummary import reader

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    mesh = init_device_mesh("cpu", (WORLD,))
    local_size = size // WORLD
    generator = torch.Generator().manual_seed(rank)
    local = torch.randn(local_size, generator=generator)
    weight = DTensor.from_local(local, mesh, [Shard(0)], run_check=False)
    received = 0
    all_reduce = dist.all_reduce

    def counting(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal received
        received += tensor.numel() * tensor.element_size()
        return all_reduce(tensor, *args, **kwargs)

    dist.all_reduce = counting
    logdir = out / mode
    writer = npsummary.SummaryWriter(str(logdir))

    def call(step: int) -> None:
        nonlocal received
        if mode == "merged":
            writer.add_histogram("w", weight, step)
        else:
            full = weight.full_tensor()
            received += (full.numel() - local.numel()) * full.element_size()
            writer.add_histogram("w", full, step)
            del full

    call(0)  # warm-up: imports and first-call caches are not the call's memory
    received = 0
    dist.barrier()
    rss_before = _reset_peak_rss()
    times = []
    for step in range(1, repeat + 1):
        dist.barrier()
        start = time.perf_counter()
        call(step)
        dist.barrier()
        times.append(time.perf_counter() - start)
    peak = _status_kib("VmHWM") - rss_before
    writer.close()
    record = {
        "rank": rank,
        "median_s": statistics.median(times),
        "peak_rss_mib": peak / 1024,
        "shard_mib": local.numel() * 4 / 2**20,
        "received_bytes_per_call": received / repeat,
    }
    if rank == 0:
        histos = []
        for event in reader.events(logdir):
            for value in event.summary.value:
                h = value.histo
                histos.append([list(h.bucket_limit), list(h.bucket), h.min, h.max, h.num])
        record["histograms"] = histos
    (out / f"{mode}_{rank}.json").write_text(json.dumps(record))
    dist.destroy_process_group()


def _single() -> None:
    """Best of 5 rounds of ``add_histogram`` on a MemorySink: CPU torch tensors and NumPy."""
    import numpy as np
    import torch

    import npsummary

    print(npsummary.__file__)
    writer = npsummary.SummaryWriter(npsummary.MemorySink())
    rng = np.random.default_rng(0)
    for n in (1000, 1_000_000):
        x = torch.from_numpy(rng.standard_normal(n).astype(np.float32))
        for label, values in (("torch-cpu", x), ("numpy", x.numpy())):
            for bins in ("tensorflow", 30):
                writer.add_histogram("h", values, 0, bins=bins)
                reps = 2000 if n == 1000 else 30
                rounds = []
                for _ in range(5):
                    start = time.perf_counter()
                    for _ in range(reps):
                        writer.add_histogram("h", values, 0, bins=bins)
                    rounds.append((time.perf_counter() - start) / reps)
                print(f"{n:>8} {label:<10} bins={bins!r:<13} {min(rounds) * 1e6:10.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=4e7)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", choices=["merged", "gather"])
    parser.add_argument("--out")
    parser.add_argument("--single", action="store_true")
    args = parser.parse_args()
    if args.single:
        _single()
        return
    size = int(args.size)
    if args.child:
        _child(args.child, size, args.repeat, Path(args.out))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        for mode in ("merged", "gather"):
            command = [
                sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc_per_node={WORLD}", __file__, "--child", mode, "--out", str(out),
                "--size", str(size), "--repeat", str(args.repeat),
            ]  # fmt: skip
            subprocess.run(command, env=env, check=True, capture_output=True)
        results = {
            mode: [json.loads((out / f"{mode}_{r}.json").read_text()) for r in range(WORLD)]
            for mode in ("merged", "gather")
        }
    same = results["merged"][0]["histograms"] == results["gather"][0]["histograms"]
    print(f"{size:.0e} float32 elements, Shard(0) over {WORLD} ranks (gloo, CPU)")
    print(f"{'mode':<8} {'time/call':>10} {'peak RSS per rank (MiB)':>30} {'received/rank':>16}")
    for mode, rows in results.items():
        t = max(row["median_s"] for row in rows)
        peaks = " ".join(f"{row['peak_rss_mib']:6.1f}" for row in rows)
        got = max(row["received_bytes_per_call"] for row in rows)
        print(f"{mode:<8} {t * 1e3:8.1f} ms {peaks:>30} {got:>14,.0f} B")
    ratio = max(r["median_s"] for r in results["merged"]) / max(
        r["median_s"] for r in results["gather"]
    )
    print(f"merged / gather time: {ratio:.3f}; shard {results['merged'][0]['shard_mib']:.1f} MiB")
    print(f"same buckets, counts, min, max, num in both files: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
