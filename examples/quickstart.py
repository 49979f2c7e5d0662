"""Train a tiny NumPy network and log it for TensorBoard: a short script showing both APIs.

Run:  python examples/quickstart.py [--logdir runs] [--steps 300]
Then: tensorboard --logdir runs

It fits a one-hidden-layer tanh network to a noisy sine with plain NumPy gradient descent and
logs, every few steps, what people open TensorBoard for: the loss curve (scalars), weight and
activation histograms (histograms and distributions), the learned curve as a figure-free image,
and the first layer's weights as a grid. Both APIs are shown: the tensorboardX-style
SummaryWriter writes the run ``quickstart``; the tf.summary-style functions write
``quickstart_tf2``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import npsummary
from npsummary import SummaryWriter


def _plot(x: np.ndarray, y: np.ndarray, pred: np.ndarray, size: int = 64) -> np.ndarray:
    """Rasterise targets (gray) and predictions (red) into an RGB image, no matplotlib."""
    image = np.ones((size, size, 3), np.float32)
    cols = ((x - x.min()) / (np.ptp(x) or 1.0) * (size - 1)).astype(int).ravel()
    for values, color in ((y, (0.6, 0.6, 0.6)), (pred, (0.9, 0.1, 0.1))):
        rows = ((1.5 - np.clip(values, -1.5, 1.5)) / 3.0 * (size - 1)).astype(int).ravel()
        image[rows, cols] = color
    return image


def train(logdir: str, steps: int = 200, seed: int = 0, log_every: int = 10) -> dict[str, float]:
    """Fit y = sin(3x) with a 1-16-1 tanh network; return the final loss and parameters."""
    rng = np.random.default_rng(seed)
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(-1, 1)
    y = np.sin(3 * x) + 0.05 * rng.normal(size=x.shape).astype(np.float32)
    w1 = rng.normal(0, 1.0, size=(1, 16)).astype(np.float32)
    b1 = np.zeros(16, np.float32)
    w2 = rng.normal(0, 0.25, size=(16, 1)).astype(np.float32)
    b2 = np.zeros(1, np.float32)
    lr = 0.1
    loss = float("nan")

    tf_writer = npsummary.create_file_writer(os.path.join(logdir, "quickstart_tf2"))
    with SummaryWriter(os.path.join(logdir, "quickstart")) as writer:
        for step in range(steps):
            hidden = np.tanh(x @ w1 + b1)
            pred = hidden @ w2 + b2
            err = pred - y
            loss = float(np.mean(err**2))
            grad_pred = 2 * err / len(x)
            grad_w2 = hidden.T @ grad_pred
            grad_hidden = grad_pred @ w2.T * (1 - hidden**2)
            w2 -= lr * grad_w2
            b2 -= lr * grad_pred.sum(axis=0)
            w1 -= lr * (x.T @ grad_hidden)
            b1 -= lr * grad_hidden.sum(axis=0)

            writer.add_scalar("loss", loss, step)
            if step % log_every == 0 or step == steps - 1:
                writer.add_scalars(
                    "grad_norm",
                    {
                        "w1": float(np.linalg.norm(x.T @ grad_hidden)),
                        "w2": float(np.linalg.norm(grad_w2)),
                    },
                    step,
                )
                writer.add_histogram("layer1/weights", w1, step)
                writer.add_histogram("layer1/activations", hidden, step)
                writer.add_variable_summaries("layer2/weights", w2, step)
                writer.add_distribution("layer1/bias", b1, step)
                writer.add_image("fit", _plot(x, y, pred), step, dataformats="HWC")
                writer.add_filters(
                    "layer1/weights_grid", w1.reshape(1, 1, 1, 16), step, normalize="layer"
                )
                with tf_writer.as_default(step=step):
                    npsummary.scalar("loss", loss, description="mean squared error")
                    npsummary.histogram("predictions", pred)
                    npsummary.image("fit", _plot(x, y, pred)[None])
    tf_writer.close()
    return {"loss": loss, "w2_norm": float(np.linalg.norm(w2))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--logdir", default="runs")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    result = train(args.logdir, args.steps)
    print(f"final loss {result['loss']:.4f}; logs in {args.logdir}/quickstart*")
    print(f"view with: tensorboard --logdir {args.logdir}")


if __name__ == "__main__":
    main()
