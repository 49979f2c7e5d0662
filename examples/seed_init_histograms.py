"""How sample size shapes a histogram: weight and bias initialisation, TF1 style.

A NumPy port of "Tensorflow wrong bias initialization" (seed 001). Two layers are initialised
with the same ``uniform(-0.1, 0.1)``; the hidden layer's bias has ``attention_size`` = 200
entries, the output layer's bias only ``n_outputs`` = 10. In TensorBoard the 200-sample bias
looks roughly flat while the 10-sample one shows a few spikes (the "bimodal" histogram of the
question): the initialisation is right, small samples are simply lumpy. A third run,
``sample_size``, logs histograms of uniform(-0.1, 0.1) samples of size 10, 100, 1000 and 100000
side by side to make the point directly.

The training code keeps the original's TF1 logging structure, ported to ``npsummary.v1``:
``variable_summaries`` under name scopes, ``merge_all`` and ``FileWriter.add_summary`` every
other epoch. The data are 10 Gaussian classes in 64 dimensions, generated in code.

Run:  python examples/seed_init_histograms.py [--logdir runs/init] [--epochs 20]
Then: tensorboard --logdir runs/init
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import npsummary
from npsummary import v1

N_INPUTS = 64
ATTENTION_SIZE = 200
N_OUTPUTS = 10
BATCH = 50


def variable_summaries(var: np.ndarray, name: str) -> None:
    """The seed's helper: mean, max, min and a histogram of ``var`` under scope ``name``."""
    with npsummary.name_scope(name):
        v1.scalar("mean", var.mean())
        v1.scalar("max", var.max())
        v1.scalar("min", var.min())
        v1.histogram("histogram", var)


def make_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    centers = np.random.default_rng(1234).normal(0.0, 1.0, size=(N_OUTPUTS, N_INPUTS))
    labels = rng.integers(0, N_OUTPUTS, size=n)
    x = centers[labels] + rng.normal(0.0, 4.0, size=(n, N_INPUTS))
    return x.astype(np.float32), labels


def main(logdir: str, epochs: int = 20, n_train: int = 2000, seed: int = 42) -> dict[str, float]:
    """Train for ``epochs``; summaries every other epoch; return the final accuracy."""
    rng = np.random.default_rng(seed)
    x_train, y_train = make_data(rng, n_train)
    x_val, y_val = make_data(rng, 500)

    def uniform(*shape: int) -> np.ndarray:
        return rng.uniform(-0.1, 0.1, size=shape).astype(np.float32)

    w_omega, b_omega = uniform(N_INPUTS, ATTENTION_SIZE), uniform(ATTENTION_SIZE)
    w_out, b_out = uniform(ATTENTION_SIZE, N_OUTPUTS), uniform(N_OUTPUTS)
    learning_rate = 0.05

    def forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hidden = np.tanh(x @ w_omega + b_omega)
        logits = hidden @ w_out + b_out
        return hidden, logits

    def accuracy(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(forward(x)[1].argmax(axis=1) == y))

    train_writer = v1.FileWriter(os.path.join(logdir, "train"))
    acc_val = 0.0
    for epoch in range(epochs):
        order = rng.permutation(n_train)
        for start in range(0, n_train, BATCH):
            idx = order[start : start + BATCH]
            x, y = x_train[idx], y_train[idx]
            hidden, logits = forward(x)
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            grad = p
            grad[np.arange(len(y)), y] -= 1.0
            grad /= len(y)
            grad_hidden = (grad @ w_out.T) * (1.0 - hidden**2)
            w_out -= learning_rate * hidden.T @ grad
            b_out -= learning_rate * grad.sum(axis=0)
            w_omega -= learning_rate * x.T @ grad_hidden
            b_omega -= learning_rate * grad_hidden.sum(axis=0)
        if epoch % 2 == 0:
            # In TF1 these ops were built once and re-run; here they run when called.
            with npsummary.name_scope("dnn"):
                with (
                    npsummary.name_scope("hidden1_attn"),
                    npsummary.name_scope("Attention_variables"),
                ):
                    variable_summaries(w_omega, "W_omega")
                    variable_summaries(b_omega, "b_omega")
                with npsummary.name_scope("outputs"):
                    variable_summaries(w_out, "W")
                    variable_summaries(b_out, "b")
            acc_val = accuracy(x_val, y_val)
            with npsummary.name_scope("eval"):  # held-out data, not the last training batch
                v1.scalar("accuracy", acc_val)
            train_writer.add_summary(v1.merge_all(), epoch)
    train_writer.close()

    # The answer's point, on its own: the same distribution at four sample sizes.
    with v1.FileWriter(os.path.join(logdir, "sample_size")) as writer:
        sample_rng = np.random.default_rng(seed)
        for step, size in enumerate((10, 100, 1000, 100000)):
            sample = sample_rng.uniform(-0.1, 0.1, size=size)
            writer.add_summary(v1.histogram("uniform_init", sample), step)
            v1.merge_all()
    return {"val_accuracy": acc_val}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logdir", default="runs/init")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    print(main(args.logdir, epochs=args.epochs))
