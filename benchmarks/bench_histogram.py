"""Histogram cores against NumPy, tensorboardX and TensorFlow, checking results while timing.

    python benchmarks/bench_histogram.py                  # 1e3 .. 1e7 float32
    python benchmarks/bench_histogram.py --big            # adds 1e8 (time + tracemalloc peak)
    python benchmarks/bench_histogram.py --no-tf          # skip the TensorFlow subprocess

Data: standard normal float32, seed 0. Timings are medians over repeats of one call on the
whole array. What is timed:

* ``np.sum(x)``: one reduction pass, the yardstick for the TF2 target (<= 10x).
* ``np.histogram(x, 30)``.
* npsummary ``tf2_buckets(x)`` (30 buckets), checked against the float64 v3 formula and, up to
  1e6 elements, TensorBoard's ``histogram_pb`` (its one-hot needs N x 30 bytes, so it is
  timed only up to 1e6).
* TF2 ``tf.summary.histogram`` (eager, default writer to a temp dir, so it includes queueing
  the event but not disk flushes) and its bucketing op ``summary_v2._buckets`` alone, run in
  ``/work/tfvenv`` in a subprocess; its buckets are compared with ours.
* npsummary ``tf1_histogram(x)`` (default and ``exact_sum=True``), checked against
  ``searchsorted`` on TF1's limits.
* tensorboardX ``summary.histogram(tag, x, default_bins)``: the Summary builder that
  ``add_histogram(bins='tensorflow')`` calls (make_np + float64 copy + np.histogram + trim +
  proto), without the event writer and disk.
* Peak extra memory (tracemalloc; NumPy reports its buffers to it) of each npsummary call on
  the largest size.
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
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from npsummary import _histogram as H

TFVENV = Path("/work/tfvenv/bin/python")

TF_SCRIPT = r"""
import json, sys, time, tempfile, statistics
import numpy as np
import tensorflow as tf
from tensorboard.plugins.histogram import summary_v2
out = {}
logdir = tempfile.mkdtemp()
writer = tf.summary.create_file_writer(logdir)
for path, repeats in json.loads(sys.argv[1]):
    x = np.load(path)
    t = tf.constant(x)
    summary_v2._buckets(t, 30)  # warm up tracing
    with writer.as_default(step=0):
        tf.summary.histogram("h", t)
    ts, tb = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        with writer.as_default(step=0):
            tf.summary.histogram("h", tf.constant(x))
        ts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = summary_v2._buckets(tf.constant(x), 30).numpy()
        tb.append(time.perf_counter() - t0)
    out[path] = {"summary": statistics.median(ts), "buckets_op": statistics.median(tb),
                 "buckets": b.tolist()}
