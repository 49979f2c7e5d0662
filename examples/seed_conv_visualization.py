"""Visualising a small conv net's training: scalars, variable summaries, filters, feature maps.

A NumPy port of "使用tensorboard将卷积的过程可视化" (visualising convolution with TensorBoard,
seed 004). The original trains a two-layer conv net on MNIST in TF1 and logs, through
``merge_all`` and two ``FileWriter`` (train, test):

* ``variable_summaries`` (mean, stddev, max, min, histogram) of every weight and bias;
* the loss and accuracy;
* the input images, and images of what the convolutions do.

Here the same net (conv 5x5 → ReLU → max-pool, twice, then two dense layers) is written in
NumPy and trained with Adam on 28x28 images of ten shape classes generated in code (bars,
crosses, rings, …; no download). Logging uses the ``SummaryWriter`` API, one writer per run
(``train`` and ``test``): ``add_variable_summaries``, ``add_scalar``, ``add_images`` for the
inputs, ``add_filters`` for grids of both conv layers' filters (TF's ``HWIO`` layout) and
``add_feature_maps`` for what both conv layers output on one test image. The seed's
deconvolution trick (``conv2d_transpose`` with random weights) is replaced by drawing the
feature maps directly, which shows what each filter responds to.

Run:  python examples/seed_conv_visualization.py [--logdir runs/conv] [--steps 300]
      (the default 300 steps take about a minute on one core; --steps 50 about 15 s)
Then: tensorboard --logdir runs/conv
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from npsummary import SummaryWriter

SIZE = 28
CLASSES = 10
K = 5  # kernel size; "SAME" padding of 2


# -- data -------------------------------------------------------------------------------------


def make_images(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy 28x28 images of ten shape classes, NHWC float32 in [0, 1], and labels."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    labels = rng.integers(0, CLASSES, size=n)
    images = np.empty((n, SIZE, SIZE, 1), np.float32)
    for i, label in enumerate(labels):
        cy, cx = rng.uniform(10, 18, size=2)
        r = rng.uniform(5, 8)
        dy, dx = yy - cy, xx - cx
        dist = np.hypot(dy, dx)
        shapes = [
            np.abs(dy) < 1.5,  # horizontal bar
            np.abs(dx) < 1.5,  # vertical bar
            np.abs(dy - dx) < 1.5,  # diagonal
            np.abs(dy + dx) < 1.5,  # anti-diagonal
            (np.abs(dy) < 1.5) | (np.abs(dx) < 1.5),  # plus
            (np.abs(dy - dx) < 1.5) | (np.abs(dy + dx) < 1.5),  # x
            np.abs(np.maximum(np.abs(dy), np.abs(dx)) - r) < 1.2,  # square outline
            dist < r,  # disc
            np.abs(dist - r) < 1.2,  # ring
            (np.abs(dy - r / 2) < 1.2) | (np.abs(dy + r / 2) < 1.2),  # two bars
        ]
        inside = shapes[label] & (np.maximum(np.abs(dy), np.abs(dx)) <= r + 1)
        images[i, :, :, 0] = inside
    images += rng.normal(0.0, 0.15, size=images.shape).astype(np.float32)
    return np.clip(images, 0.0, 1.0), labels


# -- layers -----------------------------------------------------------------------------------


def conv2d(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Stride-1 "SAME" convolution: x [N, H, W, C], w [K, K, C, F] -> [N, H, W, F]."""
    pad = K // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    windows = sliding_window_view(padded, (K, K), axis=(1, 2))  # [N, H, W, C, K, K]
    out: np.ndarray = np.einsum("nhwcij,ijcf->nhwf", windows, w, optimize=True)
    return out


