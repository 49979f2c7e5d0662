"""Every section that holds a sink's lock marks its thread busy (docs/ARCHITECTURE.md,
"Re-entrancy"; issue 32, item 4): a signal handler or finalizer that runs inside such a section
sees ``busy.depth`` non-zero and queues its work instead of waiting for a lock its own thread
holds. The prologue is written inline at each site on purpose (a KeyboardInterrupt could hit the
entry of a called function), so this test checks the sites at run time: the sinks' locks are
replaced by locks that record each acquisition made while the thread was not marked busy, and
every kind of sink is driven through writes, sub-runs, flushes, errors and close."""

from __future__ import annotations

import os
import shutil
import threading
import traceback
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import EventWriteError, SummaryWriter, TensorboardXSummaryWriter
from npsummary._sinks import pending
from npsummary._sinks.flusher import busy

_UNMARKED: list[str] = []


class _CheckedLock:
    """A non-re-entrant lock that records where it was taken without a busy mark."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def _note(self) -> None:
        if not busy.depth:
            frames = traceback.extract_stack(limit=6)[:-3]  # past _note, acquire, __enter__
            _UNMARKED.append(
                " <- ".join(f"{f.name} ({Path(f.filename).name}:{f.lineno})" for f in frames)
            )

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        self._note()
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


@pytest.fixture
def checked_locks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    # The sinks' locks all come from PendingState (its __init__ and reset_after_fork); the
    # re-entrant children_lock stays an RLock, re-entered on purpose (see pending.py).
    stand_in = types.SimpleNamespace(**vars(threading))
    stand_in.Lock = _CheckedLock
    monkeypatch.setattr(pending, "threading", stand_in)
    _UNMARKED.clear()
    yield _UNMARKED
    _UNMARKED.clear()


def _log(writer: Any) -> None:
    for step in range(30):
        writer.add_scalar("loss", 1.0 / (step + 1), step)
        writer.add_scalars("pair", {"a": 1.0, "b": 2.0}, step)
    writer.add_histogram("w", np.arange(100.0), 1)
    writer.flush()


def test_file_sinks_mark_every_lock_section(checked_locks: list[str], tmp_path: Path) -> None:
    for writer_class in (SummaryWriter, TensorboardXSummaryWriter):
        logdir = tmp_path / writer_class.__name__
        writer = writer_class(str(logdir), max_queue=5, flush_secs=0.01)
        _log(writer)
        shutil.rmtree(logdir)  # the file removed while open: a new one, and an error report
        writer.add_scalar("loss", 0.5, 99)
        with pytest.raises(EventWriteError, match="removed while open"):
            writer.flush()
        writer.close()
        writer.add_scalar("loss", 0.25, 100)  # after close: a new file, as tensorboardX
        writer.close()
    assert checked_locks == [], "\n".join(dict.fromkeys(checked_locks))


def test_remote_sinks_mark_every_lock_section(checked_locks: list[str]) -> None:
    pytest.importorskip("fsspec")
    writer = SummaryWriter(f"memory://busy-marks/{os.getpid()}", max_queue=5, flush_secs=0.01)
    _log(writer)
    writer.close()
    assert checked_locks == [], "\n".join(dict.fromkeys(checked_locks))


def test_the_checked_lock_sees_an_unmarked_section(checked_locks: list[str]) -> None:
    lock = vars(pending)["threading"].Lock()  # the fixture's stand-in
    with lock:
        pass
    assert len(checked_locks) == 1


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux's /proc")
def test_the_flusher_thread_leaves_sigterm_to_the_main_thread(tmp_path: Path) -> None:
    """A SIGTERM the kernel hands to the flusher thread would only set Python's flag while the
    main thread sleeps in a semaphore wait (an idle pool worker), and Pool.terminate() then
    waited forever (seen in the matrix cells); the flusher thread blocks the handled signals."""
    import signal

    writer = SummaryWriter(str(tmp_path))
    writer.add_scalar("loss", 0.5, 1)
    writer.flush()
    (thread,) = [t for t in threading.enumerate() if t.name == "npsummary-flusher"]
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    (blocked,) = [
        int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigBlk")
    ]
    for number in (signal.SIGTERM, signal.SIGINT):
        assert blocked & (1 << (number - 1)), f"{signal.Signals(number).name} not blocked"
    main = Path(f"/proc/self/task/{threading.main_thread().native_id}/status").read_text()
    assert "SigBlk:\t0000000000000000" in main  # the main thread still takes them
    writer.close()
