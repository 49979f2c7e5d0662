"""Crash safety: a writer process SIGKILLed at random points under heavy mixed logging.

Each round starts ``_reliability_child.py crash`` (add_scalar, add_scalars sub-runs, large records,
``flush()`` at random), which reports on a pipe, after every ``flush()`` returns, how many calls it
had made before it. The parent waits for a random number of such reports, lets the child run on
for a random fraction of a millisecond to 20 ms, and SIGKILLs it. Then, for every file the child
created:

* our reader and TensorBoard's (``RawEventFileLoader``, and ``EventAccumulator`` over the run)
  read the same records; every record passes both CRCs;
* at most one torn record, and only at the tail (a write the kill cut short);
* the records are exactly a prefix of what the child logged to that file, in order: nothing
  duplicated, reordered or skipped;
* everything logged before the last completed ``flush()`` is present.

The child follows a schedule derived from its seed (:func:`crash_plan`), so the parent knows which
record every call wrote. Default: 30 kills; ``NPSUMMARY_HEAVY=1``: 300 more (``-m heavy``).
"""

from __future__ import annotations

import os
import random
import select
import signal
import struct
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _reliability_child import (
    CHILD,
    CRASH_KINDS,
    HEAVY,
    check_event_file,
    crash_plan,
    event_files,
    report,
)
from npsummary import SummaryWriter

DEFAULT_KILLS = 15  # the default run (its seeds fixed); heavy: 300, drawn anew
HEAVY_KILLS = 300
CHILD_TIMEOUT = 60.0


