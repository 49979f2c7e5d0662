"""The three front ends under the rank rule, and with URL logdirs (``memory://``).

The rank comes from ``RANK`` here (the launcher variable torchrun sets); real multi-process runs
are in test_distributed.py.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import npsummary
from conftest import only_event_file, read_events, read_scalars, scalar_values
from npsummary import MemorySink, SummaryWriter, v1
from npsummary._core.ranks import RANK_VARIABLES

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_rank_zero_writes_the_logdir_itself(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "0")
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("loss", 0.5, 1)
    assert scalar_values(read_scalars(logdir)["loss"]) == [(1, 0.5)]


def test_other_ranks_get_a_silent_writer(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    writer = SummaryWriter(logdir, flush_secs=1)
    assert isinstance(writer, SummaryWriter)
    assert writer.get_logdir() == str(logdir)
    # Every call is accepted (even a wrong one: no validation cost) and nothing is written.
    assert writer.add_scalar("loss", 0.5, 1) is None  # type: ignore[func-returns-value]
    assert (
        writer.add_scalar("loss", "not a number", "nor a step")  # type: ignore[func-returns-value]
        is None
    )
    writer.add_scalars("acc", {"a": 1.0}, 0)
    writer.add_histogram("w", [1.0, 2.0], 0)
    writer.add_image("img", [[0]], 0, dataformats="HW")
    writer.add_text("t", "x", 0)
    writer.set_step(3)
    writer.flush()
    writer.close()
    with SummaryWriter(logdir) as again:
        again.add_scalar("x", 1.0, 0)
    assert not logdir.exists()


def test_rank_argument_overrides_detection(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    with SummaryWriter(logdir, rank=0) as writer:
        writer.add_scalar("loss", 0.25, 2)
    assert scalar_values(read_scalars(logdir)["loss"]) == [(2, 0.25)]


def test_ranks_all_writes_one_sub_run_per_rank(logdir: Path) -> None:
    for rank in range(3):
        with SummaryWriter(logdir, rank=rank, ranks="all") as writer:
            assert writer.get_logdir() == str(logdir / f"rank_{rank}")
            writer.add_scalar("loss", float(rank), 0)
    for rank in range(3):
        assert scalar_values(read_scalars(logdir / f"rank_{rank}")["loss"]) == [(0, rank)]
    assert sorted(p.name for p in logdir.iterdir()) == ["rank_0", "rank_1", "rank_2"]


def test_explicit_rank_list(logdir: Path) -> None:
    for rank in range(4):
        with SummaryWriter(logdir, rank=rank, ranks=[0, 3]) as writer:
            writer.add_scalar("loss", float(rank), 0)
    assert sorted(p.name for p in logdir.iterdir()) == ["rank_0", "rank_3"]


def test_ranks_all_on_a_given_sink() -> None:
    sink = MemorySink()
    with SummaryWriter(sink, rank=2, ranks="all") as writer:
        writer.add_scalar("loss", 1.0, 0)
    assert list(sink.children) == ["rank_2"]
    assert len(sink.children["rank_2"].payloads) == 1
    assert sink.payloads == []


def test_bad_rank_arguments_raise(logdir: Path) -> None:
    with pytest.raises(TypeError, match="rank must be an int"):
        SummaryWriter(logdir, rank="0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ranks must be"):
        npsummary.create_file_writer(str(logdir), ranks="any")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="rank must be >= 0"):
        v1.FileWriter(str(logdir), rank=-1)
    assert not logdir.exists()


def test_tf2_writers_follow_the_rule(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_PROCID", "2")
    writer = npsummary.create_file_writer(str(logdir))
    with writer.as_default(step=1):
        assert npsummary.scalar("loss", 1.0) is False
    writer.close()
    assert not logdir.exists()
    writer = npsummary.create_file_writer(str(logdir), ranks="all")
    with writer.as_default(step=1):
        assert npsummary.scalar("loss", 1.0)
    writer.close()
    assert scalar_values(read_scalars(logdir / "rank_2")["loss"]) == [(1, 1.0)]


def test_v1_file_writer_follows_the_rule(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    silent = v1.FileWriter(str(logdir))
    silent.add_summary(b"not even a summary", 3)
    silent.add_session_log(None)
    silent.flush()
    silent.close()
    assert silent.get_logdir() == str(logdir)
    assert not logdir.exists()
    writer = v1.FileWriter(str(logdir), ranks=[1])
    from npsummary import proto

    summary = proto.Summary()
    summary.value.add(tag="x", simple_value=2.0)
    writer.add_summary(summary.SerializeToString(), 5)
    writer.close()
    events = read_events(only_event_file(logdir / "rank_1"))
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(5, 2.0)]


fsspec = pytest.importorskip("fsspec")


def _memory_run(url: str, tmp_path: Path) -> Path:
    fs, path = fsspec.core.url_to_fs(url)
    local = tmp_path / uuid.uuid4().hex
    local.mkdir()
    for name in fs.ls(path, detail=False):
        if "tfevents" in name:
            (local / Path(name).name).write_bytes(fs.cat_file(name))
    return local


def test_url_logdirs_in_every_front_end(tmp_path: Path) -> None:
    root = f"memory://npsummary-test/{uuid.uuid4().hex}"
    with SummaryWriter(f"{root}/tbx") as writer:
        assert writer.get_logdir() == f"{root}/tbx"
        writer.add_scalar("loss", 0.5, 1)
    tf_writer = npsummary.create_file_writer(f"{root}/tf2")
    with tf_writer.as_default(step=2):
        assert npsummary.scalar("loss", 0.75)
    tf_writer.close()
    v1_writer = v1.FileWriter(f"{root}/v1")
    from npsummary import proto

    summary = proto.Summary()
    summary.value.add(tag="loss", simple_value=0.125)
    v1_writer.add_summary(summary.SerializeToString(), 3)
    v1_writer.close()
    assert not Path("memory:").exists(), "a URL must not become a local folder"
    assert scalar_values(read_scalars(_memory_run(f"{root}/tbx", tmp_path))["loss"]) == [(1, 0.5)]
    assert scalar_values(read_scalars(_memory_run(f"{root}/tf2", tmp_path))["loss"]) == [(2, 0.75)]
    v1_local = _memory_run(f"{root}/v1", tmp_path)
    steps = [e.step for f in sorted(v1_local.iterdir()) for e in read_events(f) if e.summary.value]
    assert steps == [3]


def test_url_with_ranks_all(tmp_path: Path) -> None:
    root = f"memory://npsummary-test/{uuid.uuid4().hex}"
    for rank in (0, 1):
        with SummaryWriter(root, rank=rank, ranks="all") as writer:
            writer.add_scalar("loss", float(rank), 0)
    for rank in (0, 1):
        local = _memory_run(f"{root}/rank_{rank}", tmp_path)
        assert scalar_values(read_scalars(local)["loss"]) == [(0, rank)]


def test_import_does_not_import_fsspec() -> None:
    code = "import sys, npsummary; assert 'fsspec' not in sys.modules, 'fsspec imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
