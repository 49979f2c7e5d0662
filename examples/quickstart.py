"""Train a tiny NumPy model and log it for TensorBoard: the README's main job.

Run:  python examples/quickstart.py [--logdir runs] [--steps 200]
Then: tensorboard --logdir runs
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import npsummary
from npsummary import SummaryWriter


def train(logdir: str, steps: int = 200, seed: int = 0) -> dict[str, float]:
    """Fit y = 3x - 1 with gradient descent; log loss, weights and learning rate."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(256, 1)).astype(np.float32)
    y = 3.0 * x - 1.0 + 0.1 * rng.normal(size=x.shape).astype(np.float32)
    w, b, lr = np.float32(0.0), np.float32(0.0), 0.05

    # The tensorboardX / torch.utils.tensorboard style.
    with SummaryWriter(os.path.join(logdir, "quickstart")) as writer:
        for step in range(steps):
            pred = w * x + b
            err = pred - y
            loss = float(np.mean(err**2))
            w -= lr * float(np.mean(2 * err * x))
            b -= lr * float(np.mean(2 * err))
            writer.add_scalar("loss", loss, step)
            writer.add_scalars("params", {"w": w, "b": b}, step)
            writer.add_scalar("lr", lr, step)

    # The tf.summary style, writing a second run.
    tf_writer = npsummary.create_file_writer(os.path.join(logdir, "quickstart_tf2"))
    with tf_writer.as_default(step=0):
        for step in range(steps):
            npsummary.experimental.set_step(step)
            npsummary.scalar("smoothed_loss", loss * (1 + 1 / (step + 1)))
    tf_writer.close()
    return {"loss": loss, "w": float(w), "b": float(b)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--logdir", default="runs")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()
    result = train(args.logdir, args.steps)
    print(f"final loss {result['loss']:.4f}, w={result['w']:.3f}, b={result['b']:.3f}")
    print(f"view with: tensorboard --logdir {args.logdir}")


if __name__ == "__main__":
    main()
