"""Every benchmark in one command: one table of ratios against the anchors, compared with the
committed baseline.

Run:  python benchmarks/run.py            # quick mode (a few minutes on the shared 2-core VM)
      python benchmarks/run.py --full     # the long versions (10^6 scalars for the reader, ...)
      python benchmarks/run.py --only scalar,import
      python benchmarks/run.py --write-baseline   # store this run as benchmarks/baseline.json

Every figure is a ratio of two timings (or sizes) taken in the same process, alternating, so
that a noisy neighbour slows both alike; times are medians over repeats. Lower is better for
every ratio (ours / anchor). Every timed result is checked while timing: scalars are read back
from the file, PNGs decoded and compared with the input pixels, histogram counts compared with a
reference, the reader's result compared with tbparse's value by value, GIF frames compared with
Pillow's decoder. A ratio more than 15% worse than the baseline is flagged, and so is a goal of
issue 22 that is not met (a ratio under half its goal is not flagged for drifting); the exit
status is 1 if anything was flagged.

The machine's load average is printed at the start and the end: on a shared VM the ratios move
with it, so compare runs at similar load.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

BASELINE = HERE / "baseline.json"
TOLERANCE = 1.15


class Row:
    """One ratio: ``ours / anchor`` (lower is better), with the goal of issue 22 if it has one."""

    def __init__(
        self, key: str, ours: float, anchor: float, unit: str, goal: float | None, note: str = ""
    ) -> None:
        self.key, self.ours, self.anchor, self.unit = key, ours, anchor, unit
        self.goal, self.note = goal, note
        self.ratio = ours / anchor


def _median_alternating(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


# -- scalars -------------------------------------------------------------------------------------


def bench_scalar(full: bool) -> list[Row]:
    import bench_scalar as bs

    calls, repeats = (20000, 9) if full else (10000, 7)
    setups = {
        "add_scalar": bs.npsummary_writer,
        "scalar()": bs.npsummary_tf2,
        "tbx": bs.tensorboardx_writer,
    }
    per_call: dict[str, list[float]] = {name: [] for name in setups}
    for _ in range(repeats):
        for name, setup in setups.items():  # alternating: the load hits all three alike
            with tempfile.TemporaryDirectory() as logdir:
                log, close = setup(logdir)
                start = time.perf_counter()
                for step in range(calls):
                    log(step)
                per_call[name].append((time.perf_counter() - start) / calls * 1e6)
                close()
                found = bs.count_scalars(logdir, "loss")
                if found != calls:
                    raise SystemExit(f"check failed: {name} wrote {found} of {calls} scalars")
    us = {name: statistics.median(v) for name, v in per_call.items()}
    return [
        Row("scalar.add_scalar/tbx", us["add_scalar"], us["tbx"], "µs/call", 0.04),
        Row("scalar.scalar()/tbx", us["scalar()"], us["tbx"], "µs/call", 0.05),
    ]


# -- import time ---------------------------------------------------------------------------------


def bench_import(full: bool) -> list[Row]:
    runs = 21 if full else 15
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    # After the imports, the first writer of a script: what loads on first use (the CRC
    # extension, the file, the flusher thread) is paid here, so moving import time into the first
    # call shows. The logdir comes from argv, to keep tempfile out of the timed interpreter.
    code = (
        "import time; t0=time.perf_counter(); import numpy; t1=time.perf_counter(); "
        "import npsummary; t2=time.perf_counter(); from npsummary import SummaryWriter; "
        "t3=time.perf_counter(); import sys; "
        "heavy=[m for m in ('torch','tensorflow','PIL','matplotlib','pandas','pyarrow','fsspec',"
        "'keras','jax','google.protobuf','crc32c') if m in sys.modules]; "
        "t4=time.perf_counter(); w=SummaryWriter(sys.argv[1]); w.add_scalar('loss', 0.5, 1); "
        "w.close(); t5=time.perf_counter(); "
        "print(t1-t0, t2-t1, t3-t2, t5-t4, ','.join(heavy) or '-')"
    )
    numpy_ms, package_ms, writer_ms, first_ms = [], [], [], []
    with tempfile.TemporaryDirectory() as logdir:
        for attempt in range(runs + 1):  # the first run writes the bytecode caches
            out = subprocess.run(
                [sys.executable, "-c", code, logdir],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout.split()
            if out[4] != "-":
                raise SystemExit(f"check failed: importing npsummary loaded {out[4]}")
            if attempt:
                numpy_ms.append(float(out[0]) * 1e3)
                package_ms.append(float(out[1]) * 1e3)
                writer_ms.append((float(out[1]) + float(out[2])) * 1e3)
                first_ms.append((float(out[1]) + float(out[2]) + float(out[3])) * 1e3)
        written = len(os.listdir(logdir))
    if written != runs + 1:
        raise SystemExit(f"check failed: {written} event files for {runs + 1} writers")
    np_ms = statistics.median(numpy_ms)
    return [
        Row("import.npsummary/numpy", statistics.median(package_ms), np_ms, "ms", 0.05),
        Row(
            "import.SummaryWriter/numpy",
            statistics.median(writer_ms),
            np_ms,
            "ms",
            None,
            "import npsummary + from npsummary import SummaryWriter",
        ),
        Row(
            "import.first_scalar/numpy",
            statistics.median(first_ms),
            np_ms,
            "ms",
            None,
            "the same + SummaryWriter(logdir), one add_scalar, close",
        ),
    ]


# -- reader --------------------------------------------------------------------------------------


def _read_and_crc(logdir: str) -> int:
    """The floor of any reader: read every event file in chunks, find the records and check
    both CRCs of each (the reader's own framing, without decoding anything)."""
    from npsummary import reader
    from npsummary.reader._framing import ReadStats, read_batches

    fs = reader.LocalFileSystem()
    stats = ReadStats()
    records = 0
    for root, _, files in os.walk(logdir):
        for name in sorted(files):
            if "tfevents" in name:
                for batch in read_batches(fs, os.path.join(root, name), stats):
                    records += int(batch.starts.size)
    return records


def bench_reader(full: bool) -> list[Row]:
    import bench_reader as br

    events = 1_000_000 if full else 100_000
    data = os.path.join(tempfile.gettempdir(), "npsummary-bench-reader")
    logdir = br.make_scalars(data, events)
    ours = br.ours_scalars(logdir)
    repeats = 3
    before, _ = br.timed(br.ours_scalars, logdir, repeats)
    t_tbparse, theirs = br.timed(br.tbparse_scalars, logdir, 1)
    after, _ = br.timed(br.ours_scalars, logdir, repeats)
    br._check("tbparse", ours, theirs)
    near = statistics.median([before, after])
    crc = statistics.median(
        _median_alternating({"crc": lambda: _read_and_crc(logdir)}, repeats).values()
    )
    rows = [
        Row(f"reader.{events:.0e}/tbparse", near, t_tbparse, "s", 1 / 50, "goal: 50x faster"),
        Row(f"reader.{events:.0e}/read+crc", near, crc, "s", None, "ours / reading + CRCs"),
    ]
    # torch's add_scalar(new_style=True) tensors against simple_value scalars: same count, same
    # tags; ~1 when both take the bulk path (it was ~16 when new_style went through protobuf).
    styles = {name: _style_logdir(data, 100_000, name) for name in ("new_style", "simple_value")}
    t = _median_alternating(
        {name: (lambda d=logdir: _count_scalars(d, 100_000)) for name, logdir in styles.items()},
        repeats,
    )
    rows.append(Row("reader.new_style/simple_value", t["new_style"], t["simple_value"], "s", None))
    return rows


def _style_logdir(root: str, events: int, style: str) -> str:
    """``events`` scalars over 50 tags written by SummaryWriter in ``style``; cached."""
    import npsummary

    logdir = os.path.join(root, f"{style}-{events}")
    if not os.path.isdir(logdir):
        with npsummary.SummaryWriter(logdir + ".tmp", max_queue=1000) as writer:
            for i in range(events):
                writer.add_scalar(f"t{i % 50}", i * 0.001, i // 50, new_style=style == "new_style")
        os.rename(logdir + ".tmp", logdir)
    return logdir


def _count_scalars(logdir: str, expected: int) -> None:
    from npsummary import reader

    got = sum(series.values.size for series in reader.scalars(logdir).values())
    if got != expected:
        raise SystemExit(f"check failed: read {got} of {expected} scalars from {logdir}")


# -- PNG -----------------------------------------------------------------------------------------


def bench_png(full: bool) -> list[Row]:
    import bench_png as bp

    from npsummary._format.png import encode_png

    encoders = {"ours": lambda image: encode_png(image), "pillow": bp.pillow_png}
    rows = []
    for n in (256, 1024):
        repeat = {256: 61, 1024: 15}[n] if full else {256: 21, 1024: 5}[n]
        for kind, image in (("noise", bp.noise_image(n)), ("smooth", bp.smooth_image(n))):
            res = bp.measure(encoders, image, repeat)  # decodes every output and compares
            (t_ours, b_ours), (t_pil, b_pil) = res["ours"], res["pillow"]
            rows.append(Row(f"png.time.{kind}{n}", t_ours * 1e3, t_pil * 1e3, "ms", 1.0))
            rows.append(Row(f"png.size.{kind}{n}", b_ours, b_pil, "bytes", 1.0))
    # Issue 29: smooth pictures nobody tuned the encoder for (bench_png.gradient_images, seed 0).
    for name, image in bp.gradient_images(0):
        small = image.size <= 2**18
        repeat = (61 if small else 21) if full else (21 if small else 7)
        res = bp.measure(encoders, image, repeat)
        (t_ours, b_ours), (t_pil, b_pil) = res["ours"], res["pillow"]
        key = name.replace(" ", "_")
        rows.append(Row(f"png.time.{key}", t_ours * 1e3, t_pil * 1e3, "ms", 1.0))
        rows.append(Row(f"png.size.{key}", b_ours, b_pil, "bytes", 1.0))
    return rows


# -- histograms ----------------------------------------------------------------------------------


def bench_histogram(full: bool) -> list[Row]:
    """Histograms of 10^7 float32 (the size the goals are stated for; at 10^6 np.sum runs from
    cache). What each row times:

    * ``tf2``: ``tf2_buckets`` (tf.summary.histogram, 30 buckets) against one ``np.sum`` pass.
    * ``tf1``: the TF1 bucket pass with chunked float64 sums (``tf1_histogram(x)``): the core of
      both ``SummaryWriter.add_histogram(bins='tensorflow')`` and ``npsummary.v1.histogram``,
      against ``np.bincount`` of a precomputed bucket index, the floor of any bucketing.
    * ``v1exact``: ``tf1_histogram(x, exact_sum=True)``, what ``npsummary.v1.histogram`` runs
      (TF's sequential double sums, bit for bit), against the same bincount.
    * ``tbxbuckets``: ``binned_histogram(x, 'tensorflow')``, the buckets ``SummaryWriter.
      add_histogram`` writes by default (tensorboardX's ``default_bins``), against
      ``np.histogram`` over the same 1549 edges (how tensorboardX computes them).
    * ``add_histogram``: ``SummaryWriter.add_histogram`` end to end (queued, not flushed)
      against tensorboardX 2.6.5's, each writer on its own temporary logdir.
    """
    import bench_histogram as bh

    from npsummary import SummaryWriter
    from npsummary import _histogram as H
    from npsummary._histogram.tbx import binned_histogram, tensorboardx_default_edges

    n = 10**7
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    # The floor of any bucketing: np.bincount of a precomputed bucket index of the same values.
    index = np.searchsorted(np.linspace(-5, 5, 1551), x).astype(np.intp)
    edges = np.array(tensorboardx_default_edges())
    repeats = 11 if full else 5
    res = bh.round_robin(
        {
            "sum": lambda: np.sum(x),
            "bincount": lambda: np.bincount(index, minlength=1552),
            "tf2": lambda: H.tf2_buckets(x),
            "tf1": lambda: H.tf1_histogram(x),
            "v1exact": lambda: H.tf1_histogram(x, exact_sum=True),
            "tbxbuckets": lambda: binned_histogram(x, "tensorflow"),
            "np.histogram": lambda: np.histogram(x, edges),
        },
        repeats,
    )
    t = {name: v[0] * 1e3 for name, v in res.items()}
    if not np.array_equal(res["tf2"][1][0][:, 2], bh.tf2_reference_counts(x)):
        raise SystemExit("check failed: tf2 bucket counts")
    h1, ref1 = res["tf1"][1], bh.tf1_reference_counts(x)
    if not (h1.num == n and np.array_equal(h1.bucket[h1.bucket > 0], ref1[ref1 > 0])):
        raise SystemExit("check failed: tf1 bucket counts")
    if not np.array_equal(res["v1exact"][1].bucket, h1.bucket):
        raise SystemExit("check failed: v1 (exact sums) bucket counts")
    counts = res["np.histogram"][1][0]
    hb = res["tbxbuckets"][1]
    nz = np.flatnonzero(counts)  # tensorboardX's trim: one empty bucket left of the first
    first, last = int(nz[0]), int(nz[-1])
    want = counts[max(first - 1, 0) : last + 1] if first else np.r_[0, counts[: last + 1]]
    if not np.array_equal(hb.bucket, want) or hb.bucket_limit[-1] != edges[last + 1]:
        raise SystemExit("check failed: tensorboardX buckets against np.histogram")
    rows = [
        Row(f"histogram.tf2/np.sum.{n:.0e}", t["tf2"], t["sum"], "ms", 10.0),
        Row(f"histogram.tf1/np.bincount.{n:.0e}", t["tf1"], t["bincount"], "ms", 1.5),
        Row(
            f"histogram.v1/np.bincount.{n:.0e}",
            t["v1exact"],
            t["bincount"],
            "ms",
            None,
            "tf1 with TF's exact sums, as npsummary.v1.histogram",
        ),
        Row(
            f"histogram.tbx/np.histogram.{n:.0e}",
            t["tbxbuckets"],
            t["np.histogram"],
            "ms",
            None,
            "bins='tensorflow'",
        ),
    ]
    try:
        from tensorboardX import SummaryWriter as TbxWriter
    except ImportError:
        return rows
    with tempfile.TemporaryDirectory() as ours_dir, tempfile.TemporaryDirectory() as tbx_dir:
        ours, theirs = SummaryWriter(ours_dir), TbxWriter(tbx_dir)
        step = iter(range(10**6))
        w = _median_alternating(
            {
                "ours": lambda: ours.add_histogram("h", x, next(step)),
                "tbx": lambda: theirs.add_histogram("h", x, next(step)),
            },
            repeats,
        )
        ours.close()
        theirs.close()
        written = _histograms_written(ours_dir, "h") + _histograms_written(tbx_dir, "h")
    if len(written) != 2 * repeats or any(b != list(hb.bucket) for b in written):
        raise SystemExit("check failed: add_histogram buckets (ours or tensorboardX's)")
    rows.append(
        Row(
            f"histogram.add_histogram/tbx.{n:.0e}",
            w["ours"] * 1e3,
            w["tbx"] * 1e3,
            "ms",
            None,
            "SummaryWriter.add_histogram vs tensorboardX 2.6.5",
        )
    )
    return rows


def _histograms_written(logdir: str, tag: str) -> list[list[float]]:
    """The bucket lists of every histogram of ``tag`` in the event files under ``logdir``."""
    from npsummary._format.record import iter_records
    from npsummary.proto import Event

    found = []
    for path in sorted(Path(logdir).rglob("*tfevents*")):
        for payload in iter_records(path.read_bytes()):
            for value in Event.FromString(payload).summary.value:
                if value.tag == tag and value.HasField("histo"):
                    found.append(list(value.histo.bucket))
    return found


# -- video and GIF decoding ----------------------------------------------------------------------


def bench_video(full: bool) -> list[Row]:
    import bench_video as bv

    name, theirs = bv.anchor()
    clips = {"sprites": bv.sprites_clip(16, 64), "smooth": bv.smooth_clip(16, 64)}
    rows = []
    for clip_name, clip in clips.items():
        outputs: dict[str, bytes] = {}
        fns = {"ours": bv.ours, "anchor": theirs}
        t = _median_alternating(
            {
                label: (lambda f=fn, c=clip, o=outputs, k=label: o.__setitem__(k, f(c)))
                for label, fn in fns.items()
            },
            7 if full else 5,
        )
        frames = bv.decode(outputs["ours"])
        if frames.shape[0] != clip.shape[1]:
            raise SystemExit(f"check failed: video {clip_name} decodes to {frames.shape[0]} frames")
        rows.append(
            Row(f"video.time.{clip_name}", t["ours"] * 1e3, t["anchor"] * 1e3, "ms", None, name)
        )
    return rows


def bench_gifread(full: bool) -> list[Row]:
    import bench_gifread as bg

    from npsummary._format.gif import encode_gif
    from npsummary._format.gifread import decode_gif

    rows = []
    for name, frames in bg.clips().items():
        data = encode_gif(frames, 5)
        got: list[Any] = [None, None]
        t = _median_alternating(
            {
                "ours": lambda d=data, g=got: g.__setitem__(0, decode_gif(d)[0]),
                "pillow": lambda d=data, g=got: g.__setitem__(1, bg.pillow_frames(d)),
            },
            9 if full else 5,
        )
        if not np.array_equal(got[0][..., :3], got[1]):
            raise SystemExit(f"check failed: GIF {name} differs from Pillow's frames")
        rows.append(
            Row(f"gifread.{name.replace(' ', '_')}", t["ours"] * 1e3, t["pillow"] * 1e3, "ms", None)
        )
    return rows


BENCHMARKS: dict[str, Callable[[bool], list[Row]]] = {
    "scalar": bench_scalar,
    "import": bench_import,
    "reader": bench_reader,
    "png": bench_png,
    "histogram": bench_histogram,
    "video": bench_video,
    "gifread": bench_gifread,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="the long versions")
    parser.add_argument("--only", default="", help="comma-separated: " + ",".join(BENCHMARKS))
    parser.add_argument("--write-baseline", action="store_true", help=f"write {BASELINE.name}")
    parser.add_argument("--json", default="", help="also write this run's rows to a JSON file")
    args = parser.parse_args()
    chosen = [b for b in args.only.split(",") if b] or list(BENCHMARKS)
    unknown = set(chosen) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")

    baseline = json.loads(BASELINE.read_text())["ratios"] if BASELINE.exists() else {}
    mode = "full" if args.full else "quick"
    print(f"benchmarks/run.py ({mode}); load average at start: {os.getloadavg()}")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    start = time.perf_counter()
    rows: list[Row] = []
    for name in chosen:
        began = time.perf_counter()
        try:
            got = BENCHMARKS[name](args.full)
        except ImportError as exc:
            print(f"  {name}: skipped ({exc})")
            continue
        rows += got
        print(f"  {name}: {time.perf_counter() - began:.0f} s", flush=True)

    flagged = 0
    header = (
        f"{'measure':34s} {'ours':>10s} {'anchor':>10s} {'unit':>7s} {'ratio':>8s} "
        f"{'goal':>7s} {'baseline':>9s}  flags"
    )
    print("\n" + header)
    print("-" * len(header))
    for row in rows:
        flags = []
        if row.goal is not None and row.ratio > row.goal:
            flags.append("GOAL MISSED")
        base = baseline.get(row.key)
        # A ratio still under half its goal is not flagged for drifting (0.0012 -> 0.0014 is
        # noise, not a regression worth a look).
        drifting = row.goal is None or row.ratio > row.goal / 2
        if base is not None and row.ratio > base * TOLERANCE and drifting:
            flags.append(f"WORSE by {row.ratio / base - 1:.0%}")
        flagged += bool(flags)
        goal = "" if row.goal is None else f"{row.goal:.3g}"
        print(
            f"{row.key:34s} {row.ours:10.4g} {row.anchor:10.4g} {row.unit:>7s} {row.ratio:8.4f} "
            f"{goal:>7s} {'' if base is None else f'{base:.4f}':>9s}  {' '.join(flags)}"
            + (f"  ({row.note})" if row.note else "")
        )
    print(
        f"\n{len(rows)} ratios in {time.perf_counter() - start:.0f} s; {flagged} flagged; "
        f"load average at end: {os.getloadavg()}"
    )
    result = {
        "mode": mode,
        "loadavg": os.getloadavg(),
        "ratios": {row.key: round(row.ratio, 5) for row in rows},
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.write_baseline:
        merged = {**baseline, **result["ratios"]}
        BASELINE.write_text(json.dumps({**result, "ratios": merged}, indent=1) + "\n")
        print(f"wrote {BASELINE}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
