"""Regenerate the integrations' golden logdirs with the originals on TensorFlow (run by hand;
the output is committed):

    python3 -m venv .venv-tf
    .venv-tf/bin/pip install tensorflow==2.21.0 keras flax clu optuna optuna-integration
    .venv-tf/bin/pip install --no-deps -e .
    .venv-tf/bin/python tests/integrations/golden_tf/gen_golden.py [case ...]

(no case: all of them).
Each program of ``programs.py`` runs once with the original library into a fresh directory,
which is copied to ``golden/<case>/`` with every event file renamed
``events.out.tfevents.golden-<k>.v2`` (k numbers the files of a run in name order, which is
creation order; Keras's ``.h5`` checkpoints are left out); the program's return value and the
library versions go to ``golden/<case>.json``. The Keras cases run in a child process
with ``KERAS_BACKEND=jax``: Keras's own callback writes through ``tensorflow.summary``
whatever the backend, and the JAX backend is the one the tests run on. (npsummary is
installed only for ``npsummary.proto``, which builds one metadata proto in the CLU program;
TensorFlow's writer does the writing.)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
sys.path.insert(0, HERE)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

if TYPE_CHECKING:
    from integrations.golden_tf import programs
else:
    import programs


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in (
        "tensorflow",
        "tensorboard",
        "keras",
        "jax",
        "flax",
        "clu",
        "optuna",
        "optuna-integration",
        "numpy",
        "protobuf",
    ):
        with contextlib.suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


def _store(case: str, run: Callable[[str], Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        logdir = os.path.join(tmp, "logs")
        observations = run(logdir)
        target = os.path.join(GOLDEN, case)
        shutil.rmtree(target, ignore_errors=True)
        for root, _, names in os.walk(logdir):
            relative = os.path.relpath(root, logdir)
            os.makedirs(os.path.join(target, relative), exist_ok=True)
            events = sorted(name for name in names if "tfevents" in name)
            for name in names:
                if name.endswith(".h5"):
                    continue  # Keras's own checkpoints: the program returns their names
                new = name
                if name in events:
                    new = f"events.out.tfevents.golden-{events.index(name)}.v2"
                shutil.copyfile(os.path.join(root, name), os.path.join(target, relative, new))
    with open(os.path.join(GOLDEN, case + ".json"), "w") as f:
        json.dump(
            {"versions": _versions(), "observations": observations},
            f,
            indent=1,
            sort_keys=True,
            default=str,
        )
        f.write("\n")
    print(f"{case}: written")


KERAS_CASES = ("keras_epoch", "keras_batch", "keras_update_batch", "keras_embeddings")


def keras_cases(cases: list[str]) -> None:
    import keras
    from tensorboard.plugins.hparams import api as hp

    assert keras.backend.backend() == "jax", keras.backend.backend()
    tb = keras.callbacks.TensorBoard
    run = {
        "keras_epoch": lambda d: programs.keras_epoch(keras, tb, hp.KerasCallback, d),
        "keras_batch": lambda d: programs.keras_batch(keras, tb, d),
        "keras_update_batch": lambda d: programs.keras_update_batch(keras, tb, d),
        "keras_embeddings": lambda d: programs.keras_embeddings(keras, tb, d),
    }
    for case in cases:
        _store(case, run[case])


def pointcloud(logdir: str) -> None:
    """CLU's ``write_pointcloud`` (CLU main, not yet on PyPI): mesh summaries v2 per key."""
    import tensorflow as tf
    from tensorboard.plugins.mesh import summary_v2 as mesh_summary

    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step, clouds, colors, configs in programs.clu_pointcloud_calls():
            for key, vertices in clouds.items():
                mesh_summary.mesh(
                    key,
                    vertices=vertices,
                    colors=colors.get(key),
                    step=step,
                    config_dict=configs.get(key),
                )
    writer.close()


def main() -> None:
    if sys.argv[1:2] == ["--keras"]:
        keras_cases(sys.argv[2:])
        return
    import optuna
    import tensorflow as tf
    from clu import metric_writers
    from flax.metrics import tensorboard as flax_tensorboard
    from optuna_integration import TensorBoardCallback
    from tensorboard.plugins.hparams import api as hp

    run = {
        "hparams_api": lambda d: programs.hparams_api(hp, tf.summary, d),
        "flax": lambda d: programs.flax_writer(flax_tensorboard.SummaryWriter, d),
        "clu_summary_writer": lambda d: programs.clu_summary_writer(metric_writers, d),
        "clu_default_writer": lambda d: programs.clu_default_writer(metric_writers, d),
        "clu_pointcloud": pointcloud,
        "optuna": lambda d: programs.optuna_study(optuna, TensorBoardCallback, d),
    }
    cases = sys.argv[1:] or [*run, *KERAS_CASES]
    unknown = set(cases) - set(run) - set(KERAS_CASES)
    if unknown:
        raise SystemExit(f"unknown cases: {sorted(unknown)}")
    for case in cases:
        if case in run:
            _store(case, run[case])
    keras_wanted = [case for case in cases if case in KERAS_CASES]
    if keras_wanted:
        env = dict(os.environ, KERAS_BACKEND="jax")
        command = [sys.executable, os.path.abspath(__file__), "--keras", *keras_wanted]
        subprocess.run(command, check=True, env=env)


if __name__ == "__main__":
    main()
