"""``npsummary demo [LOGDIR]``: train a small NumPy network and log every summary kind."""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import time
from typing import Any

import numpy as np

from ._demo_extras import log_final, log_layout, log_periodic
from ._demo_model import Net, spirals
from ._progress import Progress

__all__ = ["register", "run_demo"]

_HELP = """\
examples:
  npsummary demo                   write runs/demo (a few seconds), then view it with TensorBoard
  npsummary demo /tmp/demo --steps 50

The "train" run is written with SummaryWriter (the torch / tensorboardX API), the "eval" run
with the tf.summary-style functions; together they use every summary kind npsummary writes.
"""

_DASHBOARDS = """\
Where to look:
  Scalars        loss, accuracy, learning rate (train), eval loss/accuracy (eval), loss_pair
  Histograms     weights and gradients of both layers (train), logits, confidence (eval)
  Distributions  the same histograms as percentile bands
  Images         decision regions and class probabilities (train), confusion matrix (eval)
  Audio          a tone whose pitch follows the loss (train and eval)
  Text           the run's configuration and an epoch report
  PR Curves      one curve per class (train)
  Custom Scalars loss and accuracy in one layout
  HParams        the run's hyperparameters and final eval accuracy
  Projector      the hidden layer's embedding of the eval points
  Mesh           the spirals as a 3-D point cloud; Images also holds a video and boxes
  Time Series    all of the above on one page"""


