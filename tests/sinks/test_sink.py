"""Event files: naming, exclusive creation, first record, flushing, errors, exit and fork."""

from __future__ import annotations

import errno
import gc
import itertools
import os
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

import npsummary
from conftest import event_files, only_event_file, raw_records, read_events, wait_for
from npsummary import EventSink, EventWriteError, FileSink, MemorySink, SummaryWriter
from npsummary._format.record import frame_record, iter_records
from npsummary._format.wire import encode_event
from npsummary._format.wire import encode_summary as summary_bytes
from npsummary._sinks import base as _base
from npsummary._sinks import eventfile as _eventfile
from npsummary._sinks import file as _events
from npsummary._summaries.scalar import scalar_value

NAME = re.compile(
    r"events\.out\.tfevents\.(?P<secs>\d{10})\.(?P<host>.+)\.(?P<pid>\d+)\.(?P<n>\d+)(?P<sfx>.*)"
)
FROZEN = 1_700_000_000.5
SRC = str(Path(npsummary.__file__).resolve().parents[1])


def event(step: int, value: float = 0.0) -> bytes:
    return encode_event(1000.0 + step, step, summary_bytes([scalar_value("x", value)]))


def steps_in(path: Path) -> list[int]:
    return [e.step for e in read_events(path) if e.HasField("summary")]


def file_records(path: Path) -> list[bytes]:
    return list(iter_records(path.read_bytes()))


