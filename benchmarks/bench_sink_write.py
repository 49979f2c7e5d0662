"""What FileSink.write's reliability promises cost per call, measured side by side.

Run: python benchmarks/bench_sink_write.py [--calls 20000] [--repeats 9]

Times, alternating within each repeat (medians, ns per call): the whole ``FileSink.write`` of a
40-byte record (no background write during the loop: huge ``max_queue`` and ``flush_secs``),
the bare work it must do (append the record and count its bytes), and the two promises priced
alone: the re-entrancy busy mark (four accesses to a ``threading.local``: set before the lock,
cleared after it, the deferred-signal check) and taking and releasing the lock under which the
closed check and the append happen (so a racing ``close()`` can never lose a record). Every
repeat checks that all records were queued.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

from npsummary import FileSink
from npsummary._sinks.flusher import busy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    n = args.calls
    sink = FileSink(tempfile.mkdtemp(), max_queue=10**9, flush_secs=1e6)
    state = sink._state
    payload = b"x" * 40
    lock = state.lock

    def write() -> None:
        w = sink.write
        for _ in range(n):
            w(payload)

    def bare() -> None:
        for _ in range(n):
            state.pending.append(payload)
            state.pending_bytes += len(payload)

    def busy_mark() -> None:
        b = busy
        for _ in range(n):
            if b.depth:
                raise AssertionError
            b.depth = 1
            b.depth = 0
            if b.deferred_signal is not None:
                raise AssertionError

    def locked() -> None:
        for _ in range(n):
            with lock:
                pass

    cases: dict[str, Callable[[], None]] = {
        "FileSink.write": write,
        "append + count only": bare,
        "busy mark (4 thread-local accesses)": busy_mark,
        "lock acquire + release": locked,
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - start) / n * 1e9)
            if name in ("FileSink.write", "append + count only") and len(state.pending) != n:
                raise SystemExit(f"check failed: {len(state.pending)} of {n} records queued")
            state.pending.clear()
            state.pending_bytes = 0
    print(f"load average {os.getloadavg()}; ns per call, medians of {args.repeats}")
    for name, values in times.items():
        print(f"  {name:38s} {statistics.median(values):7.0f}")
    sink.close()


if __name__ == "__main__":
    main()
