"""Child processes of ``test_reliability_reentrancy.py``: code that runs *inside* npsummary.

Signal handlers, ``__del__`` methods, ``weakref`` callbacks and garbage-collected writers run on
whatever thread happens to be executing, between two lines of whatever code it is executing;
when that code is npsummary's, they may find its locks held by their own thread. Each scenario
here injects such code at every line npsummary executes (with a trace function, which runs
"between two lines" exactly like a signal handler or the garbage collector does), on the main
thread or on the shared background flusher, and prints one JSON line of what it logged. The
parent reads the files back. A deadlock shows up as the parent's timeout.

Run as ``python tests/support/_reentry_child.py <scenario> <thread> <logdir>``. With
``NPSUMMARY_REENTRY_SINK=segment`` the writers log to fsspec's ``memory://`` through a
``SegmentSink`` (``thread`` "flusher" is then the remote sinks' uploader), and the run is copied
to ``logdir`` at the end for the parent to read.
"""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

import npsummary
from npsummary import SummaryWriter

PACKAGE_DIR = os.path.dirname(os.path.abspath(npsummary.__file__)) + os.sep
SEGMENTS = os.environ.get("NPSUMMARY_REENTRY_SINK") == "segment"
#: The background thread the "flusher" variants inject into.
FLUSHER = "npsummary-uploader" if SEGMENTS else "npsummary-flusher"
REMOTE = "memory://reentry/run"
#: Log calls of the main loop; the injected code runs at every line they execute.
STEPS = int(os.environ.get("NPSUMMARY_REENTRY_STEPS", "60"))
#: Logging finalizers collected at every line.
GARBAGE = int(os.environ.get("NPSUMMARY_REENTRY_GC", "80"))


class Injection:
    """Runs an action before every line of npsummary code one thread executes, once armed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.action: Callable[[], None] | None = None

    def arm(self, action: Callable[[], None]) -> None:
        self.action = action


def inject_at_every_line(thread: str, limit: int) -> Injection:
    """Trace ``thread`` ("main", or "flusher": the shared background thread, which must start
    after this call); once armed, run the action before every line of npsummary code it
    executes, at most ``limit`` times."""
    injection = Injection(limit)

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        action = injection.action
        if event == "line" and action is not None and injection.count < injection.limit:
            injection.count += 1
            action()  # tracing is off while a trace function runs: action's own lines are not
        return local

    def global_(frame: FrameType, event: str, arg: Any) -> Any:
        if not frame.f_code.co_filename.startswith(PACKAGE_DIR):
            return None
        if thread == "flusher" and threading.current_thread().name != FLUSHER:
            return None
        return local

    if thread == "main":
        sys.settrace(global_)
    else:
        threading.settrace(global_)  # every thread started from now on, the flusher included
    return injection


def stop_injecting() -> None:
    sys.settrace(None)
    threading.settrace(None)


def open_writer(logdir: str, flush_secs: float, max_queue: int = 10) -> SummaryWriter:
    """The scenario's writer: a local file, or segments on memory:// (see the module doc)."""
    if not SEGMENTS:
        return SummaryWriter(logdir, max_queue=max_queue, flush_secs=flush_secs)
    return SummaryWriter(npsummary.SegmentSink(REMOTE, flush_secs=flush_secs, segment_bytes=1500))


def download(logdir: str) -> None:
    """Copy the memory:// run, sub-runs included, to ``logdir``."""
    if not SEGMENTS:
        return
    import fsspec

    fs, root = fsspec.core.url_to_fs(REMOTE)
    for path in fs.find(root):
        target = os.path.join(logdir, os.path.relpath(path, root))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(fs.cat_file(path))


def main_loop(w: SummaryWriter) -> None:
    """What the interrupted program does: scalars, sub-runs, flushes."""
    for i in range(STEPS):
        w.add_scalar("main", float(i), i)
        if i % 10 == 0:
            w.add_scalars("m", {"a": float(i)}, i)
        if i % 25 == 24:
            w.flush()


class Logged:
    """What injected code logged: tag -> steps, in call order."""

    def __init__(self) -> None:
        self.steps: dict[str, list[int]] = {}

    def log(self, w: SummaryWriter, tag: str) -> int:
        steps = self.steps.setdefault(tag, [])
        step = len(steps)
        w.add_scalar(tag, float(step), step)
        steps.append(step)
        return step


def scenario_signal(thread: str, logdir: str) -> dict[str, Any]:
    """A signal handler that logs, creates sub-runs, flushes, at every line of the main loop."""
    assert thread == "main", "Python runs signal handlers on the main thread only"
    w = open_writer(logdir, 0.05, max_queue=5)
    logged = Logged()
    subruns: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        step = logged.log(w, "handler")
        if step % 5 == 4:
            w.flush()
        if step % 11 == 0:
            w.add_scalars("h", {f"k{step % 3}": float(step)}, step)
            subruns.append(step)

    signal.signal(signal.SIGUSR1, handler)
    injection = inject_at_every_line("main", limit=20_000)
    injection.arm(lambda: handler(signal.SIGUSR1, None))
    main_loop(w)
    stop_injecting()
    w.close()
    download(logdir)
    return {"injected": injection.count, "steps": logged.steps, "subruns": subruns}


