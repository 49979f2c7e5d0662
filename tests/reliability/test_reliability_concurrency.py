"""Concurrency: threads sharing a writer, writers sharing a directory, processes and fork.

* N threads x M events on one ``SummaryWriter`` (with ``add_scalars`` sub-runs created by all
  threads at once, and ``flush()`` from any thread): every event present exactly once, each
  thread's events in its order, every record intact, one file per sub-run.
* Several writers started at the same moment in one directory, and a writer whose file names are
  already taken (same second, same pid: a reused pid): distinct files, none truncated.
* Several processes, started with ``spawn`` and with ``fork``, each writing its own file in one
  directory; with and without ``close()`` (the flush at process exit must cover both).
* ``os.fork()`` while a thread of the parent is logging: parent and child both keep logging, the
  child never hangs, and neither duplicates the other's records.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

import npsummary
from _reliability_child import HEAVY, check_event_file, event_files, mp_worker, pool_task, report
from npsummary import SummaryWriter
from npsummary._sinks import eventfile as _eventfile
from npsummary._sinks import file as _events
from npsummary._sinks import flusher as _flusher

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext

THREADS = 8
EVENTS = 4000 if HEAVY else 1500
FORKS = 40 if HEAVY else 10

# Python >= 3.12 warns that fork() in a multi-threaded process may deadlock; that is exactly
# the situation under test (our fork handler makes it safe for npsummary's own locks).
pytestmark = pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")


def _files_by_run(logdir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for path in event_files(str(logdir)):
        out[os.path.relpath(os.path.dirname(path), logdir)].append(path)
    return out


def _records(path: str) -> list[tuple[str, int, float]]:
    import struct

    out = []
    for event in check_event_file(path).events[1:]:
        value = event.summary.value[0]
        if value.WhichOneof("value") == "simple_value":  # SummaryWriter, as tensorboardX
            number = value.simple_value
        else:  # tf.summary's float32 tensor
            number = struct.unpack("<f", value.tensor.tensor_content)[0]
        out.append((value.tag, event.step, number))
    return out


def test_threads_share_one_writer(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    writer = SummaryWriter(logdir, max_queue=5, flush_secs=0.01)
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            rng = random.Random(k)
            barrier.wait()
            for j in range(EVENTS):
                writer.add_scalar(f"t{k}", float(j), j)
                if j % 25 == 0:
                    step = k * EVENTS + j
                    # Every thread creates the sub-runs m_common and m_own<k%2> at once.
                    writer.add_scalars("m", {"common": float(step), f"own{k % 2}": 1.0}, step)
                if rng.random() < 0.003:
                    writer.flush()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a logging thread hung"
    writer.close()
    assert not errors, errors

    runs = _files_by_run(logdir)
    assert set(runs) == {".", "m_common", "m_own0", "m_own1"}
    for run, files in runs.items():
        assert len(files) == 1, f"sub-run {run} got {len(files)} files: a creation race"
    main = _records(runs["."][0])
    per_tag: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for tag, step, value in main:
        per_tag[tag].append((step, value))
    for k in range(THREADS):
        assert per_tag[f"t{k}"] == [(j, float(j)) for j in range(EVENTS)]
    common = sorted(step for _tag, step, _v in _records(runs["m_common"][0]))
    assert common == sorted(k * EVENTS + j for k in range(THREADS) for j in range(0, EVENTS, 25))
    own = Counter(step for run in ("m_own0", "m_own1") for _t, step, _v in _records(runs[run][0]))
    assert set(own.values()) == {1} and len(own) == len(common)
    report(
        "concurrency.threads",
        threads=THREADS,
        events_checked=len(main) + len(common) + len(own),
    )


def test_writers_started_together_in_one_directory(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    n = 8
    barrier = threading.Barrier(n)
    writers: list[SummaryWriter] = [None] * n  # type: ignore[list-item]

    def start(k: int) -> None:
        barrier.wait()
        writers[k] = SummaryWriter(logdir, max_queue=3)
        for i in range(200):
            writers[k].add_scalar("loss", float(k * 1000 + i), i)
        writers[k].close()

    threads = [threading.Thread(target=start, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    files = event_files(str(logdir))
    assert len(files) == n and len({os.path.basename(p) for p in files}) == n
    seen = sorted(int(v) // 1000 for p in files for _tag, _s, v in _records(p)[:1])
    assert seen == list(range(n))
    for path in files:
        records = _records(path)
        k = int(records[0][2]) // 1000
        assert records == [("loss", i, float(k * 1000 + i)) for i in range(200)]


def test_taken_file_names_are_skipped_never_truncated(tmp_path: Path, monkeypatch: Any) -> None:
    # Same second, same host, same pid (a reused pid, or a library restarted in-process): the
    # names our counter picks next already exist. They must be skipped, not truncated or appended.
    logdir = tmp_path / "run"
    logdir.mkdir()
    monkeypatch.setattr(_eventfile, "_file_counter", itertools.count(1000))
    now = int(time.time())
    taken = {}
    for second in (now, now + 1, now + 2):
        for counter in range(1000, 1003):
            name = f"events.out.tfevents.{second:010d}.{_events.hostname()}.{os.getpid()}.{counter}"
            taken[name] = f"precious {second} {counter}".encode()
            (logdir / name).write_bytes(taken[name])
    with SummaryWriter(logdir) as w:
        w.add_scalar("loss", 1.0, 1)
        mine = os.path.basename(w.sink.path)  # type: ignore[attr-defined]
    assert mine not in taken
    for name, content in taken.items():
        assert (logdir / name).read_bytes() == content
    assert _records(str(logdir / mine)) == [("loss", 1, 1.0)]


@pytest.mark.parametrize("method", ["spawn", "fork", "forkserver"])
@pytest.mark.parametrize("close", [True, False], ids=["close", "no-close"])
def test_processes_write_their_own_files(tmp_path: Path, method: str, close: bool) -> None:
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} not available")
    logdir = tmp_path / "run"
    n, procs = 300, 3
    # One of the three contexts parametrized (typeshed types get_context(str) as the base).
    context = multiprocessing.get_context(method)
    ctx = cast("SpawnContext | ForkContext | ForkServerContext", context)
    workers = [ctx.Process(target=mp_worker, args=(str(logdir), n, close)) for _ in range(procs)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        if worker.is_alive():  # pragma: no cover - the failure under test
            worker.kill()
            raise AssertionError(f"{method} worker hung")
    assert [w.exitcode for w in workers] == [0] * procs
    pids = [w.pid for w in workers]
    runs = _files_by_run(logdir)
    assert len(runs["."]) == len(pids)
    for pid in pids:
        (main,) = (p for p in runs["."] if f".{pid}." in os.path.basename(p))
        assert _records(main) == [("w", i, float(i)) for i in range(n)], (method, close)
        (sub,) = (p for p in runs["m_a"] if f".{pid}." in os.path.basename(p))
        assert [s for _t, s, _v in _records(sub)] == list(range(0, n, 50))
    report(f"concurrency.processes.{method}.{'close' if close else 'exit'}", processes=len(pids))


def _run_forked_child(writer: SummaryWriter, n: int, marker: float) -> None:
    """In a forked child: log with the inherited writer, close, and leave without cleanup."""
    code = 1
    try:
        for i in range(n):
            writer.add_scalar("child", marker + i, i)
        writer.add_scalars("m", {"c": marker}, 0)
        writer.close()
        code = 0
    finally:
        os._exit(code)


def _wait_child(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise AssertionError(f"forked child {pid} hung")
        time.sleep(0.005)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_while_logging_no_hang_no_duplicates(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    writer = SummaryWriter(logdir, max_queue=3, flush_secs=0.001)
    writer.add_scalars("m", {"c": -1.0}, 0)  # the parent's sub-run exists before the forks
    stop = threading.Event()
    hammered: list[int] = []

    def hammer() -> None:
        i = 0
        while not stop.is_set():
            writer.add_scalar("parent", float(i), i)
            hammered.append(i)
            i += 1
            if i % 97 == 0:
                writer.flush()

    thread = threading.Thread(target=hammer)
    thread.start()
    children = []
    n_child = 200
    try:
        for k in range(FORKS):
            # The hammer thread holds the sink's locks or sits in a write at random moments.
            threading.Event().wait(random.random() * 0.005)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child
                _run_forked_child(writer, n_child, marker=1000.0 * (k + 1))
            children.append((pid, 1000.0 * (k + 1)))
            writer.add_scalar("main", float(k), k)  # the parent's main thread logs on too
    finally:
        stop.set()
        thread.join(timeout=60)
    codes = [_wait_child(pid, 60) for pid, _ in children]
    writer.close()
    assert codes == [0] * len(children)

    runs = _files_by_run(logdir)
    parent_pid = os.getpid()
    (parent_main,) = (p for p in runs["."] if f".{parent_pid}." in os.path.basename(p))
    records = _records(parent_main)
    assert [s for t, s, _ in records if t == "parent"] == hammered
    assert [s for t, s, _ in records if t == "main"] == list(range(FORKS))
    assert not [r for r in records if r[0] == "child"]
    checked = len(records)
    for pid, marker in children:
        (main,) = (p for p in runs["."] if f".{pid}." in os.path.basename(p))
        got = _records(main)
        assert got == [("child", i, marker + i) for i in range(n_child)], "parent records leaked"
        (sub,) = (p for p in runs["m_c"] if f".{pid}." in os.path.basename(p))
        assert _records(sub) == [("m", 0, marker)]
        checked += len(got) + 1
    (parent_sub,) = (p for p in runs["m_c"] if f".{parent_pid}." in os.path.basename(p))
    assert _records(parent_sub) == [("m", 0, -1.0)]
    report("concurrency.fork", forks=len(children), events_checked=checked)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("lock", ["sub-run creation", "flusher start"])
def test_fork_while_another_thread_holds_a_creation_lock(tmp_path: Path, lock: str) -> None:
    # Another thread is creating a sub-run or starting the flusher thread at the moment of
    # fork(): the child inherits that lock held by a thread that does not exist in it, and must
    # not deadlock. (Naming a file takes no lock.)
    writer = SummaryWriter(tmp_path / "run")
    held = {
        "sub-run creation": writer.sink._state.children_lock,  # type: ignore[attr-defined]
        "flusher start": _flusher.FLUSHER._lock,
    }[lock]
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with held:
            taken.set()
            release.wait(60)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert taken.wait(30)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child
            code = 1
            try:
                writer.add_scalars("m", {"new": 1.0}, 0)
                SummaryWriter(tmp_path / "other").close()
                writer.close()
                code = 0
            finally:
                os._exit(code)
        code = _wait_child(pid, 20)
    finally:
        release.set()
        thread.join(timeout=30)
    writer.close()
    assert code == 0
    assert len(event_files(str(tmp_path / "other"))) == 1


# -- close() racing other threads' calls ---------------------------------------------------------


class _Caller:
    """A thread that makes one logging call at a time on request and reports how it ended."""

    def __init__(self, sink: Any) -> None:
        import queue

        self.sink = sink
        self.requests: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        self.outcomes: dict[int, str] = {}
        self.done: dict[int, threading.Event] = {}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (step := self.requests.get()) is not None:
            try:
                self.sink.write(_scalar_event("racer", step))
                self.outcomes[step] = "ok"
            except Exception as exc:
                self.outcomes[step] = f"{type(exc).__name__}: {exc}"
            self.done[step].set()

    def call(self, step: int, wait: float) -> None:
        self.done[step] = threading.Event()
        self.requests.put(step)
        self.done[step].wait(wait)  # it may block on a lock close() holds: go on after a while

    def stop(self) -> None:
        self.requests.put(None)
        self.thread.join(30)


def _scalar_event(tag: str, step: int) -> bytes:
    from npsummary._format.wire import encode_event, encode_summary
    from npsummary._summaries.scalar import scalar_value

    return encode_event(1.0, step, encode_summary([scalar_value(tag, float(step))]))


def test_close_racing_another_threads_calls_loses_nothing(tmp_path: Path) -> None:
    # Another thread logs at every line close() executes (issue 13, item 4), through the sink an
    # add_scalar() already holds when close() begins. A call that returned before close()
    # returned is in the file; a later one is refused with a ValueError naming the closed file;
    # close() itself raises nothing on a healthy disk.
    import sys

    logdir = tmp_path / "run"
    w = SummaryWriter(logdir, flush_secs=3600, max_queue=1000)
    w.add_scalar("racer", -1.0, 0)
    caller = _Caller(w.sink)
    step = itertools.count(1)
    returned_before_close: list[int] = []
    package = os.path.dirname(npsummary.__file__) + os.sep

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if not frame.f_code.co_filename.startswith(package):
            return None

        def line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                caller.call(next(step), wait=0.02)
            return line

        return line

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        w.close()
    finally:
        sys.settrace(previous)
    returned_before_close = [s for s, outcome in caller.outcomes.items() if outcome == "ok"]
    caller.call(next(step), wait=30)  # after close() returned: refused
    caller.stop()
    assert all(e.is_set() for e in caller.done.values())
    refused = {s: o for s, o in caller.outcomes.items() if o != "ok"}
    assert all(o.startswith("ValueError") and "closed" in o for o in refused.values()), refused
    logged = sorted(s for s, o in caller.outcomes.items() if o == "ok")
    found = sorted(
        s for path in event_files(str(logdir)) for s in check_event_file(path).steps("racer")
    )
    assert found == [0, *logged]
    assert set(returned_before_close) <= set(found)
    report("concurrency.close_race_every_line", calls=len(caller.outcomes), refused=len(refused))


def test_close_while_threads_log(tmp_path: Path) -> None:
    rounds = 40 if HEAVY else 5
    accepted = refused = 0
    for r in range(rounds):
        logdir = tmp_path / f"run{r}"
        w = SummaryWriter(logdir, flush_secs=3600, max_queue=1000)
        start = threading.Barrier(5)
        outcomes: list[list[tuple[int, str]]] = [[] for _ in range(4)]

        def hammer(
            k: int, w: SummaryWriter = w, outcomes: Any = outcomes, start: Any = start
        ) -> None:
            start.wait()
            for i in range(400):
                step = k * 10_000 + i
                try:
                    w.add_scalar("t", float(step), step)
                    outcomes[k].append((step, "ok"))
                except ValueError as exc:
                    assert "closed" in str(exc)
                    outcomes[k].append((step, "refused"))

        threads = [threading.Thread(target=hammer, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        start.wait()
        threading.Event().wait(random.random() * 0.003)
        w.close()  # must not raise: the disk is healthy
        for t in threads:
            t.join(60)
        w.close()
        ok = sorted(s for out in outcomes for s, o in out if o == "ok")
        found = sorted(
            s for path in event_files(str(logdir)) for s in check_event_file(path).steps("t")
        )
        assert found == ok
        accepted += len(ok)
        refused += sum(o == "refused" for out in outcomes for _s, o in out)
    report("concurrency.close_while_logging", rounds=rounds, accepted=accepted, refused=refused)


# -- multiprocessing.Pool: workers are terminated with SIGTERM -----------------------------------


_HEAVY_ONLY = [pytest.mark.heavy, pytest.mark.skipif(not HEAVY, reason="set NPSUMMARY_HEAVY=1")]


@pytest.mark.parametrize(
    ("method", "ending"),
    [
        ("fork", "with-pool"),
        ("fork", "close-join"),
        ("spawn", "with-pool"),
        pytest.param("spawn", "close-join", marks=_HEAVY_ONLY),
        pytest.param("forkserver", "with-pool", marks=_HEAVY_ONLY),
        pytest.param("forkserver", "close-join", marks=_HEAVY_ONLY),
    ],
)
def test_pool_workers_keep_their_records(tmp_path: Path, method: str, ending: str) -> None:
    # ``with Pool() as pool:`` ends with terminate(): SIGTERM to every worker, which skips every
    # exit hook (issue 13, item 6). Records a worker logged must reach its file all the same.
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} not available")
    logdir = str(tmp_path / "run")
    tasks = 100
    ctx = multiprocessing.get_context(method)
    if ending == "with-pool":
        with ctx.Pool(2) as pool:
            pids = pool.starmap(pool_task, [(logdir, i) for i in range(tasks)])
    else:
        pool = ctx.Pool(2)
        pids = pool.starmap(pool_task, [(logdir, i) for i in range(tasks)])
        pool.close()
        pool.join()
    found = sorted(s for path in event_files(logdir) for s in check_event_file(path).steps("task"))
    assert found == list(range(tasks)), f"{tasks - len(found)} of {tasks} records lost"
    report(f"concurrency.pool.{method}.{ending}", workers=len(set(pids)), records=tasks)


SIGTERM_SCRIPT = """
import glob, os, signal, sys
from npsummary import SummaryWriter
from npsummary._format.record import iter_records
mode, logdir = sys.argv[1], sys.argv[2]

