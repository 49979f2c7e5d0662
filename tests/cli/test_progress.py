"""The progress line of ``npsummary inspect`` and ``export``: on a terminal only, escaped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npsummary._format.record import frame_record
from npsummary.proto import Event

pty = pytest.importorskip("pty")


def _sweep(root: Path) -> Path:
    for name in ("a", "b\x1b[31m", "c"):
        ev = Event(wall_time=1.0, step=1)
        ev.summary.value.add(tag="loss", simple_value=0.5)
        (root / name).mkdir(parents=True)
        (root / name / "events.out.tfevents.1.h").write_bytes(frame_record(ev.SerializeToString()))
    return root


def _stderr_on_a_terminal(*args: str | Path, cwd: Path) -> tuple[int, bytes, str]:
    """Exit status, stdout (a pipe) and stderr (a pseudo-terminal) of the command."""
    master, slave = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "npsummary", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=slave,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            timeout=300,
            env={**os.environ, "PYTHONWARNINGS": "error"},
        )
    finally:
        os.close(slave)
    seen = b""
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not data:
            break
        seen += data
    os.close(master)
    return result.returncode, result.stdout, seen.decode("utf-8", "replace")


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_progress_line_on_a_terminal_names_runs_escaped(tmp_path: Path, command: str) -> None:
    logdir = _sweep(tmp_path / "logs")
    extra = ["--format", "csv", "--out", str(tmp_path / "out")] if command == "export" else []
    status, stdout, stderr = _stderr_on_a_terminal(command, logdir, *extra, cwd=tmp_path)
    assert status == 0, stderr
    want = (
        "reading 1/3 runs (33%), 1 records, run 'a'"
        if command == "inspect"
        else "reading 1 runs, 1 records, run 'a'"
    )
    assert want in stderr
    assert "\x1b[31m" not in stderr and b"\r" not in stdout  # escaped; never on stdout
    assert "\r\x1b[K" in stderr  # the line is cleared when done


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_no_progress_line_in_a_pipe(tmp_path: Path, command: str) -> None:
    logdir = _sweep(tmp_path / "logs")
    extra = ["--format", "csv", "--out", str(tmp_path / "out")] if command == "export" else []
    result = subprocess.run(
        [sys.executable, "-m", "npsummary", command, str(logdir), *extra],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0 and "reading" not in result.stderr
