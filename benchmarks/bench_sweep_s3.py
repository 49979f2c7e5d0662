"""A sweep read from S3 (issue 30, item 7): npsummary's reader against s3fs ``find`` + ``cat`` of
the same objects, on moto_server behind a proxy that adds a store's round trip to every request.

Run: python benchmarks/bench_sweep_s3.py [--runs 300 1000] [--latency 0.02] [--repeats 1]
     [--serial] [--data DIR]

Needs moto[server], s3fs and boto3. moto_server and the tests' proxy (tests/support/s3server.py,
in a process of its own, ``--latency`` seconds added per request) run on 127.0.0.1; the proxy
counts every request and the most in flight at once. Workload: each run holds 3 scalar tags x
1,000 steps (``add_scalar``) and a 1,000-value histogram every 100 steps, as two event files
(steps 0-499 and 500-999), 242 KB; the run is written once into --data (cached) and uploaded
under every run's prefix straight to moto (not through the proxy). Contenders, each in a fresh
process that times only its read (imports and interpreter start-up excluded):

* ``npsummary (s3fs)``: ``reader.scalars(url)``, s3fs installed (default 32 requests in flight);
* ``npsummary (boto3)``: the same with s3fs hidden, so the reader goes through boto3 alone;
* ``npsummary storage only (s3fs)``: the reader's storage layer alone (``open_sweep``, then
  every file's bytes), no decoding: what the listing and fetching cost;
* ``s3fs cat, 10``: ``fs.find(prefix)`` then ``fs.cat(paths, batch_size=10)`` (s3fs's own pool
  of 10 connections);
* ``s3fs cat, 32``: the same with 32 in flight (``max_pool_connections=32``);
* ``npsummary, walk`` (``--serial``): the reader as it was before issue 30, one listing per run
  folder and one GET at a time (its object store turned off).

Every read is checked: the reader's scalars count runs x 3,000, and s3fs's bytes add up to the
sweep's. Reports seconds (median of --repeats), requests by method, peak requests in flight, and
the ratio to ``s3fs cat``; the goal is npsummary <= 1.5x ``s3fs cat`` with requests <= objects +
listing pages + a few.
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
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent.parent / "tests" / "support"
sys.path.insert(0, str(SUPPORT))

from s3server import BUCKET, MotoServer, s3_environment  # noqa: E402

STEPS = 1000
TAGS = ("loss", "acc", "lr")


def _write_run(data: Path) -> list[Path]:
    """The template run (two event files), written once."""
    run = data / "run"
    files = sorted(run.glob("*tfevents*")) if run.is_dir() else []
    if len(files) == 2:
        return files
    import numpy as np

    from npsummary import SummaryWriter

    rng = np.random.default_rng(30)
    run.mkdir(parents=True, exist_ok=True)
    for part, steps in ((1, range(0, STEPS // 2)), (2, range(STEPS // 2, STEPS))):
        with SummaryWriter(str(run), filename_suffix=f".{part}", max_queue=10_000) as writer:
            for step in steps:
                for i, tag in enumerate(TAGS):
                    writer.add_scalar(tag, float(np.sin(step * 0.01 + i)), step)
                if step % 100 == 0:
                    writer.add_histogram("weights", rng.normal(0, 1, 1000), step)
    return sorted(run.glob("*tfevents*"))


def _upload(server: MotoServer, files: list[Path], prefix: str, runs: int) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint)
    bodies = [(path.name, path.read_bytes()) for path in files]

    def put(i: int) -> int:
        for name, body in bodies:
            client.put_object(Bucket=BUCKET, Key=f"{prefix}/run{i:05d}/{name}", Body=body)
        return sum(len(body) for _, body in bodies)

    with ThreadPoolExecutor(16) as pool:
        return sum(pool.map(put, range(runs)))


#: What each contender imports before the clock starts, and what it times.
_SETUP = {
    "ours": "from npsummary import reader\nimport s3fs\n",
    "ours-boto3": (
        "import sys\nsys.modules['s3fs'] = None\nfrom npsummary import reader\nimport boto3\n"
    ),
    "walk": (
        "from npsummary import reader\nimport s3fs\n"
        "from npsummary.reader._storage.fsspec_store import FsspecFileSystem\n"
        "FsspecFileSystem.object_store = lambda self, path, options: None\n"
    ),
    "cat": "import s3fs\n",
    "fetch": (
        "import s3fs\nfrom npsummary.reader._io import filesystem_for\n"
        "from npsummary.reader._storage.sweep import open_sweep\n"
    ),
}
_READ = {
    "ours": ("series = reader.scalars(URL)\ncheck = sum(s.values.size for s in series.values())\n"),
    "fetch": (
        "found, files = open_sweep(filesystem_for(URL), URL)\n"
        "check = sum(len(files.open(f).read()) for run in found for f in run.files)\n"
    ),
    "cat": (
        'fs = s3fs.S3FileSystem(config_kwargs={"max_pool_connections": max(10, BATCH)})\n'
        "paths = fs.find(URL)\n"
        "data = fs.cat(paths, batch_size=BATCH)\n"
        "check = sum(len(v) for v in data.values())\n"
    ),
}


def _child(kind: str, url: str, batch: int, env: dict[str, str]) -> tuple[float, int]:
    code = (
        f"{_SETUP[kind]}import json, time\nURL = {url!r}\nBATCH = {batch}\n"
        "start = time.perf_counter()\n"
        f"{_READ.get(kind, _READ['ours'])}"
        "print(json.dumps([time.perf_counter() - start, int(check)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{out.stderr}")
    seconds, check = json.loads(out.stdout.strip().splitlines()[-1])
    return float(seconds), int(check)


def _proxy(upstream: int, latency: float) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            str(SUPPORT / "s3server.py"),
            "--upstream",
            str(upstream),
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}"


def _control(endpoint: str, what: str) -> dict[str, object]:
    request = urllib.request.Request(f"{endpoint}/__proxy__/{what}", method="GET")
    with urllib.request.urlopen(request, timeout=30) as answer:
        result: dict[str, object] = json.loads(answer.read())
        return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, nargs="+", default=[300, 1000])
    p.add_argument("--latency", type=float, default=0.02)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--serial", action="store_true", help="also the walk, one GET at a time")
    p.add_argument(
        "--data", default=os.path.join(tempfile.gettempdir(), "npsummary-bench-sweep-s3")
    )
    args = p.parse_args()
    files = _write_run(Path(args.data))
    run_bytes = sum(f.stat().st_size for f in files)
    print(f"load average at start: {os.getloadavg()}")
    print(f"one run: {len(files)} objects, {run_bytes:,} bytes; latency {args.latency * 1e3:g} ms")
    server = MotoServer()
    proxy, endpoint = _proxy(server.port, args.latency)
    os.environ.update(s3_environment(endpoint))  # uploads go to moto itself, signed alike
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent / "src"), env.get("PYTHONPATH", "")]
    )
    try:
        import boto3

        boto3.client("s3", endpoint_url=server.endpoint).create_bucket(Bucket=BUCKET)
        contenders = [("npsummary (s3fs)", "ours", 0), ("npsummary (boto3)", "ours-boto3", 0)]
        contenders.append(("npsummary storage only (s3fs)", "fetch", 0))
        contenders += [("s3fs cat, 10", "cat", 10), ("s3fs cat, 32", "cat", 32)]
        if args.serial:
            contenders.append(("npsummary, walk (before)", "walk", 0))
        rows = []
        for runs in args.runs:
            prefix = f"sweep/{uuid.uuid4().hex}/{runs}"
            start = time.perf_counter()
            total = _upload(server, files, prefix, runs)
            print(f"uploaded {runs} runs ({total:,} bytes) in {time.perf_counter() - start:.1f} s")
            url = f"s3://{BUCKET}/{prefix}"
            expected = {"cat": total, "fetch": total}
            for label, kind, batch in contenders:
                times = []
                for _ in range(args.repeats):
                    _control(endpoint, "reset")
                    seconds, check = _child(kind, url, batch, env)
                    stats = _control(endpoint, "stats")
                    want = expected.get(kind, runs * len(TAGS) * STEPS)
                    if check != want:
                        raise SystemExit(f"{label}: read {check}, expected {want}")
                    times.append(seconds)
                rows.append((runs, label, statistics.median(times), stats))
                print(f"  {label:30s} {statistics.median(times):8.2f} s  {stats}", flush=True)
        print(f"load average at end: {os.getloadavg()}")
        print()
        print(
            "| runs | objects | reader | seconds | requests | max in flight | / s3fs cat 10 |"
            " / s3fs cat 32 |"
        )
        print("|---:|---:|---|---:|---:|---:|---:|---:|")
        for runs in args.runs:
            mine = [r for r in rows if r[0] == runs]
            base = {label: seconds for _, label, seconds, _ in mine}
            for _, label, seconds, stats in mine:
                ten, thirty_two = seconds / base["s3fs cat, 10"], seconds / base["s3fs cat, 32"]
                print(
                    f"| {runs:,} | {runs * len(files):,} | {label} | {seconds:.2f} |"
                    f" {stats['requests']:,} | {stats['max_in_flight']} |"
                    f" {ten:.2f} | {thirty_two:.2f} |"
                )
    finally:
        os.killpg(proxy.pid, 9)
        proxy.wait(timeout=30)
        server.stop()


if __name__ == "__main__":
    main()