@pytest.fixture
def frozen_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every new event file is created in the same second; the counter restarts at 0."""
    clock = types.SimpleNamespace(time=lambda: FROZEN, monotonic=time.monotonic)
    monkeypatch.setattr(_eventfile, "time", clock)
    monkeypatch.setattr(_eventfile, "_file_counter", itertools.count())


def run_script(code: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stderr
    return result


# --- names and creation ---------------------------------------------------------------------


def test_sinks_satisfy_protocol(logdir: Path) -> None:
    sink = FileSink(logdir)
    try:
        assert isinstance(sink, EventSink)
        assert isinstance(MemorySink(), EventSink)
    finally:
        sink.close()


def test_file_name_pattern(logdir: Path) -> None:
    before = int(time.time())
    sink = FileSink(logdir, ".sfx")
    after = int(time.time())
    sink.close()
    path = only_event_file(logdir)
    assert path == Path(sink.path)
    match = NAME.fullmatch(path.name)
    assert match, path.name
    assert before <= int(match["secs"]) <= after
    assert match["host"] == socket.gethostname()
    assert int(match["pid"]) == os.getpid()
    assert match["sfx"] == ".sfx"


def test_suffix_is_appended_verbatim(logdir: Path) -> None:
    for suffix in ("", "x", ".v2"):
        sink = FileSink(logdir, suffix)
        sink.close()
        match = NAME.fullmatch(Path(sink.path).name)
        assert match
        assert sink.path.endswith(f".{match['n']}{suffix}")


@pytest.mark.usefixtures("frozen_time")
def test_same_second_writers_get_distinct_files(logdir: Path) -> None:
    a = FileSink(logdir, flush_secs=1000, max_queue=1000)
    b = FileSink(logdir, flush_secs=1000, max_queue=1000)
    assert a.path != b.path
    for step in range(3):
        a.write(event(step))
        b.write(event(100 + step))
    a.flush()
    b.flush()
    a.close()
    b.close()
    assert steps_in(Path(a.path)) == [0, 1, 2]
    assert steps_in(Path(b.path)) == [100, 101, 102]
    names = [NAME.fullmatch(p.name) for p in event_files(logdir)]
    assert all(names) and {m["secs"] for m in names if m} == {f"{int(FROZEN):010d}"}


@pytest.mark.usefixtures("frozen_time")
def test_existing_file_is_never_truncated_or_appended(logdir: Path) -> None:
    logdir.mkdir()
    taken = f"events.out.tfevents.{int(FROZEN):010d}.{socket.gethostname()}.{os.getpid()}.0000"
    existing = logdir / taken
    existing.write_bytes(b"someone else's data")
    sink = FileSink(logdir)
    sink.write(event(1))
    sink.close()
    assert existing.read_bytes() == b"someone else's data"
    assert Path(sink.path).name.endswith(".0001")
    assert steps_in(Path(sink.path)) == [1]


def test_first_record_on_disk_before_any_flush(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000)
    try:
        path = Path(sink.path)
        (first,) = read_events(path)  # the file is read while the sink is still open
        assert first.file_version == "brain.Event:2"
        assert first.source_metadata.writer == _events.SOURCE_WRITER
        assert first.wall_time == int(first.wall_time)
        assert abs(first.wall_time - time.time()) < 60
        assert not first.HasField("summary")
        assert first.step == 0
        sink.write(event(1))
        assert len(raw_records(path)) == 1  # still pending in memory
    finally:
        sink.close()
    assert [e.step for e in read_events(path)] == [0, 1]


def test_nested_directories_are_created(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    with SummaryWriter(deep) as writer:
        writer.add_scalar("x", 1.0, 1)
    assert only_event_file(deep).stat().st_size > 0


def test_concurrent_creation_in_one_tree(tmp_path: Path) -> None:
    n = 8
    barrier = threading.Barrier(n)
    sinks: list[FileSink] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def make(i: int) -> None:
        try:
            barrier.wait()
            sink = FileSink(tmp_path / "shared" / "deep" / ("x" if i % 2 else "y"))
            with lock:
                sinks.append(sink)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=make, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors
    for sink in sinks:
        sink.close()
    paths = {s.path for s in sinks}
    assert len(paths) == n
    files = event_files(tmp_path / "shared" / "deep" / "x") + event_files(
        tmp_path / "shared" / "deep" / "y"
    )
    assert {str(p) for p in files} == paths
    for path in files:
        assert read_events(path)[0].file_version == "brain.Event:2"


# --- flushing -------------------------------------------------------------------------------


def test_default_flush_interval_is_a_few_seconds() -> None:
    assert 0 < _base.DEFAULT_FLUSH_SECS <= 5
    assert _base.DEFAULT_MAX_QUEUE == 10


def test_flush_writes_everything_logged_before_it(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000)
    try:
        path = Path(sink.path)
        for step in range(50):
            sink.write(event(step))
        sink.flush()
        assert steps_in(path) == list(range(50))
        sink.write(event(50))
        sink.flush()
        assert steps_in(path) == list(range(51))
        sink.flush()  # nothing pending: harmless
        assert steps_in(path) == list(range(51))
    finally:
        sink.close()


def test_data_reaches_file_within_flush_secs_without_calls(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=0.2, max_queue=1000)
    try:
        path = Path(sink.path)
        sink.write(event(1))
        sink.write(event(2))
        assert wait_for(lambda: steps_in(path) == [1, 2])
        # A second batch is scheduled afresh.
        sink.write(event(3))
        assert wait_for(lambda: steps_in(path) == [1, 2, 3])
    finally:
        sink.close()


def test_max_queue_triggers_background_write(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=3)
    try:
        path = Path(sink.path)
        for step in range(4):
            sink.write(event(step))
        assert wait_for(lambda: steps_in(path) == [0, 1, 2, 3])
    finally:
        sink.close()


def test_records_beyond_pending_bound_are_written_not_dropped(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000, max_pending_bytes=1000)
    big = [bytes([i]) * 600 for i in range(7)]
    for payload in big:
        sink.write(payload)
    sink.close()
    assert file_records(Path(sink.path))[1:] == big


def test_unclosed_sink_is_flushed_when_collected(logdir: Path) -> None:
    # The collector only hands the file to the background thread (a finalizer takes no lock and
    # does no I/O), which writes and closes it soon after.
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000)
    path = Path(sink.path)
    state = sink._state
    sink.write(event(7))
    del sink
    gc.collect()
    assert wait_for(lambda: state.closed)
    assert steps_in(path) == [7]


# --- close ----------------------------------------------------------------------------------


def test_close_is_idempotent_and_final(logdir: Path) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000)
    sink.write(event(1))
    sink.close()
    size = Path(sink.path).stat().st_size
    sink.close()
    sink.flush()  # a no-op once closed
    assert Path(sink.path).stat().st_size == size
    with pytest.raises(ValueError, match="closed"):
        sink.write(event(2))
    assert steps_in(Path(sink.path)) == [1]


def test_children_are_sibling_runs_closed_with_parent(logdir: Path) -> None:
    sink = FileSink(logdir, ".sfx", flush_secs=1000, max_queue=1000)
    child = sink.child("sub")
    assert sink.child("sub") is child
    child.write(event(5))
    sink.flush()
    assert steps_in(Path(child.path)) == [5]
    assert Path(child.path).parent == logdir / "sub"
    assert child.path.endswith(".sfx")
    child.write(event(6))
    sink.close()
    assert steps_in(Path(child.path)) == [5, 6]
    with pytest.raises(ValueError):
        child.write(event(7))


def test_memory_sink() -> None:
    sink = MemorySink()
    sink.write(b"a")
    sink.child("c").write(b"b")
    sink.flush()
    assert sink.payloads == [b"a"] and sink.children["c"].payloads == [b"b"]
    assert sink.flushes == 1
    sink.close()
    assert sink.closed and sink.children["c"].closed
    with pytest.raises(ValueError):
        sink.write(b"c")


# --- background errors ----------------------------------------------------------------------


@pytest.fixture
def dev_full() -> int:
    try:
        fd = os.open("/dev/full", os.O_WRONLY)
    except OSError:
        pytest.skip("/dev/full is not available")
    try:
        os.write(fd, b"x")
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            return fd
    os.close(fd)
    pytest.skip("/dev/full does not fail writes with ENOSPC")


class DiskFull:
    """Points a sink's descriptor at /dev/full and back."""

    def __init__(self, sink: FileSink, full_fd: int) -> None:
        self.fd = sink._state.fd
        self.saved = os.dup(self.fd)
        self.full_fd = full_fd

    def __enter__(self) -> DiskFull:
        os.dup2(self.full_fd, self.fd)
        return self

    def __exit__(self, *exc: object) -> None:
        os.dup2(self.saved, self.fd)
        os.close(self.saved)
        os.close(self.full_fd)


