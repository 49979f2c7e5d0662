"""Re-entrancy and finalizers: code that runs inside npsummary never hangs it, never loses a record.

Signal handlers run on the main thread between two of its lines; the garbage collector runs
``__del__`` methods, ``weakref`` callbacks and the cleanup of writers dropped without ``close()`` on
whatever thread allocates, the shared background flusher included. Any of them may log, flush,
create sub-runs or drop a writer while their own thread is inside npsummary holding a lock. Each
scenario (``tests/support/_reentry_child.py``) injects such code before *every* line of npsummary
that a thread executes, in a child process; a deadlock is the child's timeout. Afterwards every
record the program and the injected code logged is in the files exactly once, in the order each
logged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from _reliability_child import HEAVY, check_event_file, event_files, report
from paths import SUPPORT

CHILD = str(SUPPORT / "_reentry_child.py")
STEPS = 200 if HEAVY else 40
COLLECTED = 300 if HEAVY else 80  # writers (or logging finalizers) collected at every line
SIGNALS = 5_000 if HEAVY else 300
TIMEOUT = 120


def run_child(scenario: str, thread: str, logdir: Path, **env: str) -> dict[str, Any]:
    environ = dict(
        os.environ,
        NPSUMMARY_REENTRY_STEPS=str(STEPS),
        NPSUMMARY_REENTRY_GC=str(COLLECTED),
        NPSUMMARY_REENTRY_SIGNALS=str(SIGNALS),
        **env,
    )
    try:
        out = subprocess.run(
            [sys.executable, CHILD, scenario, thread, str(logdir)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=environ,
        )
    except subprocess.TimeoutExpired as exc:  # pragma: no cover - the failure under test
        raise AssertionError(f"{scenario} on the {thread} thread hung (deadlock)") from exc
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    return result


def scalars_by_run(logdir: Path) -> dict[str, dict[str, list[int]]]:
    """run (relative dir) -> tag -> steps, over every file of that run, in file order."""
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for path in event_files(str(logdir)):
        run = os.path.relpath(os.path.dirname(path), logdir)
        check = check_event_file(path)
        assert check.torn_tail_bytes == 0, path
        for event in check.events[1:]:
            for value in event.summary.value:
                out[run][value.tag].append(event.step)
    return out


def check_main_loop(runs: dict[str, dict[str, list[int]]]) -> None:
    assert runs["."]["main"][:STEPS] == list(range(STEPS))
    assert set(runs["."]["main"][STEPS:]) <= {STEPS}  # the scenario's idle loop, if any
    assert runs["m_a"]["m"] == list(range(0, STEPS, 10))


def test_signal_handler_logging_at_every_line_never_deadlocks(tmp_path: Path) -> None:
    # The handler logs, flushes every 5th time and creates sub-runs every 11th, while the main
    # thread it interrupted may hold the very lock it needs (issue 13, item 2).
    result = run_child("signal", "main", tmp_path)
    runs = scalars_by_run(tmp_path)
    check_main_loop(runs)
    handler_steps = result["steps"]["handler"]
    assert len(handler_steps) == result["injected"] > STEPS * 10
    assert runs["."]["handler"] == handler_steps
    for step in result["subruns"]:
        assert step in runs[f"h_k{step % 3}"]["h"]
    assert sum(len(runs[f"h_k{k}"]["h"]) for k in range(3)) == len(result["subruns"])
    report("reentrancy.signal_every_line", handler_calls=result["injected"])


@pytest.mark.skipif(not hasattr(__import__("signal"), "pthread_kill"), reason="POSIX signals")
def test_real_signal_storm_while_logging(tmp_path: Path) -> None:
    result = run_child("signal-storm", "main", tmp_path)
    runs = scalars_by_run(tmp_path)
    assert runs["."]["main"] == list(range(result["main"]))
    assert runs["."]["handler"] == result["steps"].get("handler", [])
    assert result["injected"] > 0
    report("reentrancy.signal_storm", signals_handled=result["injected"])


@pytest.mark.parametrize("thread", ["flusher", "main"])
def test_dropped_writers_collected_at_every_line_never_deadlock(
    tmp_path: Path, thread: str
) -> None:
    # Writers in reference cycles, dropped without close(), collected by the GC at every line of
    # npsummary the flusher (or the main thread) executes (issue 13, item 1). Their pending
    # records are written all the same.
    result = run_child("gc", thread, tmp_path)
    assert result["dropped"] == result["total"], result
    runs = scalars_by_run(tmp_path)
    check_main_loop(runs)
    dropped_files = event_files(str(tmp_path / "dropped"))
    assert len(dropped_files) == result["total"]
    steps = sorted(check_event_file(p).steps("dropped")[0] for p in dropped_files)
    assert steps == list(range(result["total"]))
    report(f"reentrancy.gc_every_line.{thread}", writers_collected=result["dropped"])


def test_thousands_of_dropped_writers_under_aggressive_gc(tmp_path: Path) -> None:
    n = 3000 if HEAVY else 800
    result = run_child("gc-storm", "main", tmp_path, NPSUMMARY_REENTRY_STORM=str(n))
    runs = scalars_by_run(tmp_path)
    assert runs["."]["main"] == list(range(n))
    files = event_files(str(tmp_path / "dropped"))
    assert sorted(check_event_file(p).steps("dropped")[0] for p in files) == list(range(n))
    report("reentrancy.gc_storm", writers_dropped=result["dropped"])


@pytest.mark.parametrize("thread", ["flusher", "main"])
@pytest.mark.parametrize("kind", ["del", "weakref"])
def test_finalizers_that_log_at_every_line(tmp_path: Path, kind: str, thread: str) -> None:
    result = run_child(kind, thread, tmp_path)
    runs = scalars_by_run(tmp_path)
    check_main_loop(runs)
    logged = result["steps"]["finalizer"]
    assert len(logged) == result["total"]
    assert runs["."]["finalizer"] == logged
    report(f"reentrancy.{kind}_every_line.{thread}", finalizers_logged=len(logged))


# -- remote runs: the segment sink (fsspec memory://) keeps the same discipline --------------------


def test_signal_handler_logging_to_a_remote_run_at_every_line_never_deadlocks(
    tmp_path: Path,
) -> None:
    pytest.importorskip("fsspec")
    result = run_child("signal", "main", tmp_path, NPSUMMARY_REENTRY_SINK="segment")
    runs = scalars_by_run(tmp_path)
    check_main_loop(runs)
    handler_steps = result["steps"]["handler"]
    assert len(handler_steps) == result["injected"] > STEPS * 10
    assert runs["."]["handler"] == handler_steps
    for step in result["subruns"]:
        assert step in runs[f"h_k{step % 3}"]["h"]
    assert sum(len(runs[f"h_k{k}"]["h"]) for k in range(3)) == len(result["subruns"])
    report("reentrancy.segment_signal_every_line", handler_calls=result["injected"])


@pytest.mark.parametrize("thread", ["flusher", "main"])
def test_finalizers_logging_to_a_remote_run_at_every_line(tmp_path: Path, thread: str) -> None:
    # "flusher" is the remote sinks' uploader thread here: GC runs there too.
    pytest.importorskip("fsspec")
    result = run_child("del", thread, tmp_path, NPSUMMARY_REENTRY_SINK="segment")
    runs = scalars_by_run(tmp_path)
    check_main_loop(runs)
    logged = result["steps"]["finalizer"]
    assert len(logged) == result["total"]
    assert runs["."]["finalizer"] == logged
    report(f"reentrancy.segment_del_every_line.{thread}", finalizers_logged=len(logged))
