"""Scalars written by npsummary, read back through a real TensorBoard server (both loaders)."""

from __future__ import annotations

import numpy as np
import pytest

import npsummary
from npsummary import SummaryWriter
from tbserver import LOADERS, tensorboard

pytestmark = pytest.mark.live

WALL0 = 1_700_000_000.0


def _expected(values: list[float]) -> list[list[float]]:
    return [[WALL0 + step, step, float(np.float32(value))] for step, value in enumerate(values)]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_scalars")
    values = [0.1 * i - 0.35 for i in range(20)]
    with SummaryWriter(str(root / "tbx")) as writer:
        for step, value in enumerate(values):
            writer.add_scalar("train/loss", value, step, walltime=WALL0 + step)
        writer.add_scalars("acc", {"train": 0.5, "eval": 0.25}, 7, walltime=WALL0 + 7)
    tf_writer = npsummary.create_file_writer(str(root / "tf2"))
    for step, value in enumerate(values):
        with tf_writer.as_default(step=step):
            assert npsummary.scalar("loss", value, description="the *loss*")
    tf_writer.close()
    return str(root)


@pytest.mark.parametrize("load_fast", LOADERS)
def test_scalars_endpoint_returns_exact_values(logdir: str, load_fast: str) -> None:
    values = [0.1 * i - 0.35 for i in range(20)]
    with tensorboard(logdir, load_fast) as tb:
        tags = tb.wait_for(
            lambda: (t := tb.get_json("/data/plugin/scalars/tags")) and len(t) == 4 and t
        )
        assert set(tags) == {"tbx", "tf2", "tbx/acc_train", "tbx/acc_eval"}
        assert set(tags["tbx"]) == {"train/loss"}
        assert "loss" in tags["tf2"]
        assert "<em>loss</em>" in tags["tf2"]["loss"]["description"]

        def points(run: str, tag: str, count: int) -> list[list[float]] | None:
            data = tb.get_json("/data/plugin/scalars/scalars", run=run, tag=tag)
            return data if len(data) == count else None

        assert tb.wait_for(lambda: points("tbx", "train/loss", 20)) == _expected(values)
        tf2 = tb.wait_for(lambda: points("tf2", "loss", 20))
        assert [p[1:] for p in tf2] == [row[1:] for row in _expected(values)]
        assert tb.wait_for(lambda: points("tbx/acc_train", "acc", 1)) == [[WALL0 + 7, 7, 0.5]]
        assert tb.wait_for(lambda: points("tbx/acc_eval", "acc", 1)) == [[WALL0 + 7, 7, 0.25]]