def conv2d_grads(x: np.ndarray, w: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of :func:`conv2d` with respect to x and w."""
    pad = K // 2
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    windows = sliding_window_view(padded, (K, K), axis=(1, 2))
    grad_w = np.einsum("nhwcij,nhwf->ijcf", windows, grad, optimize=True)
    flipped = w[::-1, ::-1].transpose(0, 1, 3, 2)  # [K, K, F, C]
    return conv2d(grad, flipped), grad_w


def max_pool(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 max-pool with stride 2; also returns which element of each block won (argmax, so
    ties send the gradient to one element only, as TensorFlow does)."""
    n, h, w, c = x.shape
    blocks = x.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
    blocks = blocks.reshape(n, h // 2, w // 2, c, 4)
    winner = blocks.argmax(axis=-1)
    pooled = np.take_along_axis(blocks, winner[..., None], axis=-1)[..., 0]
    return pooled, winner


def max_pool_grad(winner: np.ndarray, grad: np.ndarray) -> np.ndarray:
    n, h2, w2, c = winner.shape
    blocks = np.zeros((n, h2, w2, c, 4), grad.dtype)
    np.put_along_axis(blocks, winner[..., None], grad[..., None], axis=-1)
    full: np.ndarray = (
        blocks.reshape(n, h2, w2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(n, h2 * 2, w2 * 2, c)
    )
    return full


class Net:
    def __init__(self, rng: np.random.Generator, c1: int = 8, c2: int = 16, hidden: int = 64):
        def weight(*shape: int) -> np.ndarray:
            # tf.truncated_normal(stddev=0.1): redraw values beyond two standard deviations.
            w = rng.normal(0.0, 0.1, size=shape)
            while (bad := np.abs(w) > 0.2).any():
                w[bad] = rng.normal(0.0, 0.1, size=int(bad.sum()))
            return w.astype(np.float32)

        self.params = {
            "conv1/weights": weight(K, K, 1, c1),
            "conv1/bias": np.full(c1, 0.1, np.float32),
            "conv2/weights": weight(K, K, c1, c2),
            "conv2/bias": np.full(c2, 0.1, np.float32),
            "fc1/weights": weight(7 * 7 * c2, hidden),
            "fc1/bias": np.full(hidden, 0.1, np.float32),
            "fc2/weights": weight(hidden, CLASSES),
            "fc2/bias": np.full(CLASSES, 0.1, np.float32),
        }
        self.m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.t = 0

    def forward(self, x: np.ndarray) -> dict[str, np.ndarray]:
        p = self.params
        out = {"x": x}
        out["conv1"] = conv2d(x, p["conv1/weights"]) + p["conv1/bias"]
        out["h_conv1"] = np.maximum(out["conv1"], 0)
        out["h_pool1"], out["mask1"] = max_pool(out["h_conv1"])
        out["conv2"] = conv2d(out["h_pool1"], p["conv2/weights"]) + p["conv2/bias"]
        out["h_conv2"] = np.maximum(out["conv2"], 0)
        out["h_pool2"], out["mask2"] = max_pool(out["h_conv2"])
        flat = out["h_pool2"].reshape(len(x), -1)
        out["flat"] = flat
        out["h_fc1"] = np.maximum(flat @ p["fc1/weights"] + p["fc1/bias"], 0)
        logits = out["h_fc1"] @ p["fc2/weights"] + p["fc2/bias"]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        out["probs"] = e / e.sum(axis=1, keepdims=True)
        return out

    def loss_and_grads(
        self, out: dict[str, np.ndarray], labels: np.ndarray
    ) -> tuple[float, dict[str, np.ndarray]]:
        p, n = self.params, len(labels)
        probs = out["probs"]
        loss = float(-np.log(probs[np.arange(n), labels] + 1e-10).sum())  # the seed's sum
        g = probs.copy()
        g[np.arange(n), labels] -= 1.0
        grads = {"fc2/weights": out["h_fc1"].T @ g, "fc2/bias": g.sum(axis=0)}
        g = (g @ p["fc2/weights"].T) * (out["h_fc1"] > 0)
        grads["fc1/weights"] = out["flat"].T @ g
        grads["fc1/bias"] = g.sum(axis=0)
        g = (g @ p["fc1/weights"].T).reshape(out["h_pool2"].shape)
        g = max_pool_grad(out["mask2"], g) * (out["conv2"] > 0)
        grads["conv2/bias"] = g.sum(axis=(0, 1, 2))
        g, grads["conv2/weights"] = conv2d_grads(out["h_pool1"], p["conv2/weights"], g)
        g = max_pool_grad(out["mask1"], g) * (out["conv1"] > 0)
        grads["conv1/bias"] = g.sum(axis=(0, 1, 2))
        _, grads["conv1/weights"] = conv2d_grads(out["x"], p["conv1/weights"], g)
        return loss, grads

    def adam(self, grads: dict[str, np.ndarray], lr: float = 1e-3) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m_hat = self.m[k] / (1 - 0.9**self.t)
            v_hat = self.v[k] / (1 - 0.999**self.t)
            self.params[k] -= (lr * m_hat / (np.sqrt(v_hat) + 1e-8)).astype(np.float32)


# -- logging ----------------------------------------------------------------------------------


def log_step(
    writer: SummaryWriter,
    net: Net,
    out: dict[str, np.ndarray],
    loss: float,
    accuracy: float,
    step: int,
    *,
    images: bool,
) -> None:
    for name, value in net.params.items():
        writer.add_variable_summaries(name, value, step)
    writer.add_scalar("loss", loss, step)
    writer.add_scalar("accuracy/accuracy", accuracy, step)
    if images:
        writer.add_images("input_image/input", out["x"][:10], step, dataformats="NHWC")
        writer.add_filters("conv1/filters", net.params["conv1/weights"], step, layout="HWIO")
        writer.add_filters("conv2/filters", net.params["conv2/weights"], step, layout="HWIO")
        for layer in ("h_conv1", "h_conv2"):
            writer.add_feature_maps(f"{layer}/feature_maps", out[layer], step, dataformats="NHWC")


def main(
    logdir: str, steps: int = 300, batch: int = 50, log_every: int = 25, seed: int = 0
) -> dict[str, float]:
    """Train for ``steps`` batches; log train summaries every ``log_every`` steps and test
    summaries with images every ``4 * log_every``. Returns the final test accuracy."""
    rng = np.random.default_rng(seed)
    net = Net(rng)
    x_test, y_test = make_images(rng, 200)
    test_accuracy = 0.0
    with (
        SummaryWriter(os.path.join(logdir, "train")) as train_writer,
        SummaryWriter(os.path.join(logdir, "test")) as test_writer,
    ):
        for step in range(steps):
            x, y = make_images(rng, batch)
            out = net.forward(x)
            loss, grads = net.loss_and_grads(out, y)
            last = step == steps - 1
            if step % log_every == 0 or last:
                accuracy = float(np.mean(out["probs"].argmax(axis=1) == y))
                log_step(train_writer, net, out, loss, accuracy, step, images=False)
            if step % (4 * log_every) == 0 or last:
                test_out = net.forward(x_test[:batch])
                test_loss, _ = net.loss_and_grads(test_out, y_test[:batch])
                test_accuracy = float(np.mean(test_out["probs"].argmax(axis=1) == y_test[:batch]))
                log_step(test_writer, net, test_out, test_loss, test_accuracy, step, images=True)
            net.adam(grads)
    return {"test_accuracy": test_accuracy, "loss": loss}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logdir", default="runs/conv")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    print(main(args.logdir, steps=args.steps))
