"""The reader and the CLI on logdirs given as URLs, on fsspec's ``memory://`` filesystem (fast).

A run written by SummaryWriter to ``memory://`` (as many small segments) is read back and
compared exactly with the same objects copied to a local folder under the same names, so
discovery, file order, values and the accounting of corrupt records and torn tails are those of
a local logdir. Real S3 is in test_reader_remote_s3.py.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")

from npsummary import reader  # noqa: E402
from npsummary._cli import main  # noqa: E402
from npsummary._format.record import CorruptRecordError, frame_record  # noqa: E402
from npsummary.proto import Event  # noqa: E402
from npsummary.reader._storage.fsspec_store import FsspecFileSystem  # noqa: E402
from remote_logdir import (  # noqa: E402
    WALL0,
    assert_same_logdata,
    copy_local,
    memory_root,
    same,
    write_logdir,
)

pytestmark = pytest.mark.remote

_root = memory_root


def test_load_matches_local_copy_exactly(tmp_path: Path) -> None:
    root = _root()
    write_logdir(root)
    local = copy_local(root, tmp_path / "copy")
    remote = reader.load(root, decode=True)
    assert remote.runs == [".", "a", "b/inner", "c"] or remote.runs == ["a", "b/inner", "c"]
    assert_same_logdata(remote, reader.load(local, decode=True))
    loss = reader.scalars(root)[("a", "loss")]
    assert loss.steps.tolist() == list(range(40))
    assert loss.values.tolist() == [float(np.float32(1.0 / (s + 1))) for s in range(40)]
    assert remote.stats.files > 10  # many segments, read in name (= write) order
    assert same(reader.scalars(root, runs="^b"), reader.scalars(local, runs="^b"))
    assert same(reader.histograms(root), reader.histograms(local))
    assert same(reader.hparams(root), reader.hparams(local))


def test_trailing_slash_run_dir_and_single_object(tmp_path: Path) -> None:
    root = _root()
    write_logdir(root)
    local = copy_local(root, tmp_path / "copy")
    assert same(reader.scalars(root + "/"), reader.scalars(local))
    assert same(reader.scalars(f"{root}/b/inner"), reader.scalars(local / "b" / "inner"))
    fs, path = fsspec.core.url_to_fs(f"{root}/c")
    values = []
    for name in sorted(fs.ls(path, detail=False)):
        one = reader.load(f"{root}/c/{Path(name).name}")
        assert one.runs == ["."] and one.stats.files == 1
        values += [v for k, s in one.scalars.items() for v in s.values.tolist()]
    assert values == [1.5]


def test_events_in_file_order() -> None:
    root = _root()
    write_logdir(root)
    steps = [
        e.step
        for e in reader.events(f"{root}/b/inner")
        if e.summary.value and e.summary.value[0].tag == "loss"
    ]
    assert steps == list(range(10))


def _damaged(root: str) -> None:
    """One object with a corrupt record and a torn tail, as a crashed or still-writing run."""
    records = []
    for step in range(5):
        ev = Event(wall_time=WALL0, step=step)
        ev.summary.value.add(tag="x", simple_value=step)
        records.append(bytearray(frame_record(ev.SerializeToString())))
    records[2][-1] ^= 1
    fs, path = fsspec.core.url_to_fs(root)
    fs.pipe_file(f"{path}/run/events.out.tfevents.1.host", b"".join(records)[:-5])


def test_corrupt_records_and_torn_tails_counted_as_local(tmp_path: Path) -> None:
    root = _root()
    _damaged(root)
    local = copy_local(root, tmp_path / "copy")
    remote = reader.load(root)
    assert_same_logdata(remote, reader.load(local))
    assert (remote.stats.corrupt_records, remote.stats.torn_tails) == (1, 1)
    assert remote.scalars[("run", "x")].steps.tolist() == [0, 1, 3]
    assert any(root in p for p in remote.stats.problems)
    with pytest.raises(CorruptRecordError):
        reader.load(root, strict=True)


def test_chunked_reads_across_record_boundaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiny chunks: records split across reads are stitched, nothing is read twice."""
    from npsummary.reader import _framing

    root = _root()
    write_logdir(root)
    whole = reader.load(root)
    reads: list[int] = []
    original = FsspecFileSystem.open

    def spy(self: FsspecFileSystem, path: str) -> Any:
        f: Any = original(self, path)
        read = f.read

        def counted(n: int = -1) -> bytes:
            data: bytes = read(n)
            reads.append(len(data))
            return data

        f.read = counted
        return f

    monkeypatch.setattr(FsspecFileSystem, "open", spy)
    monkeypatch.setattr(_framing.read_batches, "__kwdefaults__", {"strict": False, "chunk": 7})
    assert_same_logdata(reader.load(root), whole)
    assert len(reads) > 3 * whole.stats.files and sum(reads) == whole.stats.bytes


