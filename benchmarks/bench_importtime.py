"""What importing npsummary costs, module by module, and side by side across source trees.

Run:  python benchmarks/bench_importtime.py                       # this tree, per module
      python benchmarks/bench_importtime.py --trees /tmp/old/src src   # trees side by side
      python benchmarks/bench_importtime.py --statement "import npsummary.v1"

Every figure comes from fresh interpreters that import NumPy first (it is not counted), with
bytecode caching forced on as for an installed package (this machine sets
PYTHONDONTWRITEBYTECODE) and one warm-up run per tree that writes the caches.

* Per module (one tree): ``python -X importtime``, median over the runs of each module's own
  time ("self", without the modules it imports), in µs, indented as imported; garbage
  collection is disabled in the child so that a collection's pause is not charged to whichever
  module happened to trigger it.
* Side by side (``--trees``): the trees' interpreters alternate, so that a noisy neighbour slows
  them alike; wall and CPU (process) time of the statement in ms, median and the mean of the
  faster half of the runs, and how many modules it loaded. On a shared machine the CPU time of
  the faster half is the steadiest of these.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = "import npsummary; from npsummary import SummaryWriter"
MARK = "--npsummary-bench-mark--"


def _env(tree: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = tree
    return env


def per_module(tree: str, statement: str, runs: int) -> None:
    code = f"import numpy, gc, sys\ngc.disable()\nsys.stderr.write({MARK!r} + '\\n')\n{statement}"
    own: dict[str, list[int]] = {}
    depth: dict[str, int] = {}
    totals = []
    for attempt in range(runs + 1):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env=_env(tree),
        ).stderr
        if not attempt:
            continue
        total = 0
        for line in err.split(MARK + "\n", 1)[1].splitlines():
            if not line.startswith("import time:") or "[us]" in line:
                continue
            self_us, _, name = line[len("import time:") :].split("|")
            depth.setdefault(name.strip(), len(name) - len(name.lstrip()))
            own.setdefault(name.strip(), []).append(int(self_us))
            total += int(self_us)
        totals.append(total)
    print(f"{statement}  ({tree}, {runs} runs; µs, median of each module's own time)")
    for name, times in own.items():
        print(f"{statistics.median(times):8.0f}  {' ' * (depth[name] - 1)}{name}")
    print(f"{statistics.median(totals):8.0f}  total of {len(own)} modules (median of the sums)")
    print(
        "Modules imported through importlib.import_module (npsummary's lazy names) are not "
        "listed by -X importtime; time `import <module>` directly to see them."
    )


def side_by_side(trees: list[str], statement: str, runs: int) -> None:
    code = (
        "import sys, time; import numpy; n=len(sys.modules); "
        "c0=time.process_time(); w0=time.perf_counter(); "
        f"{statement}; "
        "w1=time.perf_counter(); c1=time.process_time(); "
        "print(w1-w0, c1-c0, len(sys.modules)-n)"
    )
    wall: dict[str, list[float]] = {t: [] for t in trees}
    cpu: dict[str, list[float]] = {t: [] for t in trees}
    loaded: dict[str, int] = {}
    for attempt in range(runs + 1):
        for tree in trees:
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=_env(tree)
            )
            if done.returncode:
                raise SystemExit(f"{tree}: {statement!r} failed:\n{done.stderr}")
            out = done.stdout.split()
            if attempt:
                wall[tree].append(float(out[0]) * 1e3)
                cpu[tree].append(float(out[1]) * 1e3)
                loaded[tree] = int(out[2])

    def faster_half(values: list[float]) -> float:
        values = sorted(values)
        return statistics.mean(values[: max(1, len(values) // 2)])

    print(f"{statement}  ({runs} runs per tree, alternating; ms; load {os.getloadavg()[0]:.1f})")
    print(f"{'tree':40s} {'wall med':>9s} {'fast half':>9s} {'cpu med':>9s} {'fast half':>9s}")
    for tree in trees:
        print(
            f"{tree[-40:]:40s} {statistics.median(wall[tree]):9.2f} {faster_half(wall[tree]):9.2f}"
            f" {statistics.median(cpu[tree]):9.2f} {faster_half(cpu[tree]):9.2f}"
            f"  {loaded[tree]} modules"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statement", default=DEFAULT, help=f"what to time (default: {DEFAULT})")
    parser.add_argument("--trees", nargs="+", help="source directories (src/) to compare")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    if args.trees:
        side_by_side(args.trees, args.statement, args.runs)
    else:
        per_module(str(HERE.parent / "src"), args.statement, args.runs)


if __name__ == "__main__":
    main()