def test_background_error_raised_on_next_call_then_recovers(logdir: Path, dev_full: int) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=0)
    path = Path(sink.path)
    state = sink._state
    with DiskFull(sink, dev_full):
        sink.write(event(1))  # max_queue=0: the flusher writes it at once, and fails
        assert wait_for(lambda: state.failing)
        with pytest.raises(EventWriteError) as info:
            sink.write(event(2))
        assert info.value.errno == errno.ENOSPC
        assert isinstance(info.value, OSError)
        assert path.name in str(info.value)
        assert "retried" in str(info.value)
    # Reported once: once the disk has room, the next call queues normally again.
    sink.write(event(3))
    sink.flush()
    # Record 1 was kept and retried; record 2's call raised, so it was never queued.
    assert steps_in(path) == [1, 3]
    sink.write(event(4))
    sink.close()
    assert steps_in(path) == [1, 3, 4]


def test_flush_raises_synchronous_write_error(logdir: Path, dev_full: int) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000)
    path = Path(sink.path)
    with DiskFull(sink, dev_full):
        sink.write(event(1))
        with pytest.raises(EventWriteError):
            sink.flush()
    sink.flush()
    sink.close()
    assert steps_in(path) == [1]


def test_summary_writer_surfaces_error_and_stays_usable(logdir: Path, dev_full: int) -> None:
    from conftest import read_scalars, scalar_values

    writer = SummaryWriter(logdir, flush_secs=1000, max_queue=1000)
    sink = writer.sink
    assert isinstance(sink, FileSink)
    with DiskFull(sink, dev_full):
        writer.add_scalar("loss", 1.0, 1)
        with pytest.raises(EventWriteError):
            writer.flush()
    writer.add_scalar("loss", 2.0, 2)
    writer.flush()
    assert scalar_values(read_scalars(logdir)["loss"]) == [(1, 1.0), (2, 2.0)]
    writer.close()


