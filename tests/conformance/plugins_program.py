"""One program per plugin method of tensorboardX / torch ``SummaryWriter``, run by
``gen_plugins_golden.py`` with the anchor and by ``tests/conformance/test_plugins_conformance.py``
with npsummary. Each section takes ``(writer, tensor)`` where ``tensor`` turns a NumPy array into
what the anchor expects (a torch tensor for torch, the array itself otherwise).

``ANCHORS`` names the library each section is compared with: tensorboardX 2.6, or torch where
torch's format is the one TensorBoard reads (mesh) or the method exists only there (tensor,
``rescale`` of boxes, ``hparam_domain_discrete``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Tensor = Callable[[np.ndarray], Any]

RNG = np.random.default_rng(20261201)
LABELS = RNG.integers(0, 2, 200)
PREDICTIONS = RNG.random(200).astype(np.float32)
WEIGHTS = RNG.random(200)
# Four colours only, so the GIF is lossless and decoded frames compare exactly.
VIDEO = (RNG.integers(0, 4, (3, 5, 3, 12, 16)) * 85).astype(np.uint8)
VIDEO_FLOAT = RNG.integers(0, 3, (1, 4, 1, 10, 10)).astype(np.float32) / 2
MAT = RNG.standard_normal((12, 5)).astype(np.float32)
LABEL_IMG = RNG.random((12, 3, 6, 6)).astype(np.float32)
IMAGE = RNG.random((3, 40, 48)).astype(np.float32)
BOXES = np.array([[4.0, 5.0, 30.0, 25.0], [20.0, 10.0, 44.0, 36.0]])
VERTICES = RNG.standard_normal((1, 6, 3)).astype(np.float32)
COLORS = RNG.integers(0, 256, (1, 6, 3)).astype(np.uint8)
FACES = np.array([[[0, 1, 2], [1, 2, 3], [3, 4, 5]]], dtype=np.int32)


def hparams(writer: Any, tensor: Tensor) -> None:
    hp = {"lr": 0.01, "batch": 32, "optimizer": "adam", "dropout": None}
    writer.add_hparams(hp, {"hp/accuracy": 0.9, "hp/loss": 0.25}, run_name="session1")
    writer.add_hparams(
        {"lr": 0.1, "batch": 64, "optimizer": "sgd"},
        {"hp/accuracy": 0.7},
        {"optimizer": ["adam", "sgd"], "batch": [32, 64]},
        run_name="session2",
        global_step=5,
    )


def pr_curves(writer: Any, tensor: Tensor) -> None:
    writer.add_pr_curve("pr", tensor(LABELS), tensor(PREDICTIONS), 1)
    writer.add_pr_curve("pr", tensor(LABELS), tensor(PREDICTIONS), 2, num_thresholds=11)
    writer.add_pr_curve("pr_weighted", tensor(LABELS), tensor(PREDICTIONS), 3, 50, tensor(WEIGHTS))
    rows = np.stack([np.arange(7.0)[::-1], np.arange(7.0), np.arange(7.0), np.arange(7.0)[::-1]])
    precision = rows[0] / np.maximum(rows[0] + rows[1], 1)
    recall = rows[0] / np.maximum(rows[0] + rows[3], 1)
    writer.add_pr_curve_raw("raw", *rows, precision, recall, 4, num_thresholds=7)


def custom_scalars(writer: Any, tensor: Tensor) -> None:
    writer.add_custom_scalars(
        {
            "Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
            "USA": {
                "dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                "nasdaq": ["Margin", ["nasdaq/aaa", "nasdaq/bbb", "nasdaq/ccc"]],
            },
        }
    )
    writer.add_custom_scalars_multilinechart(["loss/.*"], category="cat", title="losses")
    writer.add_custom_scalars_marginchart(["m/v", "m/lo", "m/hi"])


def video(writer: Any, tensor: Tensor) -> None:
    writer.add_video("clip", tensor(VIDEO), 1, fps=4)
    writer.add_video("gray", tensor(VIDEO_FLOAT), 2, fps=10)


def embedding(writer: Any, tensor: Tensor) -> None:
    labels = [f"p{i}" for i in range(12)]
    writer.add_embedding(tensor(MAT), metadata=labels, label_img=tensor(LABEL_IMG), tag="points")
    rows = [[f"p{i}", i % 3] for i in range(12)]
    writer.add_embedding(
        tensor(MAT * 2), rows, global_step=3, tag="a/b", metadata_header=["name", "cls"]
    )
    writer.add_embedding(tensor(MAT[:4]), global_step=4)


def boxes(writer: Any, tensor: Tensor) -> None:
    writer.add_image_with_boxes("boxes", tensor(IMAGE), tensor(BOXES), 1)
    writer.add_image_with_boxes("labelled", tensor(IMAGE), tensor(BOXES), 2, labels=["cat", "dog"])
    writer.add_image_with_boxes("scaled", tensor(IMAGE), tensor(BOXES), 3, rescale=0.5)


def mesh(writer: Any, tensor: Tensor) -> None:
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}}
    writer.add_mesh("mesh", tensor(VERTICES), tensor(COLORS), tensor(FACES), config, 1)
    writer.add_mesh("cloud", tensor(VERTICES), global_step=2)


def tensors(writer: Any, tensor: Tensor) -> None:
    writer.add_tensor("floats", tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), 1)
    writer.add_tensor("ints", tensor(np.arange(4, dtype=np.int64)), 2)
    writer.add_tensor("doubles", tensor(np.array([0.1, -2.5])), 3)
    writer.add_tensor("flags", tensor(np.array([True, False])), 4)


SECTIONS: dict[str, Callable[[Any, Tensor], None]] = {
    "hparams": hparams,
    "pr_curves": pr_curves,
    "custom_scalars": custom_scalars,
    "video": video,
    "embedding": embedding,
    "boxes": boxes,
    "mesh": mesh,
    "tensors": tensors,
}

ANCHORS = {
    "hparams": "torch",
    "pr_curves": "tensorboardX",
    "custom_scalars": "tensorboardX",
    "video": "tensorboardX",
    "embedding": "torch",
    "boxes": "torch",
    "mesh": "torch",
    "tensors": "torch",
}
