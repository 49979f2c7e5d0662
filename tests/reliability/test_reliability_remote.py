"""Remote runs under concurrency, exit and fork (issue 20's adversarial suite for URL logdirs).

The store is ``objdir://`` (tests/support/objstore.py): an object store on a local folder that
several processes share, with whole-object puts and an atomic conditional create, as S3 has.

* Several processes write one URL at once, with the same PID and counter (containers on one
  host, each in its own PID namespace): every record of every process is stored exactly once,
  in its order, and no object is ever replaced.
* Processes that end without ``close()`` (normal exit, ``sys.exit``, an uncaught exception,
  ``SIGTERM``) have every record they logged uploaded.
* ``os.fork()`` of a process with an open remote run: parent and child both keep logging, under
  names of their own; nothing is lost or duplicated.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import raw_records
from paths import SUPPORT

pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")
from npsummary import proto

pytestmark = pytest.mark.remote

_CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import objstore
objstore.register()
url, tag, n, ending, same_pid = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
if same_pid == "1":  # another container on this host: same PID, same counter
    from npsummary._sinks import segment_state
    segment_state.os.getpid = lambda: 1
    segment_state._next_counter = lambda: 0
from npsummary import SummaryWriter
writer = SummaryWriter(url, flush_secs=0.05)
for i in range(n):
    writer.add_scalar(tag, float(i), i)
    if i % 25 == 0:
        writer.add_scalars("m", {tag: float(i)}, i)
    if i % 40 == 0:
        writer.flush()
if ending == "fork":
    pid = os.fork()
    who = "child" if pid == 0 else "parent"
    for i in range(n):
        writer.add_scalar(f"{tag}-{who}", float(i), i)
    if pid == 0:
        writer.close()
        os._exit(0)
    os.waitpid(pid, 0)
if ending == "close":
    writer.close()
elif ending == "sysexit":
    sys.exit(3)
elif ending == "raise":
    raise RuntimeError("the training crashed")
elif ending == "sigterm":
    print("ready", flush=True)
    time.sleep(60)
"""

_EXIT_CODES = {"close": 0, "exit": 0, "fork": 0, "sysexit": 3, "raise": 1}


def _start(
    logdir: str, tag: str, n: int, ending: str, same_pid: bool, cwd: Path
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(SUPPORT),
            logdir,
            tag,
            str(n),
            ending,
            "1" if same_pid else "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
    )


def _series(run: Path) -> dict[str, list[tuple[int, float]]]:
    """tag -> (step, value) of every record of every event file directly in ``run``, files in
    name order (the order TensorBoard reads them)."""
    out: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for path in sorted(run.iterdir()):
        if "tfevents" not in path.name:
            continue
        for payload in raw_records(path)[1:]:
            event = proto.Event.FromString(payload)
            for value in event.summary.value:
                if value.WhichOneof("value") == "simple_value":
                    number = value.simple_value
                else:
                    number = struct.unpack("<f", value.tensor.tensor_content)[0]
                out[value.tag].append((event.step, number))
    return out


def _objects(run: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in run.rglob("*") if p.is_file()}


@pytest.mark.parametrize("scheme", ["objdir", "file"])
@pytest.mark.parametrize("same_pid", [True, False], ids=["same-pid", "own-pid"])
def test_processes_writing_one_url_keep_every_record(
    tmp_path: Path, scheme: str, same_pid: bool
) -> None:
    run = tmp_path / "run"
    url = f"objdir://{run}" if scheme == "objdir" else run.as_uri()
    n, processes = 200, 4
    children = [
        _start(url, f"p{i}", n, "close" if i % 2 else "exit", same_pid, tmp_path)
        for i in range(processes)
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    series = _series(run)
    for i in range(processes):
        assert series[f"p{i}"] == [(s, float(s)) for s in range(n)], f"process {i}"
    for i in range(processes):
        assert _series(run / f"m_p{i}")["m"] == [(s, float(s)) for s in range(0, n, 25)]
    assert list(tmp_path.iterdir()) == [run], "something was written outside the run"


@pytest.mark.parametrize("ending", ["exit", "sysexit", "raise", "sigterm"])
def test_a_process_ending_without_close_uploads_what_it_logged(tmp_path: Path, ending: str) -> None:
    run = tmp_path / "run"
    child = _start(f"objdir://{run}", "loss", 120, ending, False, tmp_path)
    if ending == "sigterm":
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    if ending == "sigterm":
        assert child.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM), err
    else:
        assert child.returncode == _EXIT_CODES[ending], err
    assert _series(run)["loss"] == [(s, float(s)) for s in range(120)]
    assert _series(run / "m_loss")["m"] == [(s, float(s)) for s in range(0, 120, 25)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("same_pid", [True, False], ids=["same-pid", "own-pid"])
def test_fork_with_an_open_remote_run(tmp_path: Path, same_pid: bool) -> None:
    run = tmp_path / "run"
    child = _start(f"objdir://{run}", "w", 150, "fork", same_pid, tmp_path)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    series = _series(run)
    expected = [(s, float(s)) for s in range(150)]
    assert series["w"] == expected  # logged before the fork: once, not again by the child
    assert series["w-parent"] == expected
    assert series["w-child"] == expected
    names = [p.name for p in run.iterdir() if "tfevents" in p.name]
    assert len(names) == len(set(names))
