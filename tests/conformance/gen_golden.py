"""Regenerate the golden event files with real TensorFlow (run once; the output is committed).

    /work/tfvenv/bin/python tests/conformance/gen_golden.py

Runs every section of ``tf2_program.py`` with ``tf.summary`` (eager) and of ``tf1_program.py``
with ``tf.compat.v1.summary`` in graph mode (a fresh ``tf.Graph`` and ``Session`` per section;
TF1's ``FileWriter`` raises under eager execution). Each section's run goes to
``golden/<tf2|tf1>/<section>/`` as one event file with a fixed name, and the section's return
value to ``golden/<tf2|tf1>/<section>.json``. The test suite never imports TensorFlow.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
GOLDEN_NAME = "events.out.tfevents.golden"

sys.path.insert(0, os.path.dirname(HERE))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from conformance import tf1_program, tf2_program  # noqa: E402


def _store(kind: str, section: str, tmp: str, observations: dict[str, Any]) -> None:
    files = sorted(name for name in os.listdir(tmp) if "tfevents" in name)
    if len(files) != 1:
        raise RuntimeError(f"{kind}/{section}: expected one event file, got {files}")
    target = os.path.join(GOLDEN, kind, section)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    shutil.copyfile(os.path.join(tmp, files[0]), os.path.join(target, GOLDEN_NAME))
    with open(os.path.join(GOLDEN, kind, section + ".json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, **observations}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{kind}/{section}: {files[0]} -> {target}")


def _tf1_compile(build: Any, example: dict[str, np.ndarray]) -> Any:
    placeholders = {}
    for key, value in example.items():
        dtype = tf.string if value.dtype == object else tf.as_dtype(value.dtype)
        placeholders[key] = tf.compat.v1.placeholder(dtype, value.shape, name="ph_" + key)
    outputs = build(placeholders)
    session = tf.compat.v1.Session()

    def step_fn(arrays: dict[str, np.ndarray]) -> Any:
        return session.run(outputs, feed_dict={placeholders[k]: v for k, v in arrays.items()})

    return step_fn


def main() -> None:
    for section, fn in tf2_program.SECTIONS.items():
        with tempfile.TemporaryDirectory() as tmp:
            observations = fn(tf.summary, tf.name_scope, tmp)
            _store("tf2", section, tmp, observations)
    for section, fn in tf1_program.SECTIONS.items():
        with tempfile.TemporaryDirectory() as tmp, tf.Graph().as_default():
            observations = fn(tf.compat.v1.summary, tf.compat.v1.name_scope, tmp, _tf1_compile)
            _store("tf1", section, tmp, observations)


if __name__ == "__main__":
    main()