def register(commands: Any) -> None:
    p = commands.add_parser(
        "demo",
        help="train a tiny NumPy model and log every summary kind",
        description="Train a two-layer NumPy network on three spirals (600 steps take about "
        "2 s) and log every summary kind npsummary writes (scalars, histograms, images, video, "
        "audio, text, PR curves, hparams, custom scalars, mesh, embeddings) through both APIs.",
        epilog=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("logdir", nargs="?", default=os.path.join("runs", "demo"))
    p.add_argument("--steps", type=int, default=600, help="training steps (default 600)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(run=run)


def _tone(loss: float, rate: int = 8000) -> np.ndarray:
    t = np.arange(rate // 4) / rate
    return (0.4 * np.sin(2 * np.pi * (220 + 440 * min(loss, 2.0)) * t)).astype(np.float32)


def _confusion_image(conf: np.ndarray, cell: int = 24) -> np.ndarray:
    frac = conf / max(conf.sum(axis=1, keepdims=True).max(), 1)
    heat = (255 * frac).astype(np.uint8)
    big = np.kron(heat, np.ones((cell, cell), np.uint8))
    return np.stack([big, big // 2, 255 - big], axis=-1)


def _log_train(w: Any, net: Net, step: int, loss: float, acc: float, lr: float, every: int) -> None:
    w.add_scalar("loss", loss, step)
    w.add_scalar("accuracy", acc, step)
    w.add_scalar("learning_rate", lr, step)
    if step % every:
        return
    w.add_scalars("loss_pair", {"train": loss, "smoothed": loss * 0.9 + 0.1}, step)
    for name, value in net.params.items():
        w.add_histogram(f"weights/{name}", value, step)
        w.add_histogram(f"gradients/{name}", net.grads[name], step)
    w.add_distribution("distribution/w1", net.params["w1"], step)
    w.add_variable_summaries("stats/w2", net.params["w2"], step)
    w.add_audio("loss_tone", _tone(loss), step, sample_rate=8000)


def _log_eval(summary: Any, net: Net, x: np.ndarray, y: np.ndarray, step: int) -> float:
    from .. import proto

    _, probs = net.forward(x)
    pred = probs.argmax(1)
    acc = float((pred == y).mean())
    loss = float(-np.log(probs[np.arange(len(y)), y] + 1e-12).mean())
    conf = np.zeros((3, 3), np.int64)
    np.add.at(conf, (y, pred), 1)
    summary.scalar("eval/loss", loss, step=step)
    summary.scalar("eval/accuracy", acc, step=step)
    summary.histogram("eval/logits", np.log(probs + 1e-12), step=step)
    summary.distribution("eval/confidence", probs.max(1), step=step)
    summary.image("eval/confusion", _confusion_image(conf)[None], step=step)
    summary.audio("eval/loss_tone", _tone(loss)[None, :, None], 8000, step=step)
    summary.text("eval/report", f"step {step}: accuracy **{acc:.3f}**, loss {loss:.4f}", step=step)
    # A raw tensor of a plugin of our own: no dashboard draws it, every reader returns it.
    metadata = proto.SummaryMetadata()
    metadata.plugin_data.plugin_name = "npsummary_demo"
    summary.write("eval/confusion_matrix", conf, step=step, metadata=metadata)
    return acc


def run_demo(logdir: str, steps: int, seed: int, progress: Progress) -> float:
    """Train and log; returns the final eval accuracy."""
    import npsummary
    from npsummary import SummaryWriter

    rng = np.random.default_rng(seed)
    x, y = spirals(200, rng)
    xv, yv = spirals(60, rng)
    net = Net(hidden=48, rng=rng)
    every = max(steps // 20, 1)
    train = SummaryWriter(os.path.join(logdir, "train"))
    evaluation = npsummary.create_file_writer(os.path.join(logdir, "eval"))
    config = (
        f"| setting | value |\n|---|---|\n| steps | {steps} |\n| hidden | 48 |\n| seed | {seed} |"
    )
    train.add_text("config", config, 0)
    log_layout(train)
    frames: list[np.ndarray] = []
    acc = 0.0
    start = time.monotonic()
    with train, evaluation.as_default():
        for step in range(steps + 1):
            lr = 0.2 * (0.5 ** (step / max(steps, 1) * 3))
            batch = rng.integers(0, len(y), 128)
            loss, train_acc = net.step(x[batch], y[batch], lr)
            _log_train(train, net, step, loss, train_acc, lr, every)
            if step % every == 0 or step == steps:
                train.add_image(
                    "decision_regions", net.boundary_image(x, y), step, dataformats="HWC"
                )
                maps = net.probability_maps()
                train.add_images("class_probability", maps, step, dataformats="NHWC", padding=2)
                acc = _log_eval(npsummary, net, xv, yv, step)
                frames.append(log_periodic(train, net, xv, yv, step))
            progress.show(f"step {step}/{steps}  loss {loss:.4f}  eval accuracy {acc:.3f}")
        train.add_text(
            "report",
            f"finished in {time.monotonic() - start:.1f} s; eval accuracy {acc:.3f}",
            steps,
        )
        hparams = {"hidden": 48, "steps": steps, "seed": seed, "optimizer": "sgd+momentum"}
        log_final(train, net, xv, yv, frames, hparams, {"eval/accuracy": acc}, steps)
    evaluation.close()
    progress.done()
    return acc


def tensorboard_installed() -> bool:
    """Whether the ``tensorboard`` command is there (on PATH, or the package beside us)."""
    return (
        shutil.which("tensorboard") is not None
        or importlib.util.find_spec("tensorboard") is not None
    )


def view_it(logdir: str, tensorboard: bool) -> list[str]:
    """The demo's last lines: how to view ``logdir``, with the install line first where
    TensorBoard is missing (npsummary does not depend on it), so that what it prints works."""
    if tensorboard:
        lines = ["View it with:"]
    else:
        lines = [
            "View it with TensorBoard, which is not installed here:",
            "  pip install tensorboard",
        ]
    return [*lines, f"  tensorboard --logdir {logdir}", "then open http://localhost:6006"]


def run(args: argparse.Namespace) -> int:
    from ._errors import CommandError

    if args.steps < 1:
        raise CommandError(f"--steps must be at least 1, got {args.steps}")
    if os.path.exists(args.logdir) and not os.path.isdir(args.logdir):
        raise CommandError(f"{args.logdir} exists and is not a directory")
    start = time.monotonic()
    acc = run_demo(args.logdir, args.steps, args.seed, Progress())
    took = time.monotonic() - start
    print(f"Trained {args.steps} steps in {took:.1f} s; eval accuracy {acc:.3f}.")
    train, evaluation = os.path.join(args.logdir, "train"), os.path.join(args.logdir, "eval")
    print(f"Logged to {train} (SummaryWriter API) and {evaluation} (tf.summary API).")
    print("\n".join(view_it(args.logdir, tensorboard_installed())))
    print(_DASHBOARDS)
    sys.stdout.flush()
    return 0