def test_pending_bound_drops_and_counts_only_while_failing(logdir: Path, dev_full: int) -> None:
    sink = FileSink(logdir, flush_secs=1000, max_queue=1000, max_pending_bytes=1000)
    path = Path(sink.path)
    records = [bytes([i]) * 600 for i in range(10)]
    with DiskFull(sink, dev_full), pytest.raises(EventWriteError, match="1 records dropped"):
        # Over the bound the caller tries to write, fails, and drops that record; the next
        # call reports the failure with the count.
        for record in records:
            sink.write(record)
    sink.close()
    assert file_records(path)[1:] == records[:2]


# --- interpreter exit and fork --------------------------------------------------------------


def test_interpreter_exit_flushes(tmp_path: Path) -> None:
    run_script(
        """
        from npsummary import SummaryWriter, create_file_writer, scalar
        w = SummaryWriter("tbx", flush_secs=1000, max_queue=1000)
        for step in range(5):
            w.add_scalar("loss", step / 2, step)
        t = create_file_writer("tf2", flush_millis=10**6, max_queue=1000)
        t.set_as_default(step=3)
        scalar("acc", 0.25)
        keep = (w, t)  # alive at exit: no close, no flush, no garbage collection
        """,
        tmp_path,
    )
    from conftest import read_scalars, scalar_values

    assert scalar_values(read_scalars(tmp_path / "tbx")["loss"]) == [(s, s / 2) for s in range(5)]
    assert scalar_values(read_scalars(tmp_path / "tf2")["acc"]) == [(3, 0.25)]


FORK_SCRIPT = """
import os, sys
from npsummary import SummaryWriter
w = SummaryWriter("run", flush_secs=1000, max_queue=1000)
for step in range(5):
    w.add_scalar("loss", float(step), step)       # pending in the parent at fork time
pid = os.fork()
if pid == 0:
    w.add_scalar("loss", 100.0, 100)
    {child_exit}
w.add_scalar("loss", 5.0, 5)
_, status = os.waitpid(pid, 0)
w.close()
print(pid)
sys.exit(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize(
    "child_exit",
    ["w.flush(); os._exit(0)", "w.close(); os._exit(0)", "sys.exit(0)"],
    ids=["flush+_exit", "close+_exit", "normal-exit"],
)
def test_fork_child_writes_own_file_without_parent_records(tmp_path: Path, child_exit: str) -> None:
    result = run_script(FORK_SCRIPT.format(child_exit=child_exit), tmp_path)
    child_pid = int(result.stdout.split()[-1])
    files = event_files(tmp_path / "run")
    assert len(files) == 2
    by_pid = {int(NAME.fullmatch(p.name)["pid"]): p for p in files}  # type: ignore[index]
    assert child_pid in by_pid and len(by_pid) == 2
    child_file = by_pid.pop(child_pid)
    (parent_file,) = by_pid.values()
    assert steps_in(child_file) == [100]
    assert read_events(child_file)[0].file_version == "brain.Event:2"
    assert steps_in(parent_file) == [0, 1, 2, 3, 4, 5]
    # Both files are clean record streams.
    for path in files:
        assert b"".join(frame_record(r) for r in file_records(path)) == path.read_bytes()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_child_that_never_logs_creates_no_file(tmp_path: Path) -> None:
    run_script(
        FORK_SCRIPT.replace('w.add_scalar("loss", 100.0, 100)', "pass").format(
            child_exit="w.close(); os._exit(0)"
        ),
        tmp_path,
    )
    (parent_file,) = event_files(tmp_path / "run")
    assert steps_in(parent_file) == [0, 1, 2, 3, 4, 5]


def test_relative_logdir_stays_where_it_was_after_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative logdir names the directory of the moment the writer was made. After an
    # os.chdir the flush looked for "runs/x/<file>" in the new directory, took the file for
    # removed, reported its records lost and started a new file there: outside the logdir (the
    # full suite left runs/tf2_scoped/ in the checkout this way).
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    monkeypatch.chdir(tmp_path / "first")
    writer = SummaryWriter("runs/x")
    writer.add_scalar("loss", 1.0, 0)
    writer.flush()
    monkeypatch.chdir(tmp_path / "second")
    writer.add_scalar("loss", 2.0, 1)
    writer.flush()
    writer.close()
    assert list((tmp_path / "second").iterdir()) == []
    records = raw_records(only_event_file(tmp_path / "first" / "runs" / "x"))
    assert len(records) == 3  # the file version and both scalars
