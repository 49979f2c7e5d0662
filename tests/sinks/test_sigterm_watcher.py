"""A SIGTERM whose Python handler would never run is sent again (``_sinks/flusher.py``).

Python runs a signal handler when the main thread next executes Python code or when the
blocking call it sits in is interrupted. A SIGTERM caught just before the main thread starts a
wait (a ``multiprocessing.Pool`` worker going idle as ``Pool.terminate()`` signals it: one
``with Pool(2)`` in about 30 hung before the fix) only sets Python's flag, and the process lives
on. These tests make that state on purpose in a multiprocessing child (where npsummary watches
for it): the main thread waits on a lock that is never released, then a thread that does not
block SIGTERM receives it, so the C handler sets the flag and the wait is not interrupted.
Without the watcher the child hangs; each case has a time limit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from npsummary import reader

pytestmark = pytest.mark.skipif(
    not (hasattr(signal, "pthread_kill") and hasattr(os, "fork") and Path("/proc/self").exists()),
    reason="POSIX signals to threads, fork and /proc",
)

# argv: the case, a logdir. Runs the case in a forked multiprocessing child and prints its exit
# code (or "hung").
SCRIPT = """
import multiprocessing, os, signal, socket, sys, threading

def lost_wakeup(wait, logdir):
    from npsummary import SummaryWriter
    writer = SummaryWriter(logdir, flush_secs=600, max_queue=1000)
    for step in range(20):
        writer.add_scalar("x", float(step), step)
    main_tid = threading.get_native_id()
    at_last_acquire = threading.Event()

    def asleep():
        with open(f"/proc/self/task/{main_tid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "S"

    def signal_self_once_main_sleeps():
        # Asleep after a pause without the GIL: in the lock's wait, not waiting for the GIL.
        at_last_acquire.wait()
        while not asleep():
            threading.Event().wait(0.001)
        threading.Event().wait(0.001)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
        threading.Event().wait()

    threading.Thread(target=signal_self_once_main_sleeps, daemon=True).start()
    lock = multiprocessing.Lock() if wait == "semlock" else threading.Lock()
    lock.acquire()
    at_last_acquire.set()
    lock.acquire()
    os._exit(7)  # woke without dying

def programs_wakeup_fd(logdir):
    from npsummary import SummaryWriter
    reader, writer_end = socket.socketpair()
    writer_end.setblocking(False)
    signal.set_wakeup_fd(writer_end.fileno())
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("x", 1.0, 0)
    os._exit(0 if signal.set_wakeup_fd(-1) == writer_end.fileno() else 1)

def forked_grandchild(logdir):
    from npsummary import SummaryWriter
    writer = SummaryWriter(logdir)
    writer.add_scalar("x", 1.0, 0)
    ours = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(ours)
    if ours == -1:
        os._exit(2)  # no watcher in a multiprocessing child
    pid = os.fork()
    if pid == 0:
        # The grandchild's signals must not reach this process's pipe (the watcher would send
        # them on to this process's main thread).
        os._exit(0 if signal.set_wakeup_fd(-1) == -1 else 1)
    _, status = os.waitpid(pid, 0)
    writer.close()
    os._exit(os.waitstatus_to_exitcode(status))

if __name__ == "__main__":
    case, logdir = sys.argv[1], sys.argv[2]
    target, args = {
        "semlock": (lost_wakeup, ("semlock", logdir)),
        "lock": (lost_wakeup, ("lock", logdir)),
        "wakeup_fd": (programs_wakeup_fd, (logdir,)),
        "fork": (forked_grandchild, (logdir,)),
    }[case]
    child = multiprocessing.get_context("fork").Process(target=target, args=args)
    child.start()
    child.join(60)
    if child.exitcode is None:
        child.kill()
        print("hung")
    else:
        print(child.exitcode)
"""


def run_case(case: str, logdir: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, case, str(logdir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.parametrize("wait", ["semlock", "lock"])
def test_a_sigterm_caught_outside_the_main_thread_still_ends_the_process(
    tmp_path: Path, wait: str
) -> None:
    logdir = tmp_path / "run"
    assert run_case(wait, logdir) == str(-signal.SIGTERM)
    assert reader.scalars(logdir)[(".", "x")].steps.tolist() == list(range(20))


def test_a_wakeup_fd_the_program_set_stays_the_programs(tmp_path: Path) -> None:
    # asyncio's and trio's event loops set the wakeup descriptor; npsummary then stays out.
    assert run_case("wakeup_fd", tmp_path / "run") == "0"


def test_a_forked_child_does_not_write_into_the_parents_wakeup_pipe(tmp_path: Path) -> None:
    assert run_case("fork", tmp_path / "run") == "0"


MAIN_PROCESS_SCRIPT = """
import signal, sys
from npsummary import SummaryWriter
with SummaryWriter(sys.argv[1]) as writer:
    writer.add_scalar("x", 1.0, 0)
print(signal.set_wakeup_fd(-1))
"""


def test_a_main_process_keeps_its_wakeup_fd_free(tmp_path: Path) -> None:
    # trio warns when it finds a wakeup descriptor set: outside multiprocessing's children
    # npsummary sets none.
    out = subprocess.run(
        [sys.executable, "-c", MAIN_PROCESS_SCRIPT, str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "-1"


def test_the_watcher_resends_until_the_handler_has_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process, without real signals: SIGTERM bytes arrive on the pipe, and the "kill"
    # stands for a main thread that runs the handler once it is interrupted.
    import threading
    import time

    from npsummary._sinks import flusher

    monkeypatch.setattr(flusher, "_handler_runs", 0)
    monkeypatch.setattr(time, "sleep", lambda seconds: None)  # flusher's time module
    sent: list[int] = []

    def kill(thread: int, signum: int) -> None:
        sent.append(signum)
        os.write(write_fd, bytes([signum]))  # a re-sent signal comes back through the pipe
        flusher._handler_runs += 1

    read_fd, write_fd = os.pipe()
    watcher = threading.Thread(
        target=flusher._resend_unhandled_sigterms,
        args=(read_fd, signal.SIGTERM, threading.get_ident(), kill),
    )
    watcher.start()
    os.write(write_fd, bytes([signal.SIGINT, signal.SIGTERM]))  # SIGINT is not its business
    os.write(write_fd, bytes([signal.SIGTERM]))
    while flusher._handler_runs < 2:
        threading.Event().wait(0.01)
    os.close(write_fd)
    watcher.join(30)
    os.close(read_fd)
    assert not watcher.is_alive()
    assert sent == [signal.SIGTERM, signal.SIGTERM]  # one per unhandled SIGTERM, not per byte


def test_the_watcher_starts_in_a_multiprocessing_child_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading
    import types

    from npsummary._sinks import flusher

    def wakeup_fds() -> tuple[int, int] | None:  # read afresh: each call may change it
        return flusher._wakeup_fds

    monkeypatch.setattr(flusher, "_wakeup_fds", None)
    flusher._watch_for_lost_sigterms(signal.SIGTERM)  # pytest's process: no parent process
    assert wakeup_fds() is None
    child = types.SimpleNamespace(parent_process=lambda: object())
    monkeypatch.setitem(sys.modules, "multiprocessing", child)
    started: list[str] = []

    class NotStarted:  # a blocked read of a closed descriptor would outlive the test
        def __init__(self, *, name: str, **kwargs: object) -> None:
            self.name = name

        def start(self) -> None:
            started.append(self.name)

    monkeypatch.setattr(threading, "Thread", NotStarted)  # flusher's threading module
    previous = signal.set_wakeup_fd(-1)
    try:
        flusher._watch_for_lost_sigterms(signal.SIGTERM)
        fds = wakeup_fds()
        assert fds is not None and started == ["npsummary-sigterm"]
        assert signal.set_wakeup_fd(fds[1]) == fds[1]
        flusher._drop_wakeup_fds()  # what a forked child does first: the descriptor is freed
        assert wakeup_fds() is None
        assert signal.set_wakeup_fd(-1) == -1
    finally:
        signal.set_wakeup_fd(previous)
