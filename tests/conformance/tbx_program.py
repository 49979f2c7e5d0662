"""One training-style program written against the tensorboardX / torch ``SummaryWriter`` API.

``gen_tbx_golden.py`` runs it once with tensorboardX 2.6 (the committed golden run);
``tests/conformance/test_conformance_tbx.py`` runs it with npsummary and compares what both wrote,
read back with TensorBoard's ``EventAccumulator``. It uses every summary kind both writers share,
with data on which both libraries' value rules agree: uint8 images, float images within [0, 1]
(tensorboardX wraps values beyond), audio within [-1, 1].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.data import pseudo, pseudo32


def _uint8(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return (pseudo(shape, seed, 0.0, 256.0)).astype(np.uint8)


def run(writer: Any) -> None:
    """Log everything through ``writer`` (a tensorboardX or npsummary ``SummaryWriter``)."""
    for step in range(5):
        writer.add_scalar("train/loss", 1.0 / (step + 1), step)
        writer.add_scalar("train/lr", np.float32(0.1) * 0.5**step, step)
        writer.add_scalar("train/int", step * 3, step)
        writer.add_scalars("compare", {"a": step * 0.5, "b": -step * 1.25}, step)
    writer.add_scalar("titled", 7.25, 3, None, "Nice title", "a *description*")
    writer.add_scalar("titled2", 8.5, 4, display_name="only title")
    writer.add_scalar("walltime", 2.5, 9, walltime=1_700_000_000.25)

    weights = pseudo32((400,), 7, -3.0, 3.0)
    writer.add_histogram("hist/tf_bins", weights, 1)
    writer.add_histogram("hist/tf_bins", weights * 2 + 1, 2)
    writer.add_histogram("hist/int_bins", weights, 1, bins=10)
    writer.add_histogram("hist/auto", pseudo((300,), 8), 1, bins="auto")
    writer.add_histogram("hist/max_bins", weights, 1, bins=40, max_bins=8)
    writer.add_histogram_raw(
        "hist/raw",
        min=-1.0,
        max=3.0,
        num=6,
        sum=5.0,
        sum_squares=15.0,
        bucket_limits=[0.0, 1.0, 2.0, 3.0],
        bucket_counts=[1, 2, 2, 1],
        global_step=2,
    )

    writer.add_image("img/chw_u8", _uint8((3, 6, 5), 11), 0)
    writer.add_image("img/hwc_u8", _uint8((4, 7, 3), 12), 1, dataformats="HWC")
    writer.add_image("img/rgba", _uint8((5, 4, 4), 13), 1, dataformats="HWC")
    writer.add_image("img/gray_float", pseudo32((1, 6, 6), 14, 0.0, 1.0), 2)
    writer.add_image("img/rgb_float64", pseudo((3, 5, 4), 18, 0.0, 1.0), 2)
    writer.add_image("img/hw", _uint8((5, 9), 15), 2, dataformats="HW")
    writer.add_images("img/batch", _uint8((3, 3, 4, 5), 16), 3)
    writer.add_images("img/batch_nhwc", _uint8((10, 4, 3, 3), 17), 3, dataformats="NHWC")

    writer.add_text("notes", "Hello **markdown**", 0)
    writer.add_text("notes", "second entry, üñíçødé", 1)

    clip = pseudo((800,), 21, -0.9, 0.9)
    writer.add_audio("sound/mono", clip, 0, sample_rate=8000)
    writer.add_audio("sound/stereo", pseudo((600, 2), 22, -0.5, 0.5), 1, sample_rate=16000)
    writer.flush()