def test_missing_url_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        reader.load(f"{_root()}/nothing")
    with pytest.raises(FileNotFoundError):
        reader.scalars(f"{_root()}/nothing/events.out.tfevents.1")


def test_missing_protocol_package_is_named() -> None:
    from fsspec.registry import known_implementations

    if known_implementations.get("gcs") is None:
        pytest.skip("this fsspec does not know gcs://")
    try:
        import gcsfs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("gcsfs is installed")
    with pytest.raises(ImportError, match="gcsfs"):
        reader.scalars("gs://bucket/logs")
    err = io.StringIO()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sys, "stderr", err)
        assert main(["inspect", "gs://bucket/logs"]) == 1
    assert "gcsfs" in err.getvalue() and err.getvalue()[-1] == "\n"
    assert err.getvalue().count("\n") == 1


def test_file_url_reads_like_the_path(tmp_path: Path) -> None:
    root = _root()
    write_logdir(root)
    local = copy_local(root, tmp_path / "copy")
    assert_same_logdata(reader.load(local.as_uri()), reader.load(local))


def test_registered_filesystem_still_wins() -> None:
    from npsummary.reader import _io

    seen: list[str] = []

    class Spy(_io.LocalFileSystem):
        def isdir(self, path: str) -> bool:
            seen.append(path)
            raise FileNotFoundError(path)

    saved = list(_io._REGISTRY)
    try:
        reader.register_filesystem(lambda p: p.startswith("memory://spy"), Spy())
        with pytest.raises(FileNotFoundError):
            reader.load("memory://spy/x")
    finally:
        _io._REGISTRY[:] = saved
    assert seen == ["memory://spy/x"]


def test_cli_inspect_json_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _root()
    write_logdir(root)
    local = copy_local(root, tmp_path / "copy")
    assert main(["inspect", root, "--json"]) == 0
    remote_info = json.loads(capsys.readouterr().out)
    assert main(["inspect", str(local), "--json"]) == 0
    local_info = json.loads(capsys.readouterr().out)
    assert remote_info["runs"] == local_info["runs"] and remote_info["logdir"] == root
    assert [f["path"] for f in remote_info["files"]] == [
        root + f["path"][len(str(local)) :] for f in local_info["files"]
    ]
    for key in ("records", "bytes", "corrupt_records", "torn_tails"):
        assert remote_info[key] == local_info[key]
    assert main(["inspect", root]) == 0
    assert "problems: none" in capsys.readouterr().out
    for kind, fmt in (("scalars", "csv"), ("histograms", "json")):
        out_r, out_l = tmp_path / "r", tmp_path / "l"
        assert main(["export", root, "--format", fmt, "--kind", kind, "--out", str(out_r)]) == 0
        assert (
            main(["export", str(local), "--format", fmt, "--kind", kind, "--out", str(out_l)]) == 0
        )
        name = f"{kind}.{fmt}"
        assert (out_r / name).read_text() == (out_l / name).read_text()
        assert len((out_r / name).read_text()) > 100
    capsys.readouterr()
    assert main(["inspect", f"{root}/missing"]) == 1
    assert "missing" in capsys.readouterr().err


def test_cli_subprocess_file_url(tmp_path: Path) -> None:
    root = _root()
    write_logdir(root)
    local = copy_local(root, tmp_path / "copy")
    cmd = [sys.executable, "-m", "npsummary", "inspect", "--json"]
    by_url = subprocess.run([*cmd, local.as_uri()], capture_output=True, text=True, timeout=120)
    by_path = subprocess.run([*cmd, str(local)], capture_output=True, text=True, timeout=120)
    assert by_url.returncode == 0, by_url.stderr
    assert json.loads(by_url.stdout)["runs"] == json.loads(by_path.stdout)["runs"]


def test_reader_import_stays_light() -> None:
    code = (
        "import sys, npsummary.reader, npsummary._cli._inspect, npsummary._cli._export;"
        "print('fsspec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