def previous_handler(signum, frame):
    (path,) = glob.glob(os.path.join(logdir, "events.*"))
    with open(os.path.join(logdir, "..", "chained"), "w") as out:
        out.write(str(len(list(iter_records(open(path, "rb").read())))))
    sys.exit(3)

if mode == "chain":
    signal.signal(signal.SIGTERM, previous_handler)
elif mode == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
w = SummaryWriter(logdir, flush_secs=600, max_queue=1000)
for i in range(50):
    w.add_scalar("x", float(i), i)
os.kill(os.getpid(), signal.SIGTERM)
w.add_scalar("x", 50.0, 50)
w.close()
print("survived")
"""


@pytest.mark.parametrize("mode", ["default", "chain", "ignore"])
def test_sigterm_writes_pending_records_then_does_what_it_did_before(
    tmp_path: Path, mode: str
) -> None:
    # SIGTERM writes what is pending, then the handler that was there before runs: the default
    # action still terminates by SIGTERM, a user's handler is called (and sees the records on
    # disk), SIG_IGN is left alone.
    import signal
    import subprocess
    import sys

    logdir = tmp_path / "run"
    out = subprocess.run(
        [sys.executable, "-c", SIGTERM_SCRIPT, mode, str(logdir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (path,) = event_files(str(logdir))
    steps = check_event_file(path).steps("x")
    if mode == "default":
        assert out.returncode == -signal.SIGTERM, out.stderr
        assert steps == list(range(50))
    elif mode == "chain":
        assert out.returncode == 3, out.stderr
        assert (tmp_path / "chained").read_text() == "51"  # file_version + 50, before chaining
        assert steps == list(range(50))
    else:
        assert out.returncode == 0 and "survived" in out.stdout, out.stderr
        assert steps == list(range(51))