class _Lines:
    """Lines from a pipe, with a deadline on every read (a dead or stuck child fails the test)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.eof = False

    def read(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                self.eof = True
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


def _kill_one(logdir: Path, seed: int, rng: random.Random, err_path: Path) -> tuple[int, int]:
    """Run one crash child and SIGKILL it; return (pid, calls logged before its last flush)."""
    read_fd, write_fd = os.pipe()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, CHILD, "crash", str(logdir), str(write_fd), str(seed)],
            pass_fds=(write_fd,),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    os.close(write_fd)
    lines = _Lines(read_fd)
    flushed = 0
    try:
        first = lines.read(CHILD_TIMEOUT)
        assert first == "ready", f"child did not start: {err_path.read_text()}"
        reports = rng.choice([0, 0, 1, 1, 2, 3, 5, 8])
        while reports:
            line = lines.read(CHILD_TIMEOUT)
            assert line is not None, f"child stopped early: {err_path.read_text()}"
            if line != "f":
                flushed = int(line)
                reports -= 1
        if rng.random() < 0.3:
            # Aim at a flush in progress: kill as soon as the child says it starts one.
            while (line := lines.read(CHILD_TIMEOUT)) not in ("f", None):
                flushed = int(line)
        else:
            # Let it run on for a random moment so the kill lands anywhere: inside a logging
            # call, a background write or a sub-run's file creation.
            pause = rng.choice([0.0, 1e-4, 1e-3, 5e-3, 2e-2]) * rng.random()
            deadline = time.monotonic() + pause
            while (left := deadline - time.monotonic()) > 0:
                line = lines.read(left)
                if line is None:
                    break
                if line != "f":
                    flushed = int(line)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=CHILD_TIMEOUT)
    # Reports written before the kill are guarantees too.
    while (line := lines.read(CHILD_TIMEOUT)) is not None:
        if line != "f":
            flushed = int(line)
    os.close(read_fd)
    assert proc.returncode == -signal.SIGKILL, f"child died on its own: {err_path.read_text()}"
    return proc.pid, flushed


def _value(event: Any) -> float | None:
    value = event.summary.value[0]
    if value.WhichOneof("value") == "simple_value":  # SummaryWriter's scalars, as tensorboardX
        return float(value.simple_value)
    content = value.tensor.tensor_content
    return float(struct.unpack("<f", content)[0]) if len(content) == 4 else None


def _expected(seed: int, calls: int) -> dict[str, list[tuple[int, str, float | None]]]:
    """Per run directory, the (step, tag, value) records that the first ``calls`` calls wrote."""
    out: dict[str, list[tuple[int, str, float | None]]] = defaultdict(list)
    for i, kind, _flush in crash_plan(seed):
        if i >= calls:
            break
        for run, tag in CRASH_KINDS[kind][1].items():
            value = (
                None
                if kind in ("histogram", "image")
                else -float(i)
                if run == "pair_b"
                else float(i)
            )
            out[run].append((i, tag, value))
    return out


def _verify(logdir: Path, pid: int, seed: int, flushed: int) -> dict[str, int]:
    files = [p for p in event_files(str(logdir)) if f".{pid}." in os.path.basename(p)]
    assert files, f"no event file from pid {pid}"
    found: dict[str, list[tuple[int, str, float | None]]] = {}
    torn = 0
    for path in files:
        run = os.path.relpath(os.path.dirname(path), logdir)
        assert run not in found, f"two files for run {run!r}: {files}"
        check = check_event_file(path)
        torn += check.torn_tail_bytes > 0
        found[run] = [(e.step, e.summary.value[0].tag, _value(e)) for e in check.events[1:]]
    last = max((r[0] for recs in found.values() for r in recs), default=-1)
    expected = _expected(seed, max(flushed, last + 1))
    for run, records in found.items():
        want = expected.get(run, [])
        got = [(s, t if not t.startswith("big/") else "big/", v) for s, t, v in records]
        assert got == want[: len(got)], f"{run}: not a prefix of what was logged (seed {seed})"
    durable = _expected(seed, flushed)
    for run, want in durable.items():
        count = len(found.get(run, []))
        assert count >= len(want), (
            f"{run}: {count} records, but {len(want)} were logged before the last flush "
            f"(seed {seed}, {flushed} calls flushed)"
        )
    return {
        "records": sum(len(r) for r in found.values()),
        "durable": sum(len(r) for r in durable.values()),
        "torn": torn,
        "files": len(files),
    }


def _tensorboard_reads_run(logdir: Path, found_main: int) -> None:
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea

    acc = pea.EventAccumulator(str(logdir), size_guidance=pea.STORE_EVERYTHING_SIZE_GUIDANCE)
    acc.Reload()
    tags = acc.Tags()["tensors"]
    loaded = sum(len(acc.Tensors(tag)) for tag in tags)
    assert loaded == found_main


def _crash_rounds(tmp_path: Path, kills: int, seed0: int, name: str) -> None:
    rng = random.Random(seed0)
    totals = {"records": 0, "durable": 0, "torn": 0, "files": 0}
    start = time.monotonic()
    for k in range(kills):
        seed = rng.randrange(1 << 30)
        logdir = tmp_path / f"kill{k}"
        pid, flushed = _kill_one(logdir, seed, rng, tmp_path / f"kill{k}.stderr")
        figures = _verify(logdir, pid, seed, flushed)
        main = next(
            (p for p in event_files(str(logdir)) if os.path.dirname(p) == str(logdir)), None
        )
        if main is not None:
            _tensorboard_reads_run(logdir, len(check_event_file(main).events) - 1)
        for key, value in figures.items():
            totals[key] += value
    report(
        name,
        kills_survived=kills,
        records_checked=totals["records"],
        records_flushed_before_kill=totals["durable"],
        torn_tails_seen=totals["torn"],
        files_checked=totals["files"],
        seconds=round(time.monotonic() - start, 1),
    )
    assert totals["durable"] > 0, "no kill came after a flush: the test checked nothing durable"


def test_sigkill_at_random_points_loses_nothing_flushed(tmp_path: Path) -> None:
    _crash_rounds(tmp_path, DEFAULT_KILLS, seed0=20261130, name="crash.default")


@pytest.mark.heavy
@pytest.mark.skipif(not HEAVY, reason="set NPSUMMARY_HEAVY=1")
def test_sigkill_heavy(tmp_path: Path) -> None:
    _crash_rounds(tmp_path, HEAVY_KILLS, seed0=int(time.time()), name="crash.heavy")


def test_checks_catch_what_they_must(tmp_path: Path) -> None:
    """The verification above is not vacuous: it rejects a corrupt or mid-file torn record, a
    record missing although flushed, and a duplicated one; it accepts one torn tail."""
    from npsummary import SummaryWriter
    from npsummary._format.record import frame_record

    seed = 7
    logdir = tmp_path / "run"
    calls = 40
    with SummaryWriter(logdir) as w:
        for i, kind, _flush in crash_plan(seed):
            if i >= calls:
                break
            CRASH_KINDS[kind][0](w, i)
    pid = os.getpid()
    main = next(p for p in event_files(str(logdir)) if os.path.dirname(p) == str(logdir))
    good = Path(main).read_bytes()
    assert _verify(logdir, pid, seed, calls)["torn"] == 0

    last = frame_record(check_event_file(main).payloads[-1])
    Path(main).write_bytes(good + last[: len(last) // 2])  # one torn tail: fine
    assert _verify(logdir, pid, seed, calls)["torn"] == 1

    bad = bytearray(good)
    bad[len(good) // 2] ^= 0x01  # a flipped bit in the middle
    Path(main).write_bytes(bytes(bad))
    with pytest.raises(AssertionError):
        _verify(logdir, pid, seed, calls)

    Path(main).write_bytes(good + last[:20] + last)  # torn record followed by more records
    with pytest.raises(AssertionError):
        _verify(logdir, pid, seed, calls)

    Path(main).write_bytes(good[: len(good) - len(last)])  # a flushed record missing
    with pytest.raises(AssertionError, match="before the last flush"):
        _verify(logdir, pid, seed, calls)

    Path(main).write_bytes(good + last)  # a record written twice
    with pytest.raises(AssertionError, match="prefix"):
        _verify(logdir, pid, seed, calls)


_LOCK_HOLDER = """
import sys
from npsummary._sinks.projector import _os_lock
with _os_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()  # until killed
"""


def test_a_process_killed_holding_the_projector_lock_blocks_no_one(tmp_path: Path) -> None:
    """SIGKILL inside ``add_embedding``'s config update: the kernel releases the lock, the file
    stays behind; the next writer takes it, adds its entry and removes it (issue 29 item 8)."""
    run = tmp_path / "run"
    run.mkdir()
    lock = run / ".projector_config.lock"
    with subprocess.Popen(
        [sys.executable, "-c", _LOCK_HOLDER, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "held"
            assert lock.exists()
        finally:
            holder.kill()
            holder.wait(timeout=60)
    assert lock.exists()  # a killed holder cannot clean up
    with SummaryWriter(run) as writer:
        writer.add_embedding(np.eye(2))
    assert not lock.exists()
    assert "default:00000" in (run / "projector_config.pbtxt").read_text()
