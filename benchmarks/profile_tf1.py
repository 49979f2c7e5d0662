"""Where the TF1 bucket pass spends its time on 10^7 float32, stage by stage, next to its anchor.

    python benchmarks/profile_tf1.py             # 15 rounds, wall-clock medians
    python benchmarks/profile_tf1.py --cpu       # process CPU time (less moved by other load)
    python benchmarks/profile_tf1.py --threads   # which steps two threads can run at once
    python benchmarks/profile_tf1.py --halves    # the pass as two halves in two threads

The pass of ``tf1_histogram(x)`` is rebuilt here from the same NumPy calls, one stage added at a
time over the same 2^17-element chunks, so that the difference between two rows is the cost of
one stage inside the pipeline (with its cache effects), not in isolation:

1. min and max of the chunk (the finite check; non-finite values take a slower branch);
2. the float64 copy the sums read;
3. sum and sum of squares (row dot products over rows of 1024, as ``_source.Stats``);
4. the bucket key: shift, gather from the 8192-cell offset table, add, shift (``tf1._Tf1Counter``);
5. ``np.bincount`` of the keys: the full pass.

"key + count" is stages 4-5 alone: the floor of exact TF1 bucketing with NumPy primitives,
whatever the statistics cost. ``tf1_histogram`` counts inputs this large in two threads when
two CPUs are usable; "tf1_pass, one thread" is the same pass without them. Every round runs the
stages, the library's own calls and the anchors in turn; the final counts are checked against
the library's.

``--threads`` times each NumPy call of the pass, first ``reps`` calls in one thread, then
``reps`` calls in each of two threads at once (each on its own chunk), on chunks of 2^17 values
(the pass's) and 2^20: the speedup column says how far two threads overlap that call on this
machine. These calls release the GIL while they run (``np.add.at``, NumPy's other counting
primitive, only for part of its run), but each time a thread must take the GIL back while the
other holds it, it waits for the other core to wake it, so calls of a few tens of
microseconds overlap little; calls of a millisecond work on arrays beyond the per-core cache,
where the memory-bound steps (shift, float64 copy) do not scale either. ``--halves`` runs the
rebuilt pass in one thread and as two halves in two threads, for chunk sizes 2^16 to 2^20.
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from npsummary._histogram import tf1
from npsummary._histogram._source import Source

N = 10**7
CHUNK = 1 << 17
ROW = 1024


def pipeline(x: np.ndarray, stages: int, *, stats: bool = True, chunk: int = CHUNK) -> np.ndarray:
    """The first ``stages`` stages of the TF1 pass (``stats=False``: stages 4-5 only), over
    chunks of ``chunk`` values."""
    off, _ = tf1._tf1_offsets32()
    shift = tf1._tf1_table32().shift
    size = tf1._KEY_TOP + 1
    idx = np.empty(chunk, np.uint32)
    key = np.empty(chunk, np.uint32)
    x64 = np.empty(chunk)
    ones = np.ones(ROW)
    acc = np.zeros(size, np.int64)
    mn, mx, s, q = math.inf, -math.inf, 0.0, 0.0
    for i in range(0, x.size, chunk):
        c = x[i : i + chunk]
        m = c.size
        if stats and stages >= 1:
            lo, hi = float(c.min()), float(c.max())
            mn, mx = min(mn, lo), max(mx, hi)
        if stats and stages >= 2:
            a = x64[:m]
            np.copyto(a, c)
        if stats and stages >= 3:
            rows = a[: m - m % ROW].reshape(-1, ROW)
            s += float(np.vecdot(rows, ones).sum())
            q += float(np.vecdot(rows, rows).sum())
        if stages >= 4:
            b = c.view(np.uint32)
            k, j = key[:m], idx[:m]
            np.right_shift(b, shift, out=j)
            np.take(off, j, out=k, mode="wrap")
            np.add(k, b, out=k)
            np.right_shift(k, shift, out=k)
        if stages >= 5:
            acc += np.bincount(k, minlength=size)
    return acc


def two_thread_speedups(rounds: int, size: int) -> None:
    """Each call of the pass on a chunk of ``size`` values: the wall time of ``reps`` calls in
    one thread against ``reps`` calls in each of two threads at once, each thread on its own
    chunk and buffers. The bucket counts made in the threads are checked."""
    rng = np.random.default_rng(1)
    off, _ = tf1._tf1_offsets32()
    shift = tf1._tf1_table32().shift
    buckets = tf1._KEY_TOP + 1

    def calls(c: np.ndarray) -> tuple[dict[str, Callable[[], object]], np.ndarray]:
        b = c.view(np.uint32)
        cell = np.right_shift(b, shift).astype(np.intp)
        out = np.empty(size, np.uint32)
        keys = np.right_shift(np.take(off, cell) + b, shift).astype(np.intp)
        x64 = c.astype(np.float64)
        rows = x64.reshape(-1, ROW)
        at_counts = np.zeros(buckets, np.int64)
        fns: dict[str, Callable[[], object]] = {
            "min + max": lambda: (c.min(), c.max()),
            "float64 copy": lambda: np.copyto(x64, c),
            "row dot products": lambda: np.vecdot(rows, rows),
            "shift": lambda: np.right_shift(b, shift, out=out),
            "take (gather)": lambda: np.take(off, cell, out=out, mode="wrap"),
            "np.bincount": lambda: np.bincount(keys, minlength=buckets),
            "np.add.at": lambda: np.add.at(at_counts, keys, 1),
        }
        return fns, np.bincount(keys, minlength=buckets)

    (mine, my_counts), (theirs, their_counts) = (
        calls(rng.standard_normal(size).astype(np.float32)) for _ in range(2)
    )
    reps = max(4, (100 * CHUNK) // size)
    print(f"load average {os.getloadavg()}")
    head = f"call (2^{size.bit_length() - 1} values)"
    print(f"{head:22s} {'one thread':>11s} {'two threads':>12s} {'speedup':>8s}")
    for name in mine:
        one: list[float] = []
        two: list[float] = []
        last: dict[int, object] = {}

        def run(
            fns: dict[str, Callable[[], object]], name: str = name, last: dict[int, object] = last
        ) -> None:
            for _ in range(reps):
                last[id(fns)] = fns[name]()

        for _ in range(rounds):
            start = time.perf_counter()
            run(mine)
            one.append(time.perf_counter() - start)
            worker = threading.Thread(target=run, args=(theirs,))
            start = time.perf_counter()
            worker.start()
            run(mine)
            worker.join()
            two.append(time.perf_counter() - start)
        if name == "np.bincount" and not (
            np.array_equal(last[id(mine)], my_counts)  # type: ignore[arg-type]
            and np.array_equal(last[id(theirs)], their_counts)  # type: ignore[arg-type]
        ):
            raise SystemExit("check failed: bucket counts made in two threads differ")
        t1, t2 = statistics.median(one), statistics.median(two)
        print(f"{name:22s} {t1 / reps * 1e6:8.1f} us {t2 / reps * 1e6:9.1f} us {2 * t1 / t2:8.2f}")


def halves_in_two_threads(rounds: int) -> None:
    """The full rebuilt pass over 10^7 float32 in one thread, and as two halves in two threads
    (counts added), for chunk sizes 2^16..2^20, alternating with the anchor; counts checked."""
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    index = np.searchsorted(np.linspace(-5, 5, 1551), x).astype(np.intp)
    half = N // 2 // (1 << 20) * (1 << 20)

    def two(chunk: int) -> np.ndarray:
        later: list[np.ndarray] = []
        worker = threading.Thread(target=lambda: later.append(pipeline(x[half:], 5, chunk=chunk)))
        worker.start()
        counts: np.ndarray = pipeline(x[:half], 5, chunk=chunk)
        worker.join()
        counts += later[0]
        return counts

    fns: dict[str, Callable[[], object]] = {"anchor": lambda: np.bincount(index, minlength=1552)}
    for bits in range(16, 21):
        fns[f"2^{bits} one thread"] = functools.partial(pipeline, x, 5, chunk=1 << bits)
        fns[f"2^{bits} two threads"] = functools.partial(two, 1 << bits)
    times: dict[str, list[float]] = {name: [] for name in fns}
    expected = pipeline(x, 5)
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - start)
            if name != "anchor" and not np.array_equal(out, expected):  # type: ignore[arg-type]
                raise SystemExit(f"check failed: {name} counts differently")
    anchor = statistics.median(times["anchor"])
    print(f"load average {os.getloadavg()}")
    for name, t in times.items():
        print(
            f"{name:22s} {statistics.median(t) * 1e3:8.2f} ms {statistics.median(t) / anchor:6.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--cpu", action="store_true", help="time with process CPU time")
    ap.add_argument("--threads", action="store_true", help="two-thread speedup of each call")
    ap.add_argument("--halves", action="store_true", help="the pass as two halves, by chunk size")
    args = ap.parse_args()
    if args.halves:
        halves_in_two_threads(min(args.rounds, 9))
        return
    if args.threads:
        for size in (CHUNK, 8 * CHUNK):
            two_thread_speedups(min(args.rounds, 7), size)
        return
    clock = time.process_time if args.cpu else time.perf_counter

    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    index = np.searchsorted(np.linspace(-5, 5, 1551), x).astype(np.intp)
    fns: dict[str, Callable[[], object]] = {
        "np.bincount(index) [anchor]": lambda: np.bincount(index, minlength=1552),
        "np.sum(x)": lambda: np.sum(x),
        "1 min/max": lambda: pipeline(x, 1),
        "2 + float64 copy": lambda: pipeline(x, 2),
        "3 + sums": lambda: pipeline(x, 3),
        "4 + bucket key": lambda: pipeline(x, 4),
        "5 + bincount (full pass)": lambda: pipeline(x, 5),
        "key + count only (4-5)": lambda: pipeline(x, 5, stats=False),
        "tf1_pass, one thread": lambda: tf1.tf1_pass(
            Source(x), exact_sum=False, moments=False, parallel=False
        ),
        "tf1_histogram(x)": lambda: tf1.tf1_histogram(x),
        "tf1_histogram(x, exact_sum=True)": lambda: tf1.tf1_histogram(x, exact_sum=True),
    }
    times: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():
        fn()  # warm-up: tables, allocator
    for _ in range(args.rounds):
        for name, fn in fns.items():
            start = clock()
            fn()
            times[name].append(clock() - start)
    full = pipeline(x, 5)
    counter = tf1._Tf1Counter(np.dtype(np.float32), CHUNK)
    for i in range(0, N, CHUNK):
        counter.add(x[i : i + CHUNK])
    if not np.array_equal(full, counter.keys):
        raise SystemExit("check failed: the rebuilt pass counts differently from the library")

    med = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    anchor = med["np.bincount(index) [anchor]"]
    print(f"load average {os.getloadavg()}")
    print(f"{'':34s} {'ms':>8s} {'/anchor':>8s} {'stage ms':>9s}")
    prev = 0.0
    for name, t in med.items():
        stage = ""
        if name[0].isdigit():
            stage = f"{t - prev:9.2f}"
            prev = t
        print(f"{name:34s} {t:8.2f} {t / anchor:8.2f} {stage}")


if __name__ == "__main__":
    main()
