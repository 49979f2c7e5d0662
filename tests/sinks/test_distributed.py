"""Real multi-process jobs: torchrun with a tiny DDP training on CPU (gloo), plain
multiprocessing with ``RANK`` set, and several ranks writing to one S3 bucket.

The default writes each scalar exactly once (rank 0's); ``ranks="all"`` gives one run per rank
with each rank's own values. torch is installed by the CI stage .ci/stages/50-remote.sh
(``pip install torch==2.13.0``); without it the torchrun tests skip.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from _rank_child import STEPS, run_rank, value
from conftest import event_files, read_scalars, scalar_values
from npsummary._core.ranks import RANK_VARIABLES
from paths import SUPPORT

pytestmark = pytest.mark.distributed

HERE = SUPPORT
TIMEOUT = 300


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*RANK_VARIABLES, "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)


def _torchrun(logdir: str, ranks: str, record: Path, nproc: int = 2) -> None:
    pytest.importorskip("torch", reason="torchrun tests need torch (pip install torch==2.13.0)")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        str(HERE / "_ddp_child.py"),
        logdir,
        ranks,
        str(record),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-4000:]


def _logged(record: Path, rank: int) -> list[tuple[int, float]]:
    values = json.loads((record / f"rank_{rank}.json").read_text())
    return list(enumerate(values))


def _dirs(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.is_dir())


def test_torchrun_default_writes_each_scalar_once(tmp_path: Path) -> None:
    logdir, record = tmp_path / "run", tmp_path / "record"
    _torchrun(str(logdir), "default", record)
    assert len(event_files(logdir)) == 1 and _dirs(logdir) == []
    scalars = read_scalars(logdir)
    assert scalar_values(scalars["loss"]) == _logged(record, 0)
    assert scalar_values(scalars["rank"]) == [(step, 0.0) for step in range(5)]
    assert _logged(record, 0) != _logged(record, 1), "the ranks saw different data"


def test_torchrun_ranks_all_writes_one_run_per_rank(tmp_path: Path) -> None:
    logdir, record = tmp_path / "run", tmp_path / "record"
    _torchrun(str(logdir), "all", record)
    assert _dirs(logdir) == ["rank_0", "rank_1"] and event_files(logdir) == []
    for rank in (0, 1):
        scalars = read_scalars(logdir / f"rank_{rank}")
        assert scalar_values(scalars["loss"]) == _logged(record, rank)
        assert scalar_values(scalars["rank"]) == [(step, float(rank)) for step in range(5)]


def _multiprocessing_job(logdir: str, ranks: str | None, world: int = 3) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=run_rank, args=(rank, logdir, ranks)) for rank in range(world)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(TIMEOUT)
        assert process.exitcode == 0


def test_multiprocessing_default_and_all(tmp_path: Path) -> None:
    default, every = tmp_path / "default", tmp_path / "all"
    _multiprocessing_job(str(default), None)
    assert len(event_files(default)) == 1 and _dirs(default) == []
    expected = [(step, value(0, step)) for step in range(STEPS)]
    assert scalar_values(read_scalars(default)["value"]) == expected
    _multiprocessing_job(str(every), "all")
    assert _dirs(every) == ["rank_0", "rank_1", "rank_2"]
    for rank in range(3):
        expected = [(step, value(rank, step)) for step in range(STEPS)]
        assert scalar_values(read_scalars(every / f"rank_{rank}")["value"]) == expected


@pytest.fixture(scope="module")
def s3() -> Iterator[tuple[object, object]]:
    pytest.importorskip("s3fs", reason="the S3 tests need s3fs and moto[server]")
    from s3server import s3_stack

    with s3_stack() as servers:
        yield servers


def _download(endpoint: str, prefix: str, target: Path) -> dict[str, bytes]:
    from s3server import list_objects

    objects = list_objects(endpoint, prefix + "/")
    for key, data in objects.items():
        path = target / key[len(prefix) + 1 :]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return objects


def _puts(proxy: object, prefix: str) -> Counter[str]:
    from s3server import BUCKET

    return Counter(
        {
            path.split("?")[0]: count
            for path, count in proxy.puts.items()  # type: ignore[attr-defined]
            if path.startswith(f"/{BUCKET}/{prefix}/")
        }
    )


def test_ranks_share_one_bucket(s3: tuple[object, object], tmp_path: Path) -> None:
    from s3server import BUCKET

    server, proxy = s3
    record = tmp_path / "record"
    torch_prefix, mp_prefix = f"ddp/{uuid.uuid4().hex}", f"mp/{uuid.uuid4().hex}"
    _torchrun(f"s3://{BUCKET}/{torch_prefix}", "all", record)
    _multiprocessing_job(f"s3://{BUCKET}/{mp_prefix}", "all", world=3)
    endpoint = server.endpoint  # type: ignore[attr-defined]

    local = tmp_path / "ddp"
    keys = _download(endpoint, torch_prefix, local)
    assert {key.split("/")[-2] for key in keys} == {"rank_0", "rank_1"}
    for rank in (0, 1):
        assert scalar_values(read_scalars(local / f"rank_{rank}")["loss"]) == _logged(record, rank)

    local = tmp_path / "mp"
    keys = _download(endpoint, mp_prefix, local)
    assert {key.split("/")[-2] for key in keys} == {"rank_0", "rank_1", "rank_2"}
    for rank in range(3):
        expected = [(step, value(rank, step)) for step in range(STEPS)]
        assert scalar_values(read_scalars(local / f"rank_{rank}")["value"]) == expected

    # No object was written twice, by one rank or by two.
    for prefix in (torch_prefix, mp_prefix):
        puts = _puts(proxy, prefix)
        assert puts and set(puts.values()) == {1}, puts
