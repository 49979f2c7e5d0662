"""I/O faults: a full disk, permission denied, the logdir removed while running.

Policy under test (docs/guide/behaviour.md, "Reliability policy"): a failed write raises
``EventWriteError`` (an ``OSError`` with the errno) at the next ``add_*``, ``flush()`` or
``close()``; records already in the file stay intact (a partly written batch is cut back to its
last complete record); unwritten records are kept, up to ``max_pending_bytes``, and retried with
backoff; records beyond the bound are dropped and counted in the next error; no thread keeps
spinning, and nothing hangs.

The full disk is simulated twice: by :class:`FaultyOS` (``os.write`` fails with ENOSPC after a
byte budget, deterministic, any user) and by a real 1 MiB tmpfs (skipped where mounting is not
permitted). Permission denied is simulated by ``FaultyOS`` and done for real as ``nobody``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from _reliability_child import CHILD, HEAVY, FaultyOS, check_event_file, event_files, report
from conftest import wait_for
from npsummary import EventWriteError, FileSink, SummaryWriter
from npsummary._format.wire import encode_event
from npsummary._sinks import eventfile as _eventfile


def _state(writer: SummaryWriter) -> Any:
    return writer.sink._state  # type: ignore[attr-defined]


def _payload(i: int, size: int = 0) -> bytes:
    # A valid serialized Event (step i) padded with an empty Summary of ``size`` bytes of tag.
    from npsummary._format.wire import encode_summary as summary_bytes
    from npsummary._summaries.scalar import scalar_value

    return encode_event(1.0, i, summary_bytes([scalar_value("t" + "x" * size, float(i))]))


def _count(pattern: str, messages: list[str]) -> int:
    return sum(int(m) for text in messages for m in re.findall(pattern, text))


# -- full disk (injected) -------------------------------------------------------------------------


def test_full_disk_raises_at_flush_keeps_file_intact_and_recovers(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    with FaultyOS(tmp_path) as faults:
        w = SummaryWriter(logdir, max_queue=1000, flush_secs=3600)
        for i in range(50):
            w.add_scalar("loss", float(i), i)
        w.flush()
        path = w.sink.path  # type: ignore[attr-defined]
        faults.budget = 300  # room for a few records, then ENOSPC inside a record
        for i in range(50, 100):
            w.add_scalar("loss", float(i), i)
        with pytest.raises(EventWriteError) as info:
            w.flush()
        assert isinstance(info.value, OSError)
        assert info.value.errno == errno.ENOSPC
        assert path in str(info.value)
        assert faults.written > 0 and faults.failed_writes > 0
        # The partly written batch was cut back: only complete records, all from before.
        check = check_event_file(path)
        assert check.torn_tail_bytes == 0
        assert check.steps("loss") == list(range(50))
        # Space again: the kept records are written, in order, by the next flush.
        faults.budget = None
        w.add_scalar("loss", 100.0, 100)
        w.flush()
        assert check_event_file(path).steps("loss") == list(range(101))
        w.close()
    report("faults.full_disk_recovery", records_checked=101)


def test_background_write_failure_raised_at_next_call(tmp_path: Path) -> None:
    with FaultyOS(tmp_path) as faults:
        w = SummaryWriter(tmp_path / "run", max_queue=2, flush_secs=3600)
        w.add_scalar("loss", 0.0, 0)
        w.flush()
        faults.budget = 0
        for i in range(1, 4):  # more than max_queue: the background thread writes now
            w.add_scalar("loss", float(i), i)
        assert wait_for(lambda: _state(w).error is not None)
        with pytest.raises(EventWriteError, match="No space left"):
            w.add_scalar("loss", 4.0, 4)
        faults.budget = None
        w.add_scalar("loss", 5.0, 5)
        path = w.sink.path  # type: ignore[attr-defined]
        w.close()
    # The call that raised logged nothing; everything else arrived, in order.
    assert check_event_file(path).steps("loss") == [0, 1, 2, 3, 5]


def test_full_disk_memory_bounded_and_no_record_lost_silently(tmp_path: Path) -> None:
    bound = 20_000
    n = 3000
    with FaultyOS(tmp_path) as faults:
        sink = FileSink(tmp_path / "run", max_queue=10, flush_secs=0.01, max_pending_bytes=bound)
        state = sink._state
        faults.budget = 0
        raised: list[str] = []
        largest = 0
        for i in range(n):
            payload = _payload(i, size=i % 200)
            largest = max(largest, len(payload))
            try:
                sink.write(payload)
            except EventWriteError as exc:
                assert exc.errno == errno.ENOSPC
                raised.append(str(exc))
            with state.lock:
                queued = sum(len(p) for p in state.pending)
            assert queued <= bound + largest
        with pytest.raises(EventWriteError) as info:
            sink.close()
        final = str(info.value)
    assert raised, "a full disk must be reported"
    dropped = _count(r"(\d+) records? dropped", [*raised, final])
    unwritten = _count(r"(\d+) records? (?:could not be|were not) written", [final])
    assert dropped > 0
    # Every call either raised (nothing logged), or its record was dropped and counted, or it was
    # still pending when close() gave up and was counted there.
    assert len(raised) + dropped + unwritten == n, (len(raised), dropped, unwritten, final)
    assert check_event_file(sink.path).payloads[1:] == []
    report("faults.full_disk_bounded", writes=n, raised=len(raised), dropped_counted=dropped)


def test_full_disk_does_not_retry_on_every_call(tmp_path: Path, monkeypatch: Any) -> None:
    attempts = 0
    real_append = _eventfile.EventFile._append

    def counting_append(self: Any, payloads: list[bytes], *, fsync: bool) -> None:
        nonlocal attempts
        attempts += 1
        real_append(self, payloads, fsync=fsync)

    monkeypatch.setattr(_eventfile.EventFile, "_append", counting_append)
    with FaultyOS(tmp_path) as faults:
        w = SummaryWriter(tmp_path / "run", max_queue=10, flush_secs=3600)
        faults.budget = 0
        attempts = 0
        errors = 0
        for i in range(1000):
            try:
                w.add_scalar("loss", float(i), i)
            except EventWriteError:
                errors += 1
        # One background attempt fails; the next retry is due flush_secs later, not per call.
        assert wait_for(lambda: errors > 0 or _state(w).error is not None)
        assert attempts <= 2, attempts
        idle = threading.Event()
        idle.wait(0.3)
        assert attempts <= 2, attempts
        with pytest.raises(EventWriteError):  # an explicit flush retries at once
            w.flush()
        assert attempts <= 3
        faults.budget = None
        w.close()

    # With a short flush_secs, retries back off exponentially instead of running every tick.
    with FaultyOS(tmp_path) as faults:
        w = SummaryWriter(tmp_path / "run2", max_queue=10, flush_secs=0.02)
        faults.budget = 0
        attempts = 0
        start = time.monotonic()
        logged = []
        for i in range(200):
            try:
                w.add_scalar("loss", float(i), i)
                logged.append(i)
            except EventWriteError:
                pass
        threading.Event().wait(0.6)
        elapsed = time.monotonic() - start
        # Retrying every flush_secs would be elapsed / 0.02 attempts (30 here); backing off
        # exponentially gives about log2 of that.
        assert attempts <= 4 + math.log2(max(2.0, elapsed / 0.02)), (attempts, elapsed)
        faults.budget = None
        path = w.sink.path  # type: ignore[attr-defined]
        with contextlib.suppress(EventWriteError):  # an error of the last retry may be pending
            w.close()
    assert check_event_file(path).steps("loss") == logged
    report("faults.no_retry_storm", calls_while_failing=1200, write_attempts=attempts)


def test_flusher_thread_stops_after_close_while_failing(tmp_path: Path) -> None:
    # In a fresh process, so that no writer of another test keeps the shared thread alive.
    logdir = tmp_path / "run"
    out = subprocess.run(
        [sys.executable, CHILD, "close-while-failing", str(logdir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["close"] == f"EventWriteError:{errno.ENOSPC}"
    assert result["errors_while_logging"] > 0
    assert result["flusher_alive_after_close"] is False
    assert result["open_fds_under_logdir"] == 0


def test_close_reaches_every_subrun_when_one_fails(tmp_path: Path) -> None:
    # One sub-run's file fails: flush() and close() must still flush and close the others.
    with FaultyOS(tmp_path) as faults:
        w = SummaryWriter(tmp_path / "run", max_queue=1000, flush_secs=3600)
        w.add_scalars("m", {"a": 1.0, "b": 2.0}, 1)
        w.add_scalar("main", 1.0, 1)
        w.flush()
        sinks = w.sink._children  # type: ignore[attr-defined]
        failing = sinks["m_a"]._state.fd
        real_write = os.write

        def write_failing_one(fd: int, data: Any) -> int:
            if fd == failing:
                raise OSError(errno.EIO, "injected I/O error")
            return int(real_write(fd, data))

        os.write = write_failing_one
        try:
            w.add_scalars("m", {"a": 3.0, "b": 4.0}, 2)
            w.add_scalar("main", 2.0, 2)
            with pytest.raises(EventWriteError, match="injected"):
                w.close()
        finally:
            os.write = real_write
        assert faults.fds == {}, "every file must be closed"
    run = tmp_path / "run"
    assert check_event_file(event_files(str(run / "m_b"))[0]).steps("m") == [1, 2]
    main_file = next(p for p in event_files(str(run)) if os.path.dirname(p) == str(run))
    assert check_event_file(main_file).steps("main") == [1, 2]
    assert check_event_file(event_files(str(run / "m_a"))[0]).steps("m") == [1]


# -- full disk (real tmpfs) -----------------------------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Any:
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
        capture_output=True,
        timeout=30,
    )
    if done.returncode != 0:
        pytest.skip(f"mount not permitted: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def test_full_tmpfs_raises_keeps_records_and_recovers(small_tmpfs: Path) -> None:
    filler = small_tmpfs / "filler"
    filler.write_bytes(b"\0" * (600 << 10))
    w = SummaryWriter(small_tmpfs / "run", max_queue=5, flush_secs=3600)
    path = w.sink.path  # type: ignore[attr-defined]
    logged: list[int] = []
    error: EventWriteError | None = None
    for i in range(2000):  # 2000 x ~8 KiB records: far more than the 1 MiB disk holds
        try:
            w.add_scalar("big/" + "x" * 8000, float(i), i)
            logged.append(i)
            if i % 10 == 9:
                w.flush()
        except EventWriteError as exc:
            error = exc
            break
    assert error is not None, "the disk never filled"
    assert error.errno == errno.ENOSPC
    before = check_event_file(path)
    assert before.torn_tail_bytes == 0
    flushed = before.steps("big/" + "x" * 8000)
    assert flushed == logged[: len(flushed)]
    assert len(flushed) > 10
    filler.unlink()  # free the disk: the kept records are retried
    w.flush()
    w.close()
    after = check_event_file(path).steps("big/" + "x" * 8000)
    assert after == logged
    report("faults.tmpfs_full", records_before_full=len(flushed), records_after=len(after))


# -- permission denied ----------------------------------------------------------------------------


def test_permission_denied_at_construction_and_for_a_new_subrun(tmp_path: Path) -> None:
    with FaultyOS(tmp_path) as faults:
        faults.open_errno = errno.EACCES
        with pytest.raises(PermissionError):
            SummaryWriter(tmp_path / "denied")
        faults.open_errno = None
        w = SummaryWriter(tmp_path / "run")
        w.add_scalar("a", 1.0, 1)
        faults.open_errno = errno.EACCES
        with pytest.raises(PermissionError):
            w.add_scalars("m", {"k": 1.0}, 1)
        w.add_scalar("a", 2.0, 2)  # the open file is unaffected
        w.flush()
        faults.open_errno = None
        w.add_scalars("m", {"k": 3.0}, 3)
        w.close()
    run = tmp_path / "run"
    main_file = next(p for p in event_files(str(run)) if os.path.dirname(p) == str(run))
    assert check_event_file(main_file).steps("a") == [1, 2]
    assert check_event_file(event_files(str(run / "m_k"))[0]).steps("m") == [3]


@pytest.mark.skipif(
    not hasattr(os, "setuid") or os.geteuid() != 0, reason="needs root to become nobody"
)
def test_permission_denied_for_real_as_nobody() -> None:
    base = tempfile.mkdtemp(prefix="npsummary-nobody-")
    try:
        os.chmod(base, 0o755)
        os.mkdir(os.path.join(base, "root_owned"), 0o755)
        os.mkdir(os.path.join(base, "mine"), 0o755)
        os.chown(os.path.join(base, "mine"), 65534, 65534)
        out = subprocess.run(
            [sys.executable, CHILD, "nobody", base],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if out.returncode != 0 and "Permission denied" in out.stderr and "import" in out.stderr:
            pytest.skip("the package is not readable by nobody here")
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout.splitlines()[-1])
        assert result["uid"] == 65534
        assert result["construct"] == f"PermissionError:{errno.EACCES}"
        assert result["subrun"] == f"PermissionError:{errno.EACCES}:False"
        assert len(result["files"]) == 1
        (name,) = result["files"]
        assert check_event_file(os.path.join(base, "mine", name)).steps("a") == [1, 3]
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- logdir removed -------------------------------------------------------------------------------


def test_logdir_removed_while_running(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    w = SummaryWriter(logdir, max_queue=1000, flush_secs=3600)
    w.add_scalar("a", 0.0, 0)
    w.add_scalars("m", {"k": 0.0}, 0)
    w.flush()
    shutil.rmtree(logdir)
    w.add_scalar("a", 1.0, 1)
    w.add_scalars("m", {"k": 1.0}, 1)
    with pytest.raises(EventWriteError) as info:
        w.flush()
    assert info.value.errno == errno.ENOENT
    assert "removed" in str(info.value)
    # Logging goes on in a new file in the recreated directory; nothing logged since is lost.
    w.add_scalar("a", 2.0, 2)
    w.add_scalars("m", {"k": 2.0}, 2)
    w.close()
    main = [p for p in event_files(str(logdir)) if os.path.dirname(p) == str(logdir)]
    assert len(main) == 1
    assert check_event_file(main[0]).steps("a") == [1, 2]
    sub = event_files(str(logdir / "m_k"))
    assert len(sub) == 1
    assert check_event_file(sub[0]).steps("m") == [1, 2]


def test_logdir_replaced_by_a_file_fails_every_call_without_hanging(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    w = SummaryWriter(logdir, max_queue=1000, flush_secs=3600)
    w.add_scalar("a", 0.0, 0)
    w.flush()
    shutil.rmtree(logdir)
    logdir.write_bytes(b"not a directory")
    w.add_scalar("a", 1.0, 1)
    with pytest.raises(EventWriteError):
        w.flush()
    with pytest.raises(EventWriteError):
        w.flush()  # still failing: raised again, not swallowed
    with pytest.raises(EventWriteError) as info:
        w.close()
    assert "1 record" in str(info.value)
    w.close()  # idempotent once closed


# -- exceptions other than OSError while writing ------------------------------------------------


def _steps_in_file(path: str) -> list[int]:
    return [e.step for e in check_event_file(path).events[1:]]


@pytest.mark.skipif(not hasattr(__import__("signal"), "setitimer"), reason="needs setitimer")
def test_keyboard_interrupt_during_flush_loses_nothing(tmp_path: Path) -> None:
    # Ctrl-C lands at a random moment of a long flush(): the records not yet written stay
    # pending, nothing is written twice, and the next flush() writes them (issue 13, item 3).
    import random
    import signal

    from npsummary._format.record import iter_records

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    rng = random.Random(13)
    rounds, per_round = (40, 50_000) if HEAVY else (12, 4_000)
    sink = FileSink(tmp_path / "run", flush_secs=3600, max_queue=10**9)
    payload = _payload(0)
    for _ in range(per_round):  # how long does one flush take here?
        sink.write(payload)
    start = time.perf_counter()
    sink.flush()
    duration = time.perf_counter() - start
    previous = signal.signal(signal.SIGALRM, interrupt)
    interrupted = 0
    try:
        for r in range(1, rounds):
            for i in range(r * per_round, (r + 1) * per_round):
                sink.write(_payload(i) if i % 997 == 0 else payload)
            try:
                signal.setitimer(signal.ITIMER_REAL, max(1e-5, rng.random() * duration))
                sink.flush()
                signal.setitimer(signal.ITIMER_REAL, 0)
            except KeyboardInterrupt:
                signal.setitimer(signal.ITIMER_REAL, 0)
                interrupted += 1
            sink.flush()  # not interrupted: everything logged so far is now in the file
            records = list(iter_records(Path(sink.path).read_bytes()))
            assert len(records) == 1 + (r + 1) * per_round, (r, len(records))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sink.close()
    # Nothing reordered either: the marked records are where they were logged.
    marked = [i for i, rec in enumerate(records[1:]) if rec != payload]
    assert marked == [i for i in range(per_round, rounds * per_round) if i % 997 == 0]
    assert interrupted >= rounds // 3, interrupted
    report(
        "faults.interrupted_flush",
        rounds=rounds - 1,
        interrupted=interrupted,
        records=rounds * per_round,
    )


@pytest.mark.parametrize("partial", [False, True], ids=["before-write", "mid-write"])
def test_any_exception_while_writing_keeps_the_records(
    tmp_path: Path, monkeypatch: Any, partial: bool
) -> None:
    # MemoryError (or any non-OSError) from the write itself, possibly after part of the batch
    # reached the file: the file is cut back, the records stay pending and are written later.
    sink = FileSink(tmp_path / "run", flush_secs=3600, max_queue=10**9)
    fd = sink._state.fd
    real_write = os.write
    calls = 0

    def failing_write(target: int, data: Any) -> int:
        nonlocal calls
        if target != fd:
            return int(real_write(target, data))
        calls += 1
        if partial and calls == 1:
            return int(real_write(target, memoryview(data)[: len(data) // 2]))
        raise MemoryError("injected")

    for i in range(100):
        sink.write(_payload(i))
    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(MemoryError):
        sink.flush()
    monkeypatch.setattr(os, "write", real_write)
    sink.write(_payload(100))
    sink.close()
    assert _steps_in_file(sink.path) == list(range(101))


# -- add_scalars is all or nothing ---------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.EMFILE, errno.EACCES, errno.EEXIST])
@pytest.mark.parametrize("existing", [True, False], ids=["others-exist", "all-new"])
def test_add_scalars_writes_nothing_when_a_subrun_cannot_be_created(
    tmp_path: Path, monkeypatch: Any, code: int, existing: bool
) -> None:
    # The third sub-run cannot be created: the call raises and the first two keys are not
    # written either (issue 13, item 9). Once the cause is gone the same call logs all three.
    w = SummaryWriter(tmp_path / "run", flush_secs=3600, max_queue=1000)
    if existing:
        w.add_scalars("m", {"a": 0.0, "b": 0.0}, 0)
    real_open = os.open

    def refusing_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if f"{os.sep}m_c{os.sep}" in os.fspath(path):
            raise OSError(code, os.strerror(code), os.fspath(path))
        return int(real_open(path, flags, mode, **kw))

    blocker = tmp_path / "run" / "m_c"
    if code == errno.EEXIST:
        blocker.write_bytes(b"")  # a file where the sub-run's directory must go
    else:
        monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(OSError) as info:
        w.add_scalars("m", {"a": 1.0, "b": 2.0, "c": 3.0}, 1)
    assert info.value.errno == code
    monkeypatch.setattr(os, "open", real_open)
    if code == errno.EEXIST:
        blocker.unlink()
    w.add_scalars("m", {"a": 1.5, "b": 2.5, "c": 3.5}, 2)
    w.close()
    run = tmp_path / "run"
    for key in "ab":
        (path,) = event_files(str(run / f"m_{key}"))
        assert check_event_file(path).steps("m") == ([0, 2] if existing else [2])
    (path,) = event_files(str(run / "m_c"))
    assert check_event_file(path).steps("m") == [2]
