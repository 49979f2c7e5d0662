"""Images through a real TensorBoard server, on both loaders: listed samples, exact pixels."""

from __future__ import annotations

import functools
import io

import numpy as np
import pytest

import npsummary
from npsummary import SummaryWriter
from npsummary._imaging.pixels import tf2_convert_image_dtype
from tbserver import LOADERS, tensorboard

pytestmark = pytest.mark.live
Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(11)
BATCH = RNG.random((3, 6, 10, 3)).astype(np.float32)  # [k, h, w, c]
GRAY = (RNG.random((7, 9)) * 255).astype(np.uint8)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_images")
    writer = npsummary.create_file_writer(str(root / "tf2"))
    with writer.as_default(step=5):
        assert npsummary.image("batch", BATCH, max_outputs=2)
    writer.close()
    with SummaryWriter(str(root / "tbx")) as tbx:
        tbx.add_image("gray", GRAY, 1, dataformats="HW")
        tbx.add_image("gray", 255 - GRAY, 2, dataformats="HW")
    return str(root)


def _decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


@pytest.mark.parametrize("load_fast", LOADERS)
def test_images_endpoint_serves_the_logged_pixels(logdir: str, load_fast: str) -> None:
    with tensorboard(logdir, load_fast) as tb:
        tags = tb.wait_for(
            lambda: (t := tb.get_json("/data/plugin/images/tags")) and len(t) == 2 and t
        )
        assert tags["tf2"]["batch"]["samples"] == 2
        assert tags["tbx"]["gray"]["samples"] == 1

        for sample in range(2):
            (entry,) = tb.wait_for(
                functools.partial(
                    tb.get_json, "/data/plugin/images/images", run="tf2", tag="batch", sample=sample
                )
            )
            assert entry["step"] == 5
            png = tb.get(f"/data/plugin/images/individualImage?{entry['query']}")
            np.testing.assert_array_equal(_decode(png), tf2_convert_image_dtype(BATCH[sample]))

        entries = tb.wait_for(
            lambda: (
                (e := tb.get_json("/data/plugin/images/images", run="tbx", tag="gray", sample=0))
                and len(e) == 2
                and e
            )
        )
        assert [e["step"] for e in entries] == [1, 2]
        for entry, expected in zip(entries, (GRAY, 255 - GRAY), strict=True):
            png = tb.get(f"/data/plugin/images/individualImage?{entry['query']}")
            # one channel is written as RGB, as tensorboardX and torch write it
            np.testing.assert_array_equal(_decode(png), np.repeat(expected[..., None], 3, axis=2))
