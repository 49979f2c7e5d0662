"""Histograms of sharded tensors under a real ``torchrun --nproc_per_node 4`` (gloo, CPU).

The child (tests/support/_sharded_child.py) shards a small model with FSDP2's ``fully_shard``,
places one weight ``Shard(1)`` and one ``Replicate()``, and logs every parameter's histogram each
step through ``add_histogram`` (default bins, a bin count, edges, a rule), ``add_distribution``,
``npsummary.histogram`` and ``v1.histogram``, and each rank's activations with
``process_group=``. Here one process writes the histograms of the full parameters it saved, and
the files must agree: buckets, counts, min, max and num bit for bit, sums to 1e-12. torch comes
from CI stage 50 (``pip install torch==2.13.0``); without it these tests skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import reader, v1
from npsummary._core.ranks import RANK_VARIABLES
from paths import SUPPORT

pytestmark = pytest.mark.distributed

WORLD = 4
TIMEOUT = 600


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    pytest.importorskip("torch", reason="torchrun tests need torch (pip install torch==2.13.0)")
    root = tmp_path_factory.mktemp("sharded")
    logdir, record = root / "run", root / "record"
    env = {k: v for k, v in os.environ.items() if k not in RANK_VARIABLES}
    env["OMP_NUM_THREADS"] = "1"
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={WORLD}",
        str(SUPPORT / "_sharded_child.py"),
        str(logdir),
        str(record),
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-6000:]
    yield logdir, record


def _values(logdir: Path) -> dict[tuple[str, int], Any]:
    out: dict[tuple[str, int], Any] = {}
    for event in reader.events(logdir):
        for value in event.summary.value:
            key = (value.tag, int(event.step))
            assert key not in out, f"{key} written twice"
            out[key] = value
    return out


def _child_module() -> Any:
    sys.path.insert(0, str(SUPPORT))
    try:
        import importlib

        return importlib.import_module("_sharded_child")
    finally:
        sys.path.remove(str(SUPPORT))


def _reference(record: Path, out: Path) -> None:
    """One process's histograms of the full parameters, with the child's calls."""
    child = _child_module()
    full = np.load(record / "full.npz")
    writer = npsummary.SummaryWriter(str(out / "tbx"))
    tf2_writer = npsummary.create_file_writer(str(out / "tf2"))
    for key in full.files:
        name, step_text = key.rsplit("@", 1)
        step, values = int(step_text), full[key]
        if name == "act":
            writer.add_histogram("act", values, step)
            continue
        for suffix, kwargs in child.BINS:
            writer.add_histogram(f"{name}/{suffix}", values, step, **kwargs)
        writer.add_distribution(f"{name}/dist", values, step)
        with tf2_writer.as_default(step=step):
            npsummary.histogram(f"{name}/tf2", values)
    writer.close()
    tf2_writer.close()


def _assert_same_histo(got: Any, want: Any, where: object) -> None:
    assert list(got.bucket_limit) == list(want.bucket_limit), where
    assert list(got.bucket) == list(want.bucket), where
    for field in ("min", "max", "num"):
        a, b = getattr(got, field), getattr(want, field)
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), (where, field, a, b)
    assert got.sum == pytest.approx(want.sum, rel=1e-12, abs=1e-12 * want.sum_squares**0.5)
    assert got.sum_squares == pytest.approx(want.sum_squares, rel=1e-12)


def test_every_histogram_is_the_full_tensors(job: tuple[Path, Path], tmp_path: Path) -> None:
    logdir, record = job
    _reference(record, tmp_path)
    for run in ("tbx", "tf2"):
        got, want = _values(logdir / run), _values(tmp_path / run)
        assert sorted(got) == sorted(want) and got, run
        for key, value in got.items():
            if value.HasField("histo"):
                _assert_same_histo(value.histo, want[key].histo, key)
            else:  # TF2's [k, 3] tensor, bit for bit
                assert value.tensor.SerializeToString() == want[key].tensor.SerializeToString()
                assert value.metadata == want[key].metadata


def test_v1_histogram_on_every_rank_is_the_full_tensors(job: tuple[Path, Path]) -> None:
    _, record = job
    full = np.load(record / "full.npz")
    summaries = json.loads((record / "v1.json").read_text())
    proto = npsummary.proto
    for key, hexed in summaries.items():
        name = key.rsplit("@", 1)[0]
        got = proto.Summary.FromString(bytes.fromhex(hexed)).value[0]
        want = proto.Summary.FromString(v1.histogram(f"{name}/v1", full[key])).value[0]
        assert got.tag == want.tag
        _assert_same_histo(got.histo, want.histo, key)


def test_replicated_and_zero_signs(job: tuple[Path, Path]) -> None:
    logdir, record = job
    got = _values(logdir / "tbx")
    full = np.load(record / "full.npz")
    # Replicate counts once: num is the full tensor's size, not WORLD times it
    assert got[("replicated/default", 0)].histo.num == full["replicated@0"].size
    assert got[("hybrid/default", 0)].histo.num == full["hybrid@0"].size  # 2-D mesh
    # the first zero of full_tensor() in C order (-0.0, on rank 1), not rank 0's +0.0
    assert np.signbit(got[("zeros/default", 0)].histo.min)


def test_at_most_two_all_reduce_calls_of_64_kib(job: tuple[Path, Path]) -> None:
    _, record = job
    for rank in range(WORLD):
        calls = json.loads((record / f"rank_{rank}.json").read_text())["calls"]
        assert len(calls) > 50
        for name, sizes in calls.items():
            assert 1 <= len(sizes) <= 2, (rank, name, sizes)
            assert sum(sizes) <= 64 * 1024, (rank, name, sizes)


def test_a_rank_calling_another_histogram_makes_every_rank_raise(
    job: tuple[Path, Path],
) -> None:
    _, record = job
    for rank in range(WORLD):
        message = json.loads((record / f"rank_{rank}.json").read_text())["mismatch"]
        assert "called histograms with another tag" in message, (rank, message)


def test_rank_histogram_files_only_on_rank_zero(job: tuple[Path, Path]) -> None:
    logdir, _ = job
    assert sorted(p.name for p in logdir.iterdir()) == ["tbx", "tf2"]
    assert len(list((logdir / "tbx").iterdir())) == 1


def test_rules_needing_global_quantiles_are_refused_on_every_rank(job: tuple[Path, Path]) -> None:
    _, record = job
    for rank in range(WORLD):
        message = json.loads((record / f"rank_{rank}.json").read_text())["refused"]
        assert message.startswith("'w': bins='auto' needs the quantiles"), (rank, message)
