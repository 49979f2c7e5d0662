"""The demo's SummaryWriter-only kinds: PR curves, custom scalars, hparams, embeddings, video,
a mesh, boxes and a raw tensor (tensorboardX / torch formats)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._demo_model import CLASS_COLOURS, Net

__all__ = ["log_final", "log_layout", "log_periodic"]


def log_layout(w: Any) -> None:
    """The Custom Scalars dashboard's layout: loss and accuracy side by side."""
    w.add_custom_scalars(
        {"training": {"loss": ["Multiline", ["loss"]], "accuracy": ["Multiline", ["accuracy"]]}}
    )


def log_periodic(w: Any, net: Net, xv: np.ndarray, yv: np.ndarray, step: int) -> np.ndarray:
    """PR curves per class and boxes around each class's points; returns the frame for the
    video (the decision regions at this step, ``[3, H, W]`` uint8)."""
    _, probs = net.forward(xv)
    for k in range(3):
        w.add_pr_curve(f"pr/class_{k}", yv == k, probs[:, k], step, num_thresholds=51)
    image = net.boundary_image(xv, yv, size=64)
    boxes = []
    for k in range(3):
        pts = xv[yv == k]
        lo, hi = (pts.min(0) + 1.1) / 2.2 * 63, (pts.max(0) + 1.1) / 2.2 * 63
        boxes.append([lo[0], 63 - hi[1], hi[0], 63 - lo[1]])
    w.add_image_with_boxes(
        "boxes", image, np.array(boxes), step, dataformats="HWC", labels=["c0", "c1", "c2"]
    )
    frame: np.ndarray = image.transpose(2, 0, 1)
    return frame


def log_final(
    w: Any,
    net: Net,
    xv: np.ndarray,
    yv: np.ndarray,
    frames: list[np.ndarray],
    hparams: dict[str, Any],
    metrics: dict[str, float],
    step: int,
) -> None:
    """Video of training, hidden-layer embedding, a 3-D point cloud, a raw tensor, hparams."""
    w.add_video("training_video", np.stack(frames)[None], step, fps=4)
    hidden, _ = net.forward(xv)
    w.add_embedding(hidden, metadata=[f"class {k}" for k in yv], global_step=step, tag="hidden")
    z = np.linspace(-1, 1, len(xv))
    vertices = np.column_stack([xv, z])[None].astype(np.float32)
    colors = CLASS_COLOURS[yv][None]
    w.add_mesh("spirals_3d", vertices, colors=colors, global_step=step)
    w.add_tensor("first_layer_weights", net.params["w1"].astype(np.float32), step)
    w.add_hparams(hparams, metrics, run_name="hparams")