def scenario_signal_storm(thread: str, logdir: str) -> dict[str, Any]:
    """Real signals: another thread sends SIGUSR1 to the main thread as fast as it can."""
    w = SummaryWriter(logdir, max_queue=5, flush_secs=0.05)
    logged = Logged()

    handled = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        step = logged.log(w, "handler")
        if step % 5 == 4:
            w.flush()
        handled.set()

    signal.signal(signal.SIGUSR1, handler)
    stop = threading.Event()
    main_id = threading.main_thread().ident
    assert main_id is not None

    def storm() -> None:
        # One signal at a time (a handler slower than the signal rate would nest without end),
        # each at a random moment of the main loop.
        rng = random.Random(0)
        while not stop.is_set():
            handled.clear()
            signal.pthread_kill(main_id, signal.SIGUSR1)
            handled.wait(1.0)
            time.sleep(rng.random() * 0.0003)

    sys.setswitchinterval(1e-5)  # hand the GIL to the sender at once: many more signals
    sender = threading.Thread(target=storm)
    sender.start()
    target = int(os.environ.get("NPSUMMARY_REENTRY_SIGNALS", "300"))
    deadline = time.monotonic() + 60
    i = 0
    try:  # log until that many signals have been handled (or a minute has passed)
        while len(logged.steps.get("handler", [])) < target and time.monotonic() < deadline:
            w.add_scalar("main", float(i), i)
            if i % 250 == 249:
                w.flush()
            i += 1
    finally:
        stop.set()
        sender.join()
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    w.close()
    return {"injected": len(logged.steps.get("handler", [])), "steps": logged.steps, "main": i}


class _Cycle:
    """A writer kept only by a reference cycle: only the garbage collector frees it."""

    def __init__(self, logdir: str, i: int) -> None:
        self.me = self
        self.writer = SummaryWriter(os.path.join(logdir, "dropped"), max_queue=1, flush_secs=600)
        self.writer.add_scalar("dropped", float(i), i)  # pending until collected


def scenario_gc(thread: str, logdir: str) -> dict[str, Any]:
    """Writers dropped without close() in reference cycles, collected at every line."""
    gc.disable()  # collections happen where the injection says, and only there
    injection = inject_at_every_line(thread, limit=10**6)
    doomed = [_Cycle(logdir, i) for i in range(int(os.environ.get("NPSUMMARY_REENTRY_GC", "80")))]
    total = len(doomed)

    def collect() -> None:
        if doomed:
            doomed.pop()
            gc.collect()

    w = SummaryWriter(logdir, max_queue=1, flush_secs=0.01)
    injection.arm(collect)
    main_loop(w)
    deadline = time.monotonic() + 30
    while doomed and time.monotonic() < deadline:  # the flusher runs on its own schedule
        w.add_scalar("main", -1.0, STEPS)
        w.flush()
        time.sleep(0.01)
    stop_injecting()
    w.close()
    gc.enable()
    gc.collect()
    return {"injected": injection.count, "dropped": total - len(doomed), "total": total}


def scenario_gc_storm(thread: str, logdir: str) -> dict[str, Any]:
    """No injection: thousands of dropped writers under aggressive GC thresholds while logging."""
    gc.set_threshold(5, 2, 2)
    w = SummaryWriter(logdir, max_queue=1, flush_secs=0.01)
    n = int(os.environ.get("NPSUMMARY_REENTRY_STORM", "1500"))
    for i in range(n):
        _Cycle(logdir, i)
        w.add_scalar("main", float(i), i)
    w.close()
    gc.collect()
    return {"dropped": n}


def _make_logging_garbage(kind: str, w: SummaryWriter, logged: Logged) -> Any:
    """An object in a reference cycle whose finalization logs through ``w``."""

    class Logs:
        def __init__(self) -> None:
            self.me = self

    if kind == "del":

        def __del__(self: Any) -> None:
            logged.log(w, "finalizer")

        Logs.__del__ = __del__  # type: ignore[attr-defined]
        return Logs()
    obj = Logs()
    # The weak reference must outlive its referent, or the GC drops it with the cycle uncalled.
    _REFS.append(weakref.ref(obj, lambda _ref: logged.log(w, "finalizer")))
    return obj


_REFS: list[Any] = []


def scenario_finalizer(kind: str, thread: str, logdir: str) -> dict[str, Any]:
    """``__del__`` methods or ``weakref`` callbacks that log, run by GC at every line."""
    gc.disable()
    injection = inject_at_every_line(thread, limit=10**6)
    w = open_writer(logdir, 0.01, max_queue=1)
    logged = Logged()
    garbage = [_make_logging_garbage(kind, w, logged) for _ in range(GARBAGE)]
    total = len(garbage)

    def collect() -> None:
        if garbage:
            garbage.pop()
            gc.collect()

    injection.arm(collect)
    main_loop(w)
    deadline = time.monotonic() + 30
    # Until the last finalizer has logged: the background thread may still be collecting it.
    while (garbage or len(logged.steps.get("finalizer", [])) < total) and (
        time.monotonic() < deadline
    ):
        w.add_scalar("main", -1.0, STEPS)
        w.flush()
        time.sleep(0.01)
    stop_injecting()
    gc.enable()
    w.close()
    download(logdir)
    return {"injected": injection.count, "steps": logged.steps, "total": total}


def main(argv: list[str]) -> None:
    scenario, thread, logdir = argv
    if scenario == "signal":
        result = scenario_signal(thread, logdir)
    elif scenario == "signal-storm":
        result = scenario_signal_storm(thread, logdir)
    elif scenario == "gc":
        result = scenario_gc(thread, logdir)
    elif scenario == "gc-storm":
        result = scenario_gc_storm(thread, logdir)
    elif scenario in ("del", "weakref"):
        result = scenario_finalizer(scenario, thread, logdir)
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