writer.close()
print("RESULT" + json.dumps(out))
"""


def round_robin(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, tuple[float, Any]]:
    """Median time of each function; the functions take turns within each repeat, so a noisy
    neighbour slows all of them alike and the ratios stay meaningful."""
    results = {name: fn() for name, fn in fns.items()}  # warm-up (tables, caches)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: (statistics.median(times[name]), results[name]) for name in fns}


def peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def tf2_reference_counts(x: np.ndarray, k: int = 30) -> np.ndarray:
    """The v3 formula in float64, chunked to keep memory low (no one-hot)."""
    mn, mx = float(x.min()), float(x.max())
    width = (mx - mn) / k
    counts = np.zeros(k, np.int64)
    for i in range(0, x.size, 1 << 20):
        c = x[i : i + (1 << 20)].astype(np.float64)
        idx = np.minimum(np.floor((c - mn) / width).astype(np.int64), k - 1)
        counts += np.bincount(idx, minlength=k)
    return counts


def tf1_reference_counts(x: np.ndarray) -> np.ndarray:
    counts = np.zeros(H.TF1_BUCKET_LIMITS.size, np.int64)
    for i in range(0, x.size, 1 << 20):
        c = x[i : i + (1 << 20)].astype(np.float64)
        idx = np.minimum(np.searchsorted(H.TF1_BUCKET_LIMITS, c, side="right"), 1550)
        counts += np.bincount(idx, minlength=H.TF1_BUCKET_LIMITS.size)
    return counts


def tbx_default_bins() -> list[float]:
    v, pos, neg = 1e-12, [], []
    while v < 1e20:
        pos.append(v)
        neg.append(-v)
        v *= 1.1
    return [*neg[::-1], 0.0, *pos]


def run_tf(datasets: dict[int, np.ndarray], repeats: dict[int, int]) -> dict[int, dict[str, Any]]:
    if not TFVENV.exists():
        return {}
    tmp = Path(tempfile.mkdtemp())
    jobs = []
    paths = {}
    for n, x in datasets.items():
        p = tmp / f"x{n}.npy"
        np.save(p, x)
        paths[str(p)] = n
        jobs.append((str(p), repeats[n]))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run(
        [str(TFVENV), "-c", TF_SCRIPT, json.dumps(jobs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT"):
            raw = json.loads(line[len("RESULT") :])
            return {paths[p]: v for p, v in raw.items()}
    print("TensorFlow subprocess failed:", proc.stderr[-2000:], file=sys.stderr)
    return {}


def fmt(t: float | None) -> str:
    if t is None:
        return "—"
    return f"{t * 1e3:.3f}" if t < 0.01 else f"{t * 1e3:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--big", action="store_true", help="also run 1e8 elements")
    ap.add_argument("--no-tf", action="store_true", help="skip the TensorFlow subprocess")
    ap.add_argument("--repeats", type=int, default=0, help="repeats per timing (default: auto)")
    args = ap.parse_args()

    try:
        from tensorboardX import summary as tbx_summary
    except ImportError:
        tbx_summary = None
    try:
        from tensorboard.plugins.histogram import summary_v2
        from tensorboard.util import tensor_util
    except ImportError:
        summary_v2 = None

    sizes = [10**3, 10**4, 10**5, 10**6, 10**7] + ([10**8] if args.big else [])
    rng = np.random.default_rng(0)
    data = {n: rng.standard_normal(n).astype(np.float32) for n in sizes}
    reps = {n: args.repeats or max(5, min(200, int(3e7 // n))) for n in sizes}
    if args.big:
        reps[10**8] = args.repeats or 3
    tf_res = {} if args.no_tf else run_tf({n: data[n] for n in sizes if n <= 10**7}, reps)
    bins = tbx_default_bins()

    rows = []
    for n in sizes:
        x = data[n]
        r = reps[n]
        fns: dict[str, Callable[[], Any]] = {
            "sum": lambda x=x: np.sum(x),
            "nph": lambda x=x: np.histogram(x, 30),
            "tf2": lambda x=x: H.tf2_buckets(x),
            "tf1": lambda x=x: H.tf1_histogram(x),
            "tf1x": lambda x=x: H.tf1_histogram(x, exact_sum=True),
        }
        if tbx_summary is not None and n <= 10**7:
            fns["tbx"] = lambda x=x: tbx_summary.histogram("h", x, bins)
        if summary_v2 is not None and n <= 10**6:
            fns["pb"] = lambda x=x: summary_v2.histogram_pb("h", x)
        res = round_robin(fns, r)
        t = {name: v[0] for name, v in res.items()}
        b2 = res["tf2"][1][0]
        assert np.array_equal(b2[:, 2], tf2_reference_counts(x)), "tf2 counts"
        assert np.array_equal(b2[:, 0], np.linspace(float(x.min()), float(x.max()), 31)[:-1])
        if "pb" in res:
            pb = res["pb"][1]
            assert np.array_equal(tensor_util.make_ndarray(pb.value[0].tensor), b2), "histogram_pb"
        h1 = res["tf1"][1]
        ref1 = tf1_reference_counts(x)
        assert h1.num == n and np.array_equal(h1.bucket[h1.bucket > 0], ref1[ref1 > 0]), "tf1"
        h1x = res["tf1x"][1]
        assert np.array_equal(h1x.bucket, h1.bucket)
        assert abs(h1x.sum - h1.sum) <= 1e-12 * float(np.abs(x).sum(dtype=np.float64))
        if "tbx" in res:
            hx = res["tbx"][1].value[0].histo
            assert hx.num == h1.num and sum(hx.bucket) == h1.bucket.sum(), "tbx"
        tf = tf_res.get(n)
        if tf is not None:
            assert np.array_equal(np.array(tf["buckets"]), b2), "TF2 op vs ours"
        rows.append(
            dict(
                n=n,
                sum=t["sum"],
                nph=t["nph"],
                tf2=t["tf2"],
                pb=t.get("pb"),
                tfop=tf and tf["buckets_op"],
                tfsum=tf and tf["summary"],
                tf1=t["tf1"],
                tf1x=t["tf1x"],
                tbx=t.get("tbx"),
            )
        )
        print(f"n={n:>9}: checked", file=sys.stderr)

    print(
        "\n| n (float32) | np.sum | np.histogram(x,30) | **tf2_buckets** | ratio tf2/np.sum |"
        " TB histogram_pb | TF2 `_buckets` op | TF2 tf.summary.histogram | **tf1_histogram** |"
        " tf1 exact_sum | tbX summary.histogram | ratio tf1/tbX |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in rows:
        ratio2 = w["tf2"] / w["sum"]
        ratio1 = f"{w['tf1'] / w['tbx']:.3f}" if w["tbx"] else "—"
        print(
            f"| {w['n']:.0e} | {fmt(w['sum'])} | {fmt(w['nph'])} | {fmt(w['tf2'])} |"
            f" {ratio2:.1f}x | {fmt(w['pb'])} | {fmt(w['tfop'])} | {fmt(w['tfsum'])} |"
            f" {fmt(w['tf1'])} | {fmt(w['tf1x'])} | {fmt(w['tbx'])} | {ratio1} |"
        )
    print("\n(times in ms, medians)")

    n = sizes[-1]
    x = data[n]
    print(
        f"\nPeak extra memory (tracemalloc) on {n:.0e} float32 ({x.nbytes / 2**20:.0f} MiB input):"
    )
    for name, fn in [
        ("tf2_buckets", lambda: H.tf2_buckets(x)),
        ("tf1_histogram", lambda: H.tf1_histogram(x)),
        ("tf1_histogram(exact_sum=True)", lambda: H.tf1_histogram(x, exact_sum=True)),
        ("variable_stats", lambda: H.variable_stats(x)),
        ("binned_histogram(bins=30)", lambda: H.binned_histogram(x, 30)),
        ("binned_histogram(bins='auto')", lambda: H.binned_histogram(x, "auto")),
        ("np.histogram(x, 30)", lambda: np.histogram(x, 30)),
    ]:
        print(f"- {name}: {peak_mib(fn):.2f} MiB")


if __name__ == "__main__":
    main()
