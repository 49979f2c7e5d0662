"""Loading a logdir back: npsummary.reader against tbparse, EventAccumulator and TF's reader.

Run: python benchmarks/bench_reader.py [--events 1000000] [--histograms 10000] [--repeats 3]
     [--growth] [--memory] [--data DIR] [--no-anchors]

Data (generated once into --data, default a temp-dir cache): --events scalar events over 50 tags
in 4 runs of 2 files each; two runs in the legacy simple_value format (tensorboardX, torch, TF1)
and two in the TF2 tensor format (tf.summary, npsummary); plus --histograms histograms in two
runs (TF1 legacy buckets and TF2 tensors). Anchors, in the same process, when installed:
tbparse (SummaryReader), TensorBoard's EventAccumulator with size_guidance 0 (keep everything)
and TensorFlow's tf.data.TFRecordDataset + Event.FromString. Every timed load is checked equal
to npsummary's result (every (run, tag), every step and value). Reports medians and ratios.

--growth times npsummary at 1e5, 1e6 and 1e7 events with a breakdown (file I/O, framing + CRC,
decoding) and the general per-record path; --memory reports tracemalloc's peak during a load
against the output arrays and the file size.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import npsummary
from npsummary import reader
from npsummary._format.record import frame_record
from npsummary.proto import Event

TAGS = [f"metrics/tag{i:02d}" for i in range(50)]
Canon = dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]


def _legacy_file(path: str, first: int, count: int) -> None:
    with open(path, "wb") as f:
        head = Event(wall_time=1.7e9, file_version="brain.Event:2")
        f.write(frame_record(head.SerializeToString()))
        parts = []
        for i in range(first, first + count):
            ev = Event(wall_time=1.7e9 + i * 1e-3, step=i // 50)
            ev.summary.value.add(tag=TAGS[i % 50], simple_value=(i % 997) * 0.25)
            parts.append(frame_record(ev.SerializeToString()))
            if len(parts) == 10000:
                f.write(b"".join(parts))
                parts = []
        f.write(b"".join(parts))


def _tf2_file(logdir: str, suffix: str, first: int, count: int) -> None:
    """TF2's scalar form (a DT_FLOAT tensor), written by the tf.summary-style API."""
    writer = npsummary.create_file_writer(logdir, max_queue=10000, filename_suffix=suffix)
    with writer.as_default():
        for i in range(first, first + count):
            npsummary.scalar(TAGS[i % 50], (i % 997) * 0.25, step=i // 50)
    writer.close()


def make_scalars(root: str, events: int) -> str:
    """4 runs x 2 files of scalar events (see the module docstring); cached by size."""
    logdir = os.path.join(root, f"scalars-{events}")
    if os.path.isdir(logdir):
        return logdir
    tmp = logdir + ".tmp"
    per_file = events // 8
    for r in range(4):
        run = os.path.join(tmp, f"{'legacy' if r < 2 else 'tf2'}_{r}")
        os.makedirs(run, exist_ok=True)
        for k in range(2):
            first = (r * 2 + k) * per_file
            if r < 2:
                _legacy_file(
                    os.path.join(run, f"events.out.tfevents.{1700000000 + k}.h"), first, per_file
                )
            else:
                _tf2_file(run, f".{k}", first, per_file)
    os.rename(tmp, logdir)
    return logdir


def make_histograms(root: str, count: int) -> str:
    logdir = os.path.join(root, f"histograms-{count}")
    if os.path.isdir(logdir):
        return logdir
    tmp = logdir + ".tmp"
    rng = np.random.default_rng(0)
    data = rng.normal(size=(64, 1000))
    with npsummary.SummaryWriter(os.path.join(tmp, "tf1_buckets")) as w:
        for i in range(count // 2):
            w.add_histogram(f"h{i % 10}", data[i % 64], i // 10, walltime=1.7e9 + i)
    tf2 = npsummary.create_file_writer(os.path.join(tmp, "tf2_tensors"))
    with tf2.as_default():
        for i in range(count // 2):
            npsummary.histogram(f"h{i % 10}", data[i % 64], step=i // 10)
    tf2.close()
    os.rename(tmp, logdir)
    return logdir


def _canon(pairs: dict[tuple[str, str], tuple[Any, Any]]) -> Canon:
    out = {}
    for key, (steps, values) in pairs.items():
        s, v = np.asarray(steps, np.int64), np.asarray(values, np.float64)
        order = np.lexsort((v, s))
        out[key] = (s[order], v[order])
    return out


def _check(name: str, ours: Canon, theirs: Canon) -> None:
    if ours.keys() != theirs.keys():
        raise SystemExit(
            f"check failed: {name} found {sorted(theirs)[:3]}..., expected {sorted(ours)[:3]}..."
        )
    for key, (s, v) in ours.items():
        ts, tv = theirs[key]
        if not (np.array_equal(s, ts) and np.array_equal(v, tv)):
            raise SystemExit(f"check failed: {name} differs on {key}")


def ours_scalars(logdir: str) -> Canon:
    got = reader.scalars(logdir)
    return _canon({k: (s.steps, s.values) for k, s in got.items()})


def tbparse_scalars(logdir: str) -> Canon:
    from tbparse import SummaryReader

    r = SummaryReader(logdir, extra_columns={"dir_name"}, event_types={"scalars", "tensors"})
    frames = [r.scalars, r.tensors]
    out: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for df in frames:
        if df.empty:  # no values of that kind (tbparse then gives a frame without columns)
            continue
        for (run, tag), g in df.groupby(["dir_name", "tag"]):
            s, v = out.setdefault((run or ".", tag), ([], []))
            s.extend(g["step"].tolist())
            v.extend(float(np.asarray(x).reshape(-1)[0]) for x in g["value"])
    return _canon(out)


def _runs(logdir: str) -> list[tuple[str, str]]:
    return [
        (r.name, os.path.join(logdir, r.name))
        for r in reader._discover.discover(reader.LocalFileSystem(), logdir)
    ]


def ea_scalars(logdir: str) -> Canon:
    from tensorboard.backend.event_processing import event_accumulator as ea
    from tensorboard.util import tensor_util

    guidance = {k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE}
    out: dict[tuple[str, str], tuple[Any, Any]] = {}
    for run, path in _runs(logdir):
        acc = ea.EventAccumulator(path, size_guidance=guidance)
        acc.Reload()
        tags = acc.Tags()
        for tag in tags["scalars"]:
            items = acc.Scalars(tag)
            out[(run, tag)] = ([e.step for e in items], [e.value for e in items])
        for tag in tags["tensors"]:
            items = acc.Tensors(tag)
            out[(run, tag)] = (
                [e.step for e in items],
                [tensor_util.make_ndarray(e.tensor_proto).item() for e in items],
            )
    return _canon(out)


def tf_dataset_scalars(logdir: str) -> Canon:
    import tensorflow as tf
    from tensorboard.compat.proto.event_pb2 import Event as TFEvent

    out: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for run, path in _runs(logdir):
        files = sorted(glob.glob(os.path.join(path, "*tfevents*")))
        for record in tf.data.TFRecordDataset(files):
            ev = TFEvent.FromString(record.numpy())
            for v in ev.summary.value:
                s, vals = out.setdefault((run, v.tag), ([], []))
                s.append(ev.step)
                if v.HasField("simple_value"):
                    vals.append(v.simple_value)
                else:
                    vals.append(tf.make_ndarray(v.tensor).item())
    return _canon(out)


def timed(fn: Callable[[str], Canon], logdir: str, repeats: int) -> tuple[float, Canon]:
    times, result = [], {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(logdir)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def anchors() -> list[tuple[str, Callable[[str], Canon]]]:
    found: list[tuple[str, Callable[[str], Canon]]] = []
    for module, name, fn in (
        ("tbparse", "tbparse SummaryReader", tbparse_scalars),
        ("tensorboard", "EventAccumulator (size_guidance 0)", ea_scalars),
        ("tensorflow", "TF TFRecordDataset + Event.FromString", tf_dataset_scalars),
    ):
        try:
            __import__(module)
        except ImportError:
            print(f"  ({name}: {module} not installed, skipped)")
            continue
        found.append((name, fn))
    return found


def bench_scalar_load(root: str, events: int, repeats: int, with_anchors: bool) -> None:
    logdir = make_scalars(root, events)
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(logdir, "*", "*")))
    print(f"scalar load: {events:,} events, 50 tags, 4 runs x 2 files, {size / 1e6:.1f} MB")
    ours_t, ours = timed(ours_scalars, logdir, repeats)
    print(f"  npsummary.reader.scalars            {ours_t:8.3f} s  (median of {repeats})")
    if not with_anchors:
        return
    for name, fn in anchors():
        # The machine is shared and its load drifts: time npsummary right before and right
        # after each anchor and compare with the median of those runs.
        before, _ = timed(ours_scalars, logdir, repeats)
        t, theirs = timed(fn, logdir, 1)
        after, _ = timed(ours_scalars, logdir, repeats)
        _check(name, ours, theirs)
        near = statistics.median([before, after])
        print(
            f"  {name:<36}{t:8.3f} s  npsummary {near:.3f} s around it: "
            f"{t / near:5.1f}x faster (results equal)"
        )


def bench_histograms(root: str, count: int, repeats: int, with_anchors: bool) -> None:
    logdir = make_histograms(root, count)
    print(f"histogram load: {count:,} histograms (TF1 legacy buckets and TF2 tensors)")
    start = time.perf_counter()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        ours = reader.histograms(logdir)
        times.append(time.perf_counter() - start)
    ours_t = statistics.median(times)
    print(f"  npsummary.reader.histograms         {ours_t:8.3f} s")
    if not with_anchors:
        return
    try:
        from tensorboard.backend.event_processing import plugin_event_accumulator as pea
        from tensorboard.util import tensor_util
    except ImportError:
        return
    start = time.perf_counter()
    total = 0
    for run, path in _runs(logdir):
        acc = pea.EventAccumulator(path, size_guidance={k: 0 for k in pea.DEFAULT_SIZE_GUIDANCE})
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            arrays = [tensor_util.make_ndarray(e.tensor_proto) for e in acc.Tensors(tag)]
            mine = ours[(run, tag)].buckets
            if len(arrays) != len(mine) or not all(
                np.array_equal(a, b) for a, b in zip(arrays, mine, strict=True)
            ):
                raise SystemExit(f"check failed: histograms differ on {(run, tag)}")
            total += len(arrays)
    t = time.perf_counter() - start
    print(
        f"  {'plugin EventAccumulator (migrated)':<36}{t:8.3f} s  "
        f"npsummary is {t / ours_t:5.1f}x faster (results equal)"
    )


def _x10(root: str, base: str) -> str:
    big = os.path.join(root, os.path.basename(base) + "-x10")
    if not os.path.isdir(big):
        for k in range(10):
            for run in os.listdir(base):
                dest = os.path.join(big, f"copy{k}", run)
                os.makedirs(dest, exist_ok=True)
                for name in os.listdir(os.path.join(base, run)):
                    os.link(os.path.join(base, run, name), os.path.join(dest, name))
    return big


def bench_growth(root: str, repeats: int) -> None:
    from npsummary.reader._framing import read_batches

    fs = reader.LocalFileSystem()
    print("growth (npsummary.reader.scalars; I/O = reading the bytes, framing = + CRCs):")
    for events, logdir in (
        (100_000, make_scalars(root, 100_000)),
        (1_000_000, make_scalars(root, 1_000_000)),
        (10_000_000, _x10(root, make_scalars(root, 1_000_000))),
    ):
        files = [f for r in reader._discover.discover(fs, logdir) for f in r.files]

        def io_only(_: str, files: list[str] = files) -> Canon:
            for f in files:
                with open(f, "rb") as fh:
                    while fh.read(8 << 20):
                        pass
            return {}

        def framing(_: str, files: list[str] = files) -> Canon:
            stats = reader.ReadStats()
            for f in files:
                for _batch in read_batches(fs, f, stats):
                    pass
            return {}

        t_io, _ = timed(io_only, logdir, repeats)
        t_frame, _ = timed(framing, logdir, repeats)
        t_all, _ = timed(
            lambda d: {k: (s.steps, s.values) for k, s in reader.scalars(d).items()},
            logdir,
            repeats,
        )
        print(
            f"  {events:>10,} events  total {t_all:7.3f} s ({t_all / events * 1e9:5.0f} ns/event)"
            f"  I/O {t_io:6.3f}  framing+CRC {t_frame - t_io:6.3f}  decoding {t_all - t_frame:6.3f}"
        )
    logdir = make_scalars(root, 100_000)
    start = time.perf_counter()
    n = sum(1 for _ in reader.events(logdir))
    t = time.perf_counter() - start
    print(f"  general path (reader.events, protobuf per record): {t / n * 1e6:.2f} µs/event")


def bench_memory(root: str) -> None:
    import tracemalloc

    logdir = make_scalars(root, 1_000_000)
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(logdir, "*", "*")))
    tracemalloc.start()
    got = reader.scalars(logdir)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    out = sum(s.steps.nbytes + s.wall_times.nbytes + s.values.nbytes for s in got.values())
    print(
        f"memory: peak {peak / 1e6:.0f} MB while loading; output arrays {out / 1e6:.0f} MB; "
        f"files {size / 1e6:.0f} MB (peak/output {peak / out:.2f})"
    )


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--histograms", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "npsummary-bench-reader"))
    p.add_argument("--growth", action="store_true")
    p.add_argument("--memory", action="store_true")
    p.add_argument("--no-anchors", action="store_true")
    args = p.parse_args()
    os.makedirs(args.data, exist_ok=True)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, data in {args.data}")
    bench_scalar_load(args.data, args.events, args.repeats, not args.no_anchors)
    bench_histograms(args.data, args.histograms, args.repeats, not args.no_anchors)
    if args.growth:
        bench_growth(args.data, args.repeats)
    if args.memory:
        bench_memory(args.data)


if __name__ == "__main__":
    main()
