"""A program written in TF1 style (``tf.compat.v1.summary`` + ``FileWriter``), in sections.

TF1 code builds summary ops once from placeholders and evaluates them every step. A section is
``section(summary, name_scope, logdir, compile)``:

* ``build(x)`` creates the summaries from ``x`` (a dict of placeholders under TensorFlow, of
  NumPy arrays under npsummary) and returns the merged summaries to write;
* ``compile(build, example)`` returns ``step_fn(arrays) -> outputs``: under TensorFlow it builds
  the graph once and runs a session; under npsummary it is ``build`` itself (which is how TF1
  code is ported: the graph-building function becomes a per-step function).

``summary`` is ``tf.compat.v1.summary`` or ``npsummary.v1``; ``name_scope`` is
``tf.compat.v1.name_scope`` or ``npsummary.name_scope``. ``gen_golden.py`` runs each section in
a fresh ``tf.Graph`` (``FileWriter`` refuses eager mode).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.data import pseudo, pseudo32

Compile = Callable[[Callable[[dict[str, Any]], Any], dict[str, np.ndarray]], Callable[..., Any]]


def _basic_inputs(step: int) -> dict[str, np.ndarray]:
    return {
        "loss": np.float32(1.0 / (step + 1)),
        "acc": np.float32(step / 10.0),
        "audio": pseudo32((3, 40, 2), 100 + step, -1.2, 1.2),
        "mono": pseudo32((2, 25), 200 + step),
        "text": np.array([f"step {step}", "**bold**"], dtype=object),
    }


def basic(summary: Any, name_scope: Any, logdir: str, compile: Compile) -> dict[str, Any]:
    """scalar (tags: scopes, uniquified, cleaned, family), audio, text, tensor_summary, merge,
    merge_all, FileWriter.add_summary / add_session_log / flush / close."""

    def build(x: dict[str, Any]) -> Any:
        with name_scope("train"):
            summary.scalar("loss", x["loss"])
            summary.scalar("accuracy", x["acc"], family="metrics")
        summary.scalar("loss", x["loss"])
        again = summary.scalar("loss", x["acc"])
        summary.scalar("bad name!", x["acc"])
        summary.audio("clips", x["audio"], 8000, max_outputs=2)
        summary.audio("mono", x["mono"], 16000.0, max_outputs=1)
        summary.text("notes", x["text"])
        summary.tensor_summary("tensor", x["audio"][0, :3], summary_description="raw")
        summary.tensor_summary("bare_tensor", x["loss"])
        extra = summary.scalar("extra", x["acc"], collections=[])
        return summary.merge_all(), summary.merge([again, extra])

    step_fn = compile(build, _basic_inputs(0))
    writer = summary.FileWriter(logdir)
    for step in range(3):
        merged, subset = step_fn(_basic_inputs(step))
        writer.add_summary(merged, global_step=step)
        if step == 1:
            writer.add_summary(subset, global_step=10)
    writer.add_session_log(summary.SessionLog(status=summary.SessionLog.STOP), 11)
    writer.flush()
    writer.close()
    return {"logdir_ok": writer.get_logdir() == logdir}


def _hist_image_inputs(step: int) -> dict[str, np.ndarray]:
    floats = pseudo32((3, 4, 5, 3), 300 + step, -0.5, 2.0)
    floats[0, 0, 0, 0] = np.nan
    floats[1, 1, 1, 1] = np.inf
    return {
        "weights": pseudo32((500,), 400 + step, -1.0 - step, 1.0),
        "spread": (pseudo((60,), 500 + step, -100, 100) ** 3).astype(np.float64),
        "special": np.array([0, 0.5, 1, 1, -2, 100, 1e-13, -0.0], np.float32),
        "empty": np.zeros((0,), np.float32),
        "const": np.array([5.0, 5.0], np.float32),
        "ints": np.arange(-5, 17, dtype=np.int32),
        "img_float": floats,
        "img_pos": pseudo32((2, 3, 4, 1), 600 + step, 0, 0.5),
        "img_neg": pseudo32((1, 6, 3, 4), 700 + step, -3, 1),
        "img_u8": pseudo((2, 5, 6, 3), 800 + step, 0, 256).astype(np.uint8),
        "img_zero": np.zeros((1, 2, 2, 1), np.float32),
    }


def histograms_images(
    summary: Any, name_scope: Any, logdir: str, compile: Compile
) -> dict[str, Any]:
    """histogram (legacy HistogramProto) and image (TF1 normalisation, tags) with merge_all."""

    def build(x: dict[str, Any]) -> Any:
        with name_scope("layer1"):
            summary.histogram("weights", x["weights"])
            summary.histogram("spread", x["spread"])
        summary.histogram("special", x["special"], family="fam")
        summary.histogram("empty", x["empty"])
        summary.histogram("const", x["const"])
        summary.histogram("ints", x["ints"])
        summary.image("float", x["img_float"], max_outputs=2)
        summary.image("positive", x["img_pos"])
        summary.image("negative", x["img_neg"], max_outputs=1)
        summary.image("uint8", x["img_u8"], max_outputs=5)
        summary.image("zero", x["img_zero"])
        return summary.merge_all()

    step_fn = compile(build, _hist_image_inputs(0))
    with summary.FileWriter(logdir) as writer:
        for step in range(2):
            writer.add_summary(step_fn(_hist_image_inputs(step)), step)
    return {}


SECTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "basic": basic,
    "histograms_images": histograms_images,
}
