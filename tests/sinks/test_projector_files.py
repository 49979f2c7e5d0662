"""The projector's files (issue 20, items 1 and 8): every file of ``add_embedding`` goes through
the run's location, local or URL, and ``projector_config.pbtxt`` keeps every entry when several
processes (or threads) log embeddings into one run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import numpy as np
import pytest

from npsummary import SummaryWriter
from paths import SUPPORT

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")
text_format = pytest.importorskip("google.protobuf.text_format")
projector_config_pb2 = pytest.importorskip("tensorboard.plugins.projector.projector_config_pb2")

pytestmark = pytest.mark.remote


def _config(text: str) -> list[str]:
    """The tensor names the projector would list, parsed with TensorBoard's own schema."""
    config = projector_config_pb2.ProjectorConfig()
    text_format.Parse(text, config)
    return [e.tensor_name for e in config.embeddings]


def _fs_files(url: str) -> dict[str, bytes]:
    fs, path = fsspec.core.url_to_fs(url)
    return {p[len(path) + 1 :]: fs.cat_file(p) for p in fs.find(path) if "tfevents" not in p}


def test_add_embedding_on_a_memory_url_writes_into_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"memory://bucket/{uuid.uuid4().hex}/run"
    with SummaryWriter(url) as writer:
        writer.add_embedding(
            np.eye(3), metadata=["a", "b", "c"], label_img=np.zeros((3, 1, 2, 2)), tag="emb"
        )
        writer.add_embedding(np.ones((2, 2)), global_step=4)
    assert list(tmp_path.iterdir()) == [], "add_embedding wrote into the working directory"
    files = _fs_files(url)
    for name in ("tensors.tsv", "metadata.tsv", "sprite.png"):
        assert f"00000/emb/{name}" in files
    assert files["00000/emb/tensors.tsv"].splitlines()[0] == b"1.0\t0.0\t0.0"
    assert "00004/default/tensors.tsv" in files
    assert _config(files["projector_config.pbtxt"].decode()) == ["emb:00000", "default:00004"]


def test_add_embedding_on_a_file_url_writes_into_the_local_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "logs" / "run"
    with SummaryWriter(run.as_uri()) as writer:
        writer.add_embedding(np.eye(2), metadata=["x", "y"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"]
    assert (run / "00000" / "default" / "tensors.tsv").is_file()
    config = (run / "projector_config.pbtxt").read_text()
    assert _config(config) == ["default:00000"]


def test_add_embedding_in_a_rank_sub_run_of_a_url(tmp_path: Path) -> None:
    url = f"memory://bucket/{uuid.uuid4().hex}"
    with SummaryWriter(url, ranks="all", rank=2) as writer:
        writer.add_embedding(np.eye(2))
    files = _fs_files(url)
    assert "rank_2/00000/default/tensors.tsv" in files
    assert "rank_2/projector_config.pbtxt" in files


def test_threads_logging_embeddings_into_one_url_keep_every_entry() -> None:
    url = f"memory://bucket/{uuid.uuid4().hex}/run"
    writers = [SummaryWriter(url) for _ in range(4)]

    def log(index: int) -> None:
        for step in range(10):
            writers[index].add_embedding(np.eye(2), tag=f"w{index}", global_step=step)

    threads = [threading.Thread(target=log, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for writer in writers:
        writer.close()
    names = _config(_fs_files(url)["projector_config.pbtxt"].decode())
    assert sorted(names) == sorted(f"w{i}:{s:05d}" for i in range(4) for s in range(10))


_CHILD = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[3])
import objstore
objstore.register()
from npsummary import SummaryWriter
writer = SummaryWriter(sys.argv[1])
for step in range(int(sys.argv[4])):
    writer.add_embedding(np.eye(2), tag="p" + sys.argv[2], global_step=step)
writer.close()
"""


@pytest.mark.parametrize("where", ["local", "file_url", "object_store"])
def test_processes_logging_embeddings_into_one_run_keep_every_entry(
    tmp_path: Path, where: str
) -> None:
    run = tmp_path / "run"
    logdir = {
        "local": str(run),
        "file_url": run.as_uri(),
        "object_store": f"objdir://{run}",
    }[where]
    processes, per_process = 3, 25
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, logdir, str(i), str(SUPPORT), str(per_process)],
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        for i in range(processes)
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    names = _config((run / "projector_config.pbtxt").read_text())
    expected = [f"p{i}:{s:05d}" for i in range(processes) for s in range(per_process)]
    assert sorted(names) == sorted(expected)
    assert len(names) == len(expected)  # each entry once
    assert not [p for p in run.rglob("*") if p.name.startswith((".tmp-", ".put-"))]
    assert not (run / ".projector_config.lock").exists()


def test_the_local_lock_is_never_taken_through_a_link(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep")
    os.symlink(target, run / ".projector_config.lock")
    with SummaryWriter(run) as writer, pytest.raises(OSError):
        writer.add_embedding(np.eye(2))
    assert target.read_bytes() == b"keep"


def test_a_link_at_the_config_path_is_neither_read_nor_followed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the logdir")
    (run / "projector_config.pbtxt").symlink_to(secret)
    with SummaryWriter(run) as writer:
        writer.add_embedding(np.eye(2))
    config = run / "projector_config.pbtxt"
    assert not config.is_symlink()
    assert "not for the logdir" not in config.read_text()
    assert _config(config.read_text()) == ["default:00000"]
    assert secret.read_text() == "not for the logdir"


def test_nothing_but_the_projector_files_is_left_in_the_run(tmp_path: Path) -> None:
    """Issue 29 item 8: torch and tensorboardX leave no lock file; neither does npsummary."""
    run = tmp_path / "run"
    with SummaryWriter(run) as writer:
        writer.add_embedding(np.eye(2), metadata=["a", "b"], tag="e")
        writer.add_embedding(np.eye(2), global_step=3)
    left = sorted(p.name for p in run.iterdir() if "tfevents" not in p.name)
    assert left == ["00000", "00003", "projector_config.pbtxt"]
    assert _config((run / "projector_config.pbtxt").read_text()) == ["e:00000", "default:00003"]


def test_the_lock_excludes_holders_while_its_file_comes_and_goes(tmp_path: Path) -> None:
    """The OS lock alone (no thread lock), taken by threads through their own open files, as
    processes do: each holder sees no other holder inside, no increment is lost, and the lock
    file is gone afterwards although holders kept removing it while others waited on it."""
    from npsummary._sinks.projector import _os_lock

    path = str(tmp_path / ".lock")
    counter = tmp_path / "counter"
    counter.write_text("0")
    inside: list[int] = []
    overlaps: list[int] = []
    threads, rounds = 6, 60

    def work() -> None:
        for _ in range(rounds):
            with _os_lock(path):
                inside.append(1)
                if len(inside) > 1:
                    overlaps.append(len(inside))
                counter.write_text(str(int(counter.read_text()) + 1))
                inside.pop()

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert overlaps == []
    assert int(counter.read_text()) == threads * rounds
    assert not os.path.exists(path)


def test_a_lock_file_left_by_a_crash_is_taken_and_removed(tmp_path: Path) -> None:
    """A ``.projector_config.lock`` left behind (a process killed inside ``add_embedding``, or
    an npsummary that kept it) is locked like any other, then removed."""
    run = tmp_path / "run"
    run.mkdir()
    (run / ".projector_config.lock").write_bytes(b"")
    with SummaryWriter(run) as writer:
        writer.add_embedding(np.eye(2))
    assert not (run / ".projector_config.lock").exists()
    assert _config((run / "projector_config.pbtxt").read_text()) == ["default:00000"]
