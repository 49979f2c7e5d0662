"""``npsummary.integrations.keras``: Keras 3's own ``TensorBoard`` callback writing through
npsummary, on the JAX and torch backends, against the golden files Keras 3.15's callback wrote
through TensorFlow 2.21 (``golden_tf/gen_golden.py``, JAX backend). The model trains in
float32 (see ``programs.py``); npsummary writes the values the framework hands it unchanged,
but the framework's own arithmetic is not fixed across versions: the stage installs the
newest JAX, whose XLA rounds one evaluation loss a float32 ulp away from the golden run (jax
0.10.2, keras 3.15.1), so floats on the JAX backend are compared within ``JAX_RTOL`` (a few
float32 ulps). On the torch backend Keras's arithmetic rounds more results differently
(float32 ulps in an evaluation loss and in weights after a few steps), so floats there are
compared within ``TORCH_RTOL``, and the model summary without the compile config (see
``_model_config``). The steps-per-second values are timings and are not compared.
Needs Keras and a backend (runs in .ci/stages/70-integrations.sh)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from integrations._golden import assert_same_logdir, golden, observations, other_files

pytestmark = pytest.mark.tf_free


# Keras is imported in child processes only (its backend is fixed at import).
if importlib.util.find_spec("keras") is None:
    pytest.skip("Keras runs in .ci/stages/70-integrations.sh", allow_module_level=True)

CHILD = Path(__file__).parent / "_keras_child.py"
BACKENDS = ("jax", "torch")
TIMING = ("batch_steps_per_second", "epoch_steps_per_second")
JAX_RTOL = 1e-6
TORCH_RTOL = 1e-5


def _tolerance(result: Any) -> dict[str, Any]:
    if result["backend"] == "jax":
        return {"rtol": JAX_RTOL}
    return {"rtol": TORCH_RTOL, "normalize": {"keras": _model_config}}


@pytest.fixture(scope="module", params=BACKENDS)
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    backend = request.param
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"the {backend} backend is not installed")
    out = tmp_path_factory.mktemp(f"keras_{backend}")
    env = dict(os.environ, KERAS_BACKEND=backend, JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [sys.executable, str(CHILD), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["backend"] == backend
    return out, result


def test_tensorflow_never_imported(runs: Any) -> None:
    _, result = runs
    assert result["tensorflow_imported"] is False


def test_update_freq_batch_same_files_as_keras_on_tensorflow(runs: Any) -> None:
    out, result = runs
    assert_same_logdir(
        out / "keras_update_batch", golden("keras_update_batch"), **_tolerance(result)
    )


def test_hparams_keras_callback(runs: Any) -> None:
    """``hp.KerasCallback`` is the Keras callback, checks its arguments as TensorBoard's does,
    and serves one fit only."""
    _, result = runs
    assert result["hp_keras_callback"] is True
    assert result["keras_callback_errors"] == [
        "TypeError",
        "TypeError",
        "RuntimeError: hparams Keras callback cannot be reused across training sessions",
    ]


def _model_config(data: Any) -> Any:
    """The model summary's JSON without ``compile_config``, where Keras itself records the
    backend (the torch backend's own SGD class, ``jit_compile`` false)."""
    config = json.loads(data.item())
    config.pop("compile_config", None)
    return config


def test_epoch_level_same_files_as_keras_on_tensorflow(runs: Any) -> None:
    """train/validation runs, epoch_* (with the learning rate), evaluation_*_vs_iterations
    from fit's validation and from evaluate, histograms and images of every weight, the model
    summary, and the HParams Keras callback's session start and end. The golden files come
    from the JAX backend; on another backend the model summary is compared without the
    compile config, which Keras writes differently per backend."""
    out, result = runs
    assert_same_logdir(out / "keras_epoch", golden("keras_epoch"), **_tolerance(result))


def test_batch_level_same_files_as_keras_on_tensorflow(runs: Any) -> None:
    out, result = runs
    assert_same_logdir(
        out / "keras_batch", golden("keras_batch"), timing_tags=TIMING, **_tolerance(result)
    )


def test_embeddings_same_files_as_keras_on_tensorflow(runs: Any) -> None:
    out, result = runs
    assert result["keras_embeddings"] == observations("keras_embeddings")
    assert_same_logdir(out / "keras_embeddings", golden("keras_embeddings"), **_tolerance(result))
    ours = other_files(out / "keras_embeddings")
    theirs = other_files(golden("keras_embeddings"))
    assert ours["projector_config.pbtxt"] == theirs["projector_config.pbtxt"]
