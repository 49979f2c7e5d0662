"""Write the reader's golden event files with the real writers (run once; the output is committed).

    python3.11 -m venv .venv-golden
    .venv-golden/bin/pip install tensorflow-cpu tensorboard tensorboardX 'torch==2.13.0'
    .venv-golden/bin/python tests/golden/reader/gen_reader_golden.py

Each writer (TF2 ``tf.summary``, TF1 ``tf.compat.v1.summary``, tensorboardX and
``torch.utils.tensorboard``) logs the same data (``DATA`` below: scalars with a duplicate step,
histograms, images, audio, text, PR curves, hparams) into ``<writer>/`` here, and what it logged
goes to ``<writer>.json`` together with the library versions. The test suite never imports
TensorFlow or torch: tests/reader/test_reader_golden.py reads these files with npsummary.reader and
with TensorBoard's own reader and compares both with the JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
STEPS = 3
RATE = 8000


def data() -> dict[str, Any]:
    rng = np.random.default_rng(2026)
    return {
        "loss": [1.0 / (s + 1) for s in range(STEPS)],
        "acc": [0.5 + 0.125 * s for s in range(STEPS)],
        "hist": [rng.normal(s, 1.0, 200) for s in range(STEPS)],
        "img": [rng.integers(0, 256, (4, 5, 3), dtype=np.uint8) for _ in range(STEPS)],
        "aud": [
            np.sin(np.arange(64) * (s + 1) / 5.0).astype(np.float32) * 0.5 for s in range(STEPS)
        ],
        "text": [f"step **{s}** ünïcode" for s in range(STEPS)],
        "labels": rng.integers(0, 2, 40).astype(bool),
        "preds": rng.random(40).astype(np.float32),
        "hparams": {"lr": 0.25, "opt": "adam", "wide": True},
        "metric": 0.75,
    }


def _observed(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "scalars": {
            "loss": [[s, float(np.float32(v))] for s, v in enumerate(d["loss"])] + [[1, 9.0]],
            "acc": [[s, float(np.float32(v))] for s, v in enumerate(d["acc"])],
        },
        "hist": [
            {"n": int(h.size), "min": float(h.min()), "max": float(h.max())} for h in d["hist"]
        ],
        "img": [im.tolist() for im in d["img"]],
        "aud": [a.tolist() for a in d["aud"]],
        "rate": RATE,
        "text": d["text"],
        "labels": d["labels"].tolist(),
        "preds": d["preds"].tolist(),
        "hparams": d["hparams"],
        "metric": d["metric"],
    }


def tf2(logdir: str, d: dict[str, Any]) -> dict[str, Any]:
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp
    from tensorboard.plugins.pr_curve import summary as pr_summary

    with tf.summary.create_file_writer(logdir).as_default():
        for s in range(STEPS):
            tf.summary.scalar("loss", d["loss"][s], step=s)
            tf.summary.scalar("acc", d["acc"][s], step=s)
            tf.summary.histogram("hist", d["hist"][s], step=s, buckets=10)
            tf.summary.image("img", d["img"][s][None], step=s)
            tf.summary.audio("aud", d["aud"][s][None, :, None], RATE, step=s)
            tf.summary.text("text", d["text"][s], step=s)
            pb = pr_summary.pb("pr", d["labels"], d["preds"], num_thresholds=11)
            tf.summary.experimental.write_raw_pb(pb.SerializeToString(), step=s)
        tf.summary.scalar("loss", 9.0, step=1)
    with tf.summary.create_file_writer(os.path.join(logdir, "hp")).as_default():
        hp.hparams_config(
            hparams=[hp.HParam(k) for k in d["hparams"]], metrics=[hp.Metric("metric")]
        )
        hp.hparams(d["hparams"], trial_id="t1")
        tf.summary.scalar("metric", d["metric"], step=1)
    return {"tensorflow": tf.__version__}


def tf1(logdir: str, d: dict[str, Any]) -> dict[str, Any]:
    import tensorflow as tf

    v1 = tf.compat.v1
    with tf.Graph().as_default():
        loss, acc = v1.placeholder(tf.float32, []), v1.placeholder(tf.float32, [])
        hist = v1.placeholder(tf.float64, [200])
        img = v1.placeholder(tf.uint8, [1, 4, 5, 3])
        aud = v1.placeholder(tf.float32, [1, 64, 1])
        text = v1.placeholder(tf.string, [])
        v1.summary.scalar("loss", loss)
        v1.summary.scalar("acc", acc)
        v1.summary.histogram("hist", hist)
        v1.summary.image("img", img, max_outputs=1)
        v1.summary.audio("aud", aud, RATE, max_outputs=1)
        v1.summary.text("text", text)
        merged = v1.summary.merge_all()
        again = v1.summary.scalar("loss_again", loss)
        with v1.Session() as sess:
            writer = v1.summary.FileWriter(logdir)
            for s in range(STEPS):
                feed = {
                    loss: d["loss"][s],
                    acc: d["acc"][s],
                    hist: d["hist"][s],
                    img: d["img"][s][None],
                    aud: d["aud"][s][None, :, None],
                    text: d["text"][s],
                }
                writer.add_summary(sess.run(merged, feed), s)
            dup = v1.Summary.FromString(sess.run(again, {loss: 9.0}))
            dup.value[0].tag = "loss"  # a repeated tag: FileWriter strips its metadata
            writer.add_summary(dup, 1)
            writer.close()
    return {"tensorflow": tf.__version__}


def _torch_like(writer: Any, d: dict[str, Any], run_arg: str) -> None:
    for s in range(STEPS):
        writer.add_scalar("loss", d["loss"][s], s)
        writer.add_scalar("acc", d["acc"][s], s)
        writer.add_histogram("hist", d["hist"][s], s)
        writer.add_image("img", d["img"][s], s, dataformats="HWC")
        writer.add_audio("aud", d["aud"][s], s, sample_rate=RATE)
        writer.add_text("text", d["text"][s], s)
        writer.add_pr_curve("pr", d["labels"], d["preds"], s, num_thresholds=11)
    writer.add_scalar("loss", 9.0, 1)
    writer.add_hparams(d["hparams"], {"metric": d["metric"]}, **{run_arg: "hp"})
    writer.close()


def tensorboardx(logdir: str, d: dict[str, Any]) -> dict[str, Any]:
    import tensorboardX

    writer = tensorboardX.SummaryWriter(logdir)
    _torch_like(writer, d, "name")
    return {"tensorboardX": tensorboardX.__version__}


def torch(logdir: str, d: dict[str, Any]) -> dict[str, Any]:
    import torch as th
    from torch.utils.tensorboard import SummaryWriter

    _torch_like(SummaryWriter(logdir), d, "run_name")
    return {"torch": th.__version__}


def main() -> None:
    writers = {"tf2": tf2, "tf1": tf1, "tensorboardx": tensorboardx, "torch": torch}
    for name in sys.argv[1:] or writers:
        logdir = os.path.join(HERE, name)
        shutil.rmtree(logdir, ignore_errors=True)
        d = data()
        versions = writers[name](logdir, d)
        with open(os.path.join(HERE, f"{name}.json"), "w") as f:
            json.dump({"versions": versions, **_observed(d)}, f, indent=1, sort_keys=True)
            f.write("\n")
        print(
            name,
            sorted(
                os.path.relpath(os.path.join(r, x), logdir)
                for r, _, fs in os.walk(logdir)
                for x in fs
            ),
        )


if __name__ == "__main__":
    main()
