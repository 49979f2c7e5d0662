"""The reader and the CLI (as a subprocess) on a logdir in a real S3 endpoint (moto_server on
127.0.0.1 behind the loopback proxy, through s3fs). Skipped where s3fs/moto are not installed;
the CI stage .ci/stages/50-remote.sh installs them and runs this file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("s3fs", reason="the S3 tests need s3fs (pip install s3fs 'moto[server]')")
pytest.importorskip("moto", reason="the S3 tests need moto[server]")

from npsummary import reader
from npsummary._format.record import frame_record
from npsummary.proto import Event
from npsummary.reader import _framing
from remote_logdir import KEYS, assert_same_logdata, same, write_logdir
from s3server import BUCKET, FaultProxy, MotoServer, list_objects, s3_stack

pytestmark = pytest.mark.remote


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    with s3_stack() as servers:
        yield servers


def _root() -> str:
    return f"s3://{BUCKET}/read/{uuid.uuid4().hex}"


def _download(server: MotoServer, root: str, target: Path) -> Path:
    prefix = root[len(f"s3://{BUCKET}/") :]
    for key, data in list_objects(server.endpoint, prefix + "/").items():
        local = target / key[len(prefix) + 1 :]
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
    return target


def test_reader_on_s3_matches_local_copy(
    stack: tuple[MotoServer, FaultProxy], tmp_path: Path
) -> None:
    server, _ = stack
    root = _root()
    write_logdir(root)
    local = _download(server, root, tmp_path / "copy")
    remote = reader.load(root, decode=True)
    assert remote.runs == ["a", "b/inner", "c"]
    assert remote.stats.files > 10
    assert_same_logdata(remote, reader.load(local, decode=True))
    assert same(reader.scalars(root, tags="loss"), reader.scalars(local, tags="loss"))


def test_large_object_is_read_in_ranges(
    stack: tuple[MotoServer, FaultProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An 8.5 MB object is fetched one chunk per ranged request, never whole; torn tail counted."""
    import fsspec

    root = _root()
    records = []
    for step in range(60_000):
        ev = Event(wall_time=1.0, step=step)
        ev.summary.value.add(tag="x", simple_value=step, metadata=None)
        ev.summary.value[0].node_name = "n" * 100
        records.append(frame_record(ev.SerializeToString()))
    data = b"".join(records)[:-3]
    fs, path = fsspec.core.url_to_fs(root)
    fs.pipe_file(f"{path}/events.out.tfevents.1.big", data)
    import s3fs

    ranges: list[int] = []
    fetch = s3fs.core.S3File._fetch_range

    def spy(self: Any, start: int, end: int) -> bytes:
        out: bytes = fetch(self, start, end)
        ranges.append(len(out))
        return out

    monkeypatch.setattr(s3fs.core.S3File, "_fetch_range", spy)
    monkeypatch.setattr(
        _framing.read_batches, "__kwdefaults__", {"strict": False, "chunk": 1 << 20}
    )
    got = reader.load(root)
    assert got.scalars[(".", "x")].steps.size == 59_999
    assert (got.stats.torn_tails, got.stats.torn_bytes) == (1, len(records[-1]) - 3)
    assert len(data) > 8 << 20 and len(ranges) >= 8
    assert max(ranges) <= (1 << 20) + len(records[0]) and sum(ranges) == len(data)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "npsummary", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )


def test_cli_inspect_and_export_on_s3(stack: tuple[MotoServer, FaultProxy], tmp_path: Path) -> None:
    server, _ = stack
    root = _root()
    write_logdir(root)
    local = _download(server, root, tmp_path / "copy")
    by_url, by_path = _cli("inspect", "--json", root), _cli("inspect", "--json", str(local))
    assert by_url.returncode == 0 and by_url.stderr == "", by_url.stderr
    remote_info, local_info = json.loads(by_url.stdout), json.loads(by_path.stdout)
    assert remote_info["runs"] == local_info["runs"]
    assert [f["path"] for f in remote_info["files"]] == [
        root + f["path"][len(str(local)) :] for f in local_info["files"]
    ]
    for key in KEYS[:2]:
        assert remote_info[key] == local_info[key]
    for fmt in ("csv", "json"):
        out_r, out_l = tmp_path / "r", tmp_path / "l"
        assert _cli("export", root, "--format", fmt, "--out", str(out_r)).returncode == 0
        assert _cli("export", str(local), "--format", fmt, "--out", str(out_l)).returncode == 0
        assert (out_r / f"scalars.{fmt}").read_text() == (out_l / f"scalars.{fmt}").read_text()
    missing = _cli("inspect", f"{root}/missing")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1, missing.stderr
