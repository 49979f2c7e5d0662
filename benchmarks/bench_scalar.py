"""Per-call cost of logging a scalar, throughput to disk, and import time — side by side.

Run: python benchmarks/bench_scalar.py [--calls 20000] [--repeats 5]

Compares npsummary's SummaryWriter.add_scalar and tf.summary-style scalar() with tensorboardX's
add_scalar (when installed) in the same process, and `import npsummary` with `import numpy` in
fresh interpreters. Every timed run is checked: the file is read back and must hold every value.
Reports medians over repeats and ratios; the machine is shared, so single numbers are noise.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import npsummary
from npsummary._format.record import iter_records
from npsummary.proto import Event


def count_scalars(logdir: str, tag: str) -> int:
    total = 0
    for path in glob.glob(os.path.join(logdir, "**", "*tfevents*"), recursive=True):
        with open(path, "rb") as f:
            for payload in iter_records(f.read()):
                event = Event.FromString(payload)
                total += sum(1 for v in event.summary.value if v.tag == tag)
    return total


def time_calls(
    setup: Callable[[str], tuple[Callable[[int], None], Callable[[], None]]],
    calls: int,
    repeats: int,
    check_tag: str,
) -> tuple[float, float]:
    """Return median (µs per call excluding close, µs per call including close)."""
    per_call, total = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as logdir:
            log, close = setup(logdir)
            start = time.perf_counter()
            for step in range(calls):
                log(step)
            mid = time.perf_counter()
            close()
            end = time.perf_counter()
            found = count_scalars(logdir, check_tag)
            if found != calls:
                raise SystemExit(f"check failed: {found} of {calls} scalars in the file")
            per_call.append((mid - start) / calls * 1e6)
            total.append((end - start) / calls * 1e6)
    return statistics.median(per_call), statistics.median(total)


def npsummary_writer(logdir: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    writer = npsummary.SummaryWriter(logdir)
    return (lambda step: writer.add_scalar("loss", step * 0.001, step)), writer.close


def npsummary_tf2(logdir: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    writer = npsummary.create_file_writer(logdir)
    writer.set_as_default()
    return (lambda step: npsummary.scalar("loss", step * 0.001, step=step)), writer.close


def tensorboardx_writer(logdir: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    from tensorboardX import SummaryWriter

    writer = SummaryWriter(logdir)
    return (lambda step: writer.add_scalar("loss", step * 0.001, step)), writer.close


def import_times(repeats: int) -> tuple[float, float, float]:
    """Medians in ms of `import numpy`, then `import npsummary` on top of it, then
    `from npsummary import SummaryWriter` (what a tensorboardX-style script loads), in fresh
    interpreters (all timed in the same process, so numpy's noisy import time cancels out).

    Bytecode caching is forced on (this machine sets PYTHONDONTWRITEBYTECODE, which would make
    every run recompile npsummary from source while numpy's installed .pyc files are used), and
    one warm-up run writes the cache: a pip-installed package has its .pyc files from install.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = (
        "import time; t0=time.perf_counter(); import numpy; t1=time.perf_counter(); "
        "import npsummary; t2=time.perf_counter(); from npsummary import SummaryWriter; "
        "t3=time.perf_counter(); print(t1-t0, t2-t1, t3-t2)"
    )
    numpy_ms, ours_ms, writer_ms = [], [], []
    for attempt in range(repeats + 1):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        )
        if attempt:
            first, second, third = (float(x) * 1e3 for x in out.stdout.split())
            numpy_ms.append(first)
            ours_ms.append(second)
            writer_ms.append(second + third)
    return statistics.median(numpy_ms), statistics.median(ours_ms), statistics.median(writer_ms)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rows = [
        ("npsummary SummaryWriter.add_scalar", npsummary_writer),
        ("npsummary scalar() (tf.summary style)", npsummary_tf2),
    ]
    try:
        import tensorboardX  # noqa: F401

        rows.append(("tensorboardX SummaryWriter.add_scalar", tensorboardx_writer))
    except ImportError:
        print("tensorboardX not installed: anchor skipped")

    results = {}
    print(f"{args.calls} calls x {args.repeats} repeats, medians; 'with close' = until on disk")
    print(f"{'writer':42s} {'µs/call':>9s} {'with close':>11s}")
    for name, setup in rows:
        per_call, total = time_calls(setup, args.calls, args.repeats, "loss")
        results[name] = (per_call, total)
        print(f"{name:42s} {per_call:9.2f} {total:11.2f}")
    anchor = results.get("tensorboardX SummaryWriter.add_scalar")
    if anchor:
        for name in list(results)[:2]:
            print(
                f"ratio {name} / tensorboardX: per call {results[name][0] / anchor[0]:.3f}, "
                f"with close {results[name][1] / anchor[1]:.3f}"
            )

    numpy_ms, ours_ms, writer_ms = import_times(15)
    print(
        f"import numpy {numpy_ms:.1f} ms; import npsummary after it {ours_ms:.2f} ms "
        f"({ours_ms / numpy_ms:.4f}x); with `from npsummary import SummaryWriter` "
        f"{writer_ms:.1f} ms ({writer_ms / numpy_ms:.3f}x) (medians of 15 fresh interpreters)"
    )
    heavy = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, npsummary; from npsummary import SummaryWriter; "
            "print(sorted(m for m in ('torch','tensorflow','PIL',"
            "'matplotlib','fsspec','crc32c') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"heavy modules imported by `import npsummary`: {heavy}")


if __name__ == "__main__":
    main()
