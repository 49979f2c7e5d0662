"""Creating a writer starts no framework the program had not started (issue 29): an imported but
idle JAX keeps its backends unstarted (asking ``jax.process_index()`` starts them, which claims a
GPU's memory and makes a later ``jax.distributed.initialize()`` fail), and torch is neither
imported nor has its distributed package loaded. Each check runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.tf_free

_WRITERS = """
import tempfile
import npsummary
from npsummary import v1
logdir = tempfile.mkdtemp()
with npsummary.SummaryWriter(logdir) as w:
    w.add_scalar("loss", 0.5, 1)
    w.add_histogram("w", [1.0, 2.0], 1)
npsummary.TensorboardXSummaryWriter(logdir).close()
with npsummary.create_file_writer(logdir).as_default(step=0):
    npsummary.scalar("loss", 0.5)
v1.FileWriter(logdir).close()
npsummary.GlobalSummaryWriter(logdir).close()
"""


def _python(code: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_writers_leave_an_idle_jax_idle() -> None:
    pytest.importorskip("jax")
    _python(
        "import jax\nfrom jax._src import xla_bridge\n"
        + _WRITERS
        + "assert not xla_bridge.backends_are_initialized(), 'JAX backends started'\n"
        + "jax.distributed.initialize  # still callable: nothing ran on a backend\n"
    )


def test_writers_import_no_torch() -> None:
    _python(_WRITERS + "import sys\nassert 'torch' not in sys.modules, 'torch imported'\n")
