"""A program written against the TF2 ``tf.summary`` API, in sections.

Each section is ``section(summary, name_scope, logdir) -> observations``: ``summary`` is
``tf.summary`` or ``npsummary``, ``name_scope`` is ``tf.name_scope`` or ``npsummary.name_scope``.
A section writes one run into ``logdir`` and returns what the API calls returned (as plain
Python values), so return values are compared too. ``gen_golden.py`` runs every section once with
real TensorFlow; ``tests/conformance/test_conformance.py`` runs them with npsummary and compares.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.data import pseudo, pseudo32

Section = Callable[[Any, Any, str], dict[str, Any]]


def _b(x: Any) -> bool:
    return bool(np.asarray(x))


def scalars(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        out.append(_b(summary.scalar("loss", 0.5)))
        out.append(_b(summary.scalar("int_scalar", 7, step=1)))
        out.append(_b(summary.scalar("np_scalar", np.float64(0.1), step=2)))
        out.append(_b(summary.scalar("described", 1.25, step=3, description="**md** text")))
        for step in range(4, 7):
            out.append(_b(summary.scalar("loss", 1.0 / step, step=step)))
        summary.experimental.set_step(9)
        out.append(_b(summary.scalar("default_step", -2.5)))
        summary.experimental.set_step(None)
    out.append(_b(summary.scalar("no_writer", 1.0, step=0)))
    writer.close()
    return {"returns": out}


def histograms(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(3):
            data = pseudo32((200,), step, -1.0 - step, 1.0 + step)
            out.append(_b(summary.histogram("weights", data, step=step)))
        out.append(_b(summary.histogram("float64", pseudo((50,), 7) * 1e3, step=0)))
        out.append(_b(summary.histogram("b5", np.arange(10), step=0, buckets=5)))
        out.append(_b(summary.histogram("b1", np.arange(10), step=0, buckets=1)))
        out.append(_b(summary.histogram("const", np.full((4,), 5.0), step=0)))
        out.append(_b(summary.histogram("empty", np.zeros((0,), np.float32), step=0)))
        out.append(_b(summary.histogram("described", [1.0, 2.0], step=0, description="d")))
    writer.close()
    return {"returns": out}


def images(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    floats = pseudo32((3, 4, 5, 3), 11, -0.2, 1.2)
    floats[0, 0, 0, 0] = np.nan
    floats[0, 0, 1, :] = [0.0, 0.001, 0.5]
    floats[0, 0, 2, :] = [0.998, 0.999, 1.0]
    gray = (pseudo((2, 6, 7, 1), 12, 0, 256)).astype(np.uint8)
    rgba = pseudo32((1, 3, 2, 4), 13, 0, 1)
    with writer.as_default(step=1):
        out.append(_b(summary.image("float_rgb", floats, max_outputs=2)))
        out.append(_b(summary.image("uint8_gray", gray)))
        out.append(_b(summary.image("rgba", rgba, description="four channels")))
        out.append(_b(summary.image("all", floats, step=2, max_outputs=5)))
    writer.close()
    return {"returns": out}


def text(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        out.append(_b(summary.text("txt", "hello **md**")))
        out.append(_b(summary.text("table", [["a", "b"], ["c", "dé"]], step=1)))
        out.append(_b(summary.text("vector", np.array(["x", "y", "z"]), step=2)))
        out.append(_b(summary.text("described", b"bytes", step=3, description="desc")))
    writer.close()
    return {"returns": out}


def audio(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    stereo = pseudo32((4, 50, 2), 21, -1.2, 1.2)
    mono = pseudo32((1, 30, 1), 22)
    with writer.as_default(step=0):
        out.append(_b(summary.audio("stereo", stereo, 8000, max_outputs=2)))
        out.append(_b(summary.audio("mono", mono, 16000, step=1, description="one clip")))
        out.append(_b(summary.audio("explicit_wav", mono, 44100, step=2, encoding="wav")))
    writer.close()
    return {"returns": out}


def write(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    from tensorboard.compat.proto import summary_pb2

    out = []
    md = summary_pb2.SummaryMetadata()
    md.plugin_data.plugin_name = "custom_plugin"
    md.plugin_data.content = b"\x08\x01"
    md.summary_description = "custom"
    calls = []

    def make() -> np.ndarray:
        calls.append(1)
        return np.arange(3, dtype=np.int64)

    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        out.append(_b(summary.write("t_f32", pseudo32((2, 3), 31), metadata=md)))
        out.append(
            _b(summary.write("t_bytes_md", np.eye(2), step=1, metadata=md.SerializeToString()))
        )
        out.append(_b(summary.write("t_callable", make, step=2, metadata=md)))
        out.append(_b(summary.write("t_strings", np.array([b"a", b"bc"]), step=3, metadata=md)))
        out.append(_b(summary.write("t_python_float", 2.5, step=4, metadata=md)))
        out.append(_b(summary.write("t_python_int", 3, step=5, metadata=md)))
        out.append(_b(summary.write("t_no_metadata", np.float32(1.0), step=6)))
        with name_scope("scope"):
            out.append(_b(summary.write("t_scoped", np.float32(2.0), step=7, metadata=md)))
        with summary.record_if(False):
            out.append(_b(summary.write("t_not_called", make, step=8, metadata=md)))
    writer.close()
    return {"returns": out, "calls": len(calls)}


def write_raw_pb(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    from tensorboard.compat.proto import summary_pb2

    one = summary_pb2.Summary()
    one.value.add(tag="raw_a", simple_value=1.5)
    two = summary_pb2.Summary()
    two.value.add(tag="raw_b", simple_value=-2.0)
    value = two.value.add(tag="raw_c")
    value.metadata.plugin_data.plugin_name = "text"
    value.tensor.dtype = 7
    value.tensor.string_val.append(b"raw text")
    out = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=4):
        out.append(_b(summary.experimental.write_raw_pb(one.SerializeToString())))
        out.append(
            _b(
                summary.experimental.write_raw_pb(
                    [one.SerializeToString(), two.SerializeToString()], step=5
                )
            )
        )
    writer.close()
    return {"returns": out}


def name_scopes(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    scopes = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        with name_scope("scope1"):
            out.append(_b(summary.scalar("s", 1.0)))
            with name_scope("scope2"):
                out.append(_b(summary.scalar("inner", 2.0)))
                out.append(_b(summary.text("note", "nested text")))
                out.append(_b(summary.audio("snd", pseudo32((1, 10, 1), 41), 8000)))
            with summary.experimental.summary_scope("my summ!") as (tag, scope):
                scopes.append([tag, scope])
                out.append(_b(summary.scalar("in_summary_scope", 3.0)))
            with summary.experimental.summary_scope(None, "fallback") as (tag, scope):
                scopes.append([tag, scope])
        out.append(_b(summary.scalar("top", 4.0)))
    writer.close()
    return {"returns": out, "summary_scopes": scopes}


def name_scoped_histogram_image(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0), name_scope("layer1"):
        out.append(_b(summary.histogram("weights", pseudo32((20,), 51))))
        out.append(_b(summary.image("input", pseudo32((1, 3, 3, 1), 52, 0, 1))))
    writer.close()
    return {"returns": out}


def record_if(summary: Any, name_scope: Any, logdir: str) -> dict[str, Any]:
    out = []
    should = [_b(summary.should_record_summaries())]
    writer = summary.create_file_writer(logdir)
    with writer.as_default(step=0):
        should.append(_b(summary.should_record_summaries()))
        with summary.record_if(False):
            should.append(_b(summary.should_record_summaries()))
            out.append(_b(summary.scalar("off", 1.0)))
        for step in range(6):
            with summary.record_if(lambda step=step: step % 2 == 0):
                out.append(_b(summary.scalar("every_other", float(step), step=step)))
        with summary.record_if(True):
            out.append(_b(summary.scalar("on", 1.0, step=7)))
        should.append(_b(summary.should_record_summaries()))
    noop = summary.create_noop_writer()
    with noop.as_default(step=3):
        out.append(_b(summary.scalar("noop", 1.0)))
    writer.close()
    return {"returns": out, "should_record": should}


SECTIONS: dict[str, Section] = {
    "scalars": scalars,
    "histograms": histograms,
    "images": images,
    "text": text,
    "audio": audio,
    "write": write,
    "write_raw_pb": write_raw_pb,
    "name_scopes": name_scopes,
    "name_scoped_histogram_image": name_scoped_histogram_image,
    "record_if": record_if,
}
