"""npsummary's Keras ``TensorBoard`` and ``hp.KerasCallback`` as a hostile user drives them
(issue 29, items 1 and 2), in one child process (``_keras_adversarial_child.py``; Keras fixes
its backend at import): with ``embeddings_freq=1`` on every URL scheme (path, ``file://``,
``memory://``, ``s3://``, ``gs://``) every file lands in the logdir's own filesystem and none
under the working directory (``projector_config.pbtxt`` went to ``./memory:/…`` and the weights
file raised Keras's "requires TensorFlow" error before); under every rank source both callbacks
write as on rank 0, as Keras and TensorBoard do through TensorFlow; a callback fitted twice
writes both fits. Needs Keras and a backend (runs in .ci/stages/70-integrations.sh)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tf_free

if importlib.util.find_spec("keras") is None or importlib.util.find_spec("fsspec") is None:
    pytest.skip("Keras runs in .ci/stages/70-integrations.sh", allow_module_level=True)

CHILD = Path(__file__).parent / "_keras_adversarial_child.py"
SCHEMES = ("path", "file", "memory", "s3", "gs")
RANK_SOURCES = (
    "RANK",
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "JAX_PROCESS_INDEX",
    "LOCAL_RANK",
    "RANK=not-a-rank",
    "torch.distributed",
    "jax",
)
FILES = ["projector_config.pbtxt", "train/keras_embedding.ckpt-0.weights.h5"]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Any:
    backend = os.environ.get("KERAS_BACKEND", "jax")
    if importlib.util.find_spec(backend) is None:
        pytest.skip(f"the {backend} backend is not installed")
    base = tmp_path_factory.mktemp("keras_adversarial")
    env = dict(os.environ, KERAS_BACKEND=backend, JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    for name in RANK_SOURCES:
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, str(CHILD), str(base)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_child_ran_without_tensorflow(result: Any) -> None:
    assert result["tensorflow_imported"] is False
    assert sorted(result["schemes"]) == sorted(SCHEMES)
    assert sorted(result["ranks"]) == sorted(RANK_SOURCES)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_embeddings_files_land_in_the_logdir_on_every_scheme(result: Any, scheme: str) -> None:
    case = result["schemes"][scheme]
    assert case["stray"] == [], "files created under the working directory"
    assert case["files"] == FILES
    assert "layer_with_weights-0/embeddings" in case["config"]
    assert case["config"] == result["schemes"]["path"]["config"]
    assert case["weights_load"] is True, "the weights file does not load back"
    assert case["runs"] == result["schemes"]["path"]["runs"]
    assert case["runs"]["train"] > 0
    assert case["runs"]["hp"] == 2  # hp.KerasCallback: session start and end


@pytest.mark.parametrize("source", RANK_SOURCES)
def test_both_callbacks_write_whatever_rank_the_environment_names(result: Any, source: str) -> None:
    assert result["ranks"][source] == result["schemes"]["path"]["runs"]


def test_a_callback_fitted_twice_writes_both_fits(result: Any) -> None:
    first, second = result["refit"]
    assert first["train"] > 0
    assert second["train"] == 2 * first["train"]
