"""Why the integrations exist: without TensorFlow, the originals cannot even be imported (Flax's
writer, CLU's metric_writers) or used (optuna-integration's callback), while npsummary's
stand-ins import and write without ever importing TensorFlow. Runs where the frameworks are
installed and TensorFlow is not (.ci/stages/70-integrations.sh)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.tf_free

if importlib.util.find_spec("tensorflow") is not None:
    pytest.skip("TensorFlow is installed here", allow_module_level=True)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_tensorflow_is_absent() -> None:
    with pytest.raises(ImportError):
        import tensorflow  # noqa: F401


@pytest.mark.parametrize(
    ("framework", "original"),
    [
        ("flax", "import flax.metrics.tensorboard"),
        ("clu", "from clu import metric_writers"),
        (
            "optuna_integration",
            "from optuna_integration import TensorBoardCallback; TensorBoardCallback('d', 'm')",
        ),
    ],
)
def test_the_original_needs_tensorflow(framework: str, original: str) -> None:
    pytest.importorskip(framework, reason="runs in .ci/stages/70-integrations.sh")
    done = _run(original)
    assert done.returncode != 0
    assert "tensorflow" in done.stderr.lower()


STAND_INS = """
import sys
from pathlib import Path
import numpy as np
from npsummary.integrations import clu, flax
from npsummary import hparams as hp

out = Path(sys.argv[1])
w = flax.SummaryWriter(out / "flax"); w.scalar("x", 1.0, 0); w.hparams({"a": 1}); w.close()
c = clu.SummaryWriter(out / "clu"); c.write_scalars(0, {"y": 2.0}); c.close()
if "{optional}":
    import optuna
    from npsummary.integrations import optuna as opt
    from npsummary.integrations import keras as k
assert "tensorflow" not in sys.modules, "tensorflow was imported"
print("ok")
"""


def test_stand_ins_never_import_tensorflow(tmp_path: Path) -> None:
    optional = all(importlib.util.find_spec(m) for m in ("optuna", "keras", "jax"))
    code = STAND_INS.replace("{optional}", "yes" if optional else "")
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KERAS_BACKEND": "jax"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"
