"""Bytes uploaded and wall time of a run logged to S3: npsummary's segments against
tensorboardX's S3 writer, side by side, across run lengths.

Run: python benchmarks/bench_remote.py [--lengths 1000 10000 100000] [--flush-every 1000]

Needs moto[server], s3fs, boto3 and tensorboardX. Starts moto_server on 127.0.0.1 behind the
tests' counting proxy (tests/support/s3server.py), so "bytes uploaded" is what each client sent in
PUT/POST bodies. Workload: N scalars (one tag), ``flush()`` every ``--flush-every`` events, as a
periodic flush does in a long run (npsummary's flush_secs, tensorboardX's flush_secs). Each run
is checked after timing: the bucket must hold every one of the N scalars, exactly once.
Reports uploaded / event bytes (event bytes = the framed records of the run, without headers)
and seconds per 1e5 scalars; linear cost keeps both flat as N grows.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from npsummary._format.record import iter_records
from npsummary.proto import Event
from s3server import BUCKET, list_objects, s3_stack

TAG = "loss"


def _check(endpoint: str, prefix: str, n: int) -> int:
    """Event bytes of the stored run (framed scalar records); exit if any scalar is missing."""
    steps: list[int] = []
    event_bytes = 0
    for _, data in sorted(list_objects(endpoint, prefix + "/").items()):
        for payload in iter_records(data):
            event = Event.FromString(payload)
            if any(v.tag == TAG for v in event.summary.value):
                steps.append(event.step)
                event_bytes += len(payload) + 16
    if steps != list(range(n)):
        raise SystemExit(f"check failed for {prefix}: {len(steps)} scalars of {n}, or out of order")
    return event_bytes


def _ours(url: str, n: int, flush_every: int) -> None:
    from npsummary import SummaryWriter

    writer = SummaryWriter(url, flush_secs=3600)
    for step in range(n):
        writer.add_scalar(TAG, step * 0.001, step)
        if step % flush_every == flush_every - 1:
            writer.flush()
    writer.close()


def _tensorboardx(url: str, n: int, flush_every: int) -> None:
    import tensorboardX

    writer = tensorboardX.SummaryWriter(url, flush_secs=3600)
    for step in range(n):
        writer.add_scalar(TAG, step * 0.001, step)
        if step % flush_every == flush_every - 1:
            writer.flush()
    writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lengths", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--flush-every", type=int, default=1000)
    args = parser.parse_args()
    rows = []
    with s3_stack() as (server, proxy):
        for name, run in (("npsummary", _ours), ("tensorboardX", _tensorboardx)):
            run(f"s3://{BUCKET}/warmup/{name}", 10, 5)  # imports and client setup, not timed
        for n in args.lengths:
            for name, run in (("npsummary", _ours), ("tensorboardX", _tensorboardx)):
                prefix = f"bench/{name}-{n}-{uuid.uuid4().hex[:8]}"
                proxy.reset_counts()
                start = time.perf_counter()
                run(f"s3://{BUCKET}/{prefix}", n, args.flush_every)
                seconds = time.perf_counter() - start
                uploaded = proxy.uploaded_bytes()
                puts = proxy.requests
                event_bytes = _check(server.endpoint, prefix, n)
                rows.append((name, n, uploaded, event_bytes, puts, seconds))
                print(
                    f"{name:13s} n={n:>7d} uploaded={uploaded:>12,d} B  events={event_bytes:>10,d}"
                    f" B  ratio={uploaded / event_bytes:8.3f}  requests={puts:>5d}"
                    f"  time={seconds:7.2f} s  per 1e5={seconds * 1e5 / n:8.2f} s",
                    flush=True,
                )
    print()
    print(
        "| writer | scalars | bytes uploaded | event bytes | uploaded / events | write requests "
        "| wall time (s) | s per 1e5 scalars |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, n, uploaded, event_bytes, puts, seconds in rows:
        print(
            f"| {name} | {n:,} | {uploaded:,} | {event_bytes:,} | {uploaded / event_bytes:.3f} "
            f"| {puts} | {seconds:.2f} | {seconds * 1e5 / n:.2f} |"
        )


if __name__ == "__main__":
    main()
