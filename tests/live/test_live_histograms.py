"""Histograms and distributions through a real TensorBoard server, on both loaders."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import SummaryWriter
from npsummary._histogram import binned_histogram, tf2_buckets
from npsummary.reader import compress_histogram, legacy_to_buckets
from tbserver import LOADERS, TensorBoard, tensorboard

pytestmark = pytest.mark.live

WALL0 = 1_700_000_000.0
RNG = np.random.default_rng(7)
STEPS = 3


def _data(step: int) -> np.ndarray:
    return RNG.normal(step, 1.0 + step, size=2000).astype(np.float32)


DATA = [_data(step) for step in range(STEPS)]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_hist")
    writer = npsummary.create_file_writer(str(root / "tf2"))
    with writer.as_default():
        for step, data in enumerate(DATA):
            assert npsummary.histogram("weights", data, step=step)
    writer.close()
    with SummaryWriter(str(root / "tbx")) as tbx:
        for step, data in enumerate(DATA):
            tbx.add_histogram("activations", data, step, walltime=WALL0 + step)
    return str(root)


def _series(tb: TensorBoard, plugin: str, run: str, tag: str) -> list[Any]:
    def fetch() -> list[Any] | None:
        data: list[Any] = tb.get_json(f"/data/plugin/{plugin}/{plugin}", run=run, tag=tag)
        return data if len(data) == STEPS else None

    series: list[Any] = tb.wait_for(fetch)
    return series


@pytest.mark.parametrize("load_fast", LOADERS)
def test_histograms_and_distributions_endpoints(logdir: str, load_fast: str) -> None:
    with tensorboard(logdir, load_fast) as tb:
        tags = tb.wait_for(
            lambda: (t := tb.get_json("/data/plugin/histograms/tags")) and len(t) == 2 and t
        )
        assert set(tags["tf2"]) == {"weights"} and set(tags["tbx"]) == {"activations"}

        # TF2 buckets are served exactly as written (float64 on both loaders).
        served = _series(tb, "histograms", "tf2", "weights")
        for step, (_, served_step, rows) in enumerate(served):
            assert served_step == step
            expected, _ = tf2_buckets(DATA[step])
            np.testing.assert_array_equal(np.array(rows), expected)

        # Legacy (TF1-bucket) histograms: each loader converts them its own way (FORMAT §4.2):
        # Python trims empty ends in float32; Rust keeps every bucket in float64.
        served = _series(tb, "histograms", "tbx", "activations")
        for step, (wall, served_step, rows) in enumerate(served):
            assert (wall, served_step) == (WALL0 + step, step)
            histogram = binned_histogram(DATA[step], "tensorflow")  # tensorboardX's buckets
            rows = np.array(rows)
            assert rows[:, 2].sum() == DATA[step].size
            if load_fast == "false":
                expected = legacy_to_buckets(histogram).astype(np.float32).astype(np.float64)
                np.testing.assert_array_equal(rows, expected)
            else:
                assert rows[0, 0] == histogram.min and rows[-1, 1] == histogram.max
                np.testing.assert_array_equal(rows[:, 2], histogram.bucket)

        # Distributions are TensorBoard's compression of the same buckets.
        served = _series(tb, "distributions", "tf2", "weights")
        for step, (_, served_step, percentiles) in enumerate(served):
            assert served_step == step
            expected, _ = tf2_buckets(DATA[step])
            assert [tuple(p) for p in percentiles] == compress_histogram(expected)
        served = _series(tb, "distributions", "tbx", "activations")
        for step, (_, _, percentiles) in enumerate(served):
            assert [p[0] for p in percentiles] == [
                0,
                668,
                1587,
                3085,
                5000,
                6915,
                8413,
                9332,
                10000,
            ]
            values = [p[1] for p in percentiles]
            assert values == sorted(values)
            assert values[0] == pytest.approx(float(DATA[step].min()), rel=1e-6)
            assert values[-1] == pytest.approx(float(DATA[step].max()), rel=1e-6)
