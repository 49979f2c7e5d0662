"""``npsummary.integrations.flax.SummaryWriter`` against ``flax.metrics.tensorboard``'s
(golden files written by Flax 0.12 through TensorFlow 2.21, ``golden_tf/gen_golden.py``).
Needs neither Flax nor TensorFlow; JAX arrays are tried where JAX is installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from integrations._golden import assert_same_logdir, golden, read_runs
from integrations.golden_tf import programs
from npsummary.integrations.flax import SummaryWriter

pytestmark = pytest.mark.tf_free


def test_same_files_as_flax(tmp_path: Path) -> None:
    programs.flax_writer(SummaryWriter, str(tmp_path / "logs"))
    assert_same_logdir(tmp_path / "logs", golden("flax"))


def test_auto_flush_false_still_writes_on_close(tmp_path: Path) -> None:
    writer = SummaryWriter(tmp_path, auto_flush=False)
    for step in range(5):
        writer.scalar("x", step, step)
    writer.close()
    writer.close()  # final, and idempotent as in Flax
    (groups,) = read_runs(tmp_path).values()
    assert sorted(groups) == [("x", step) for step in range(5)]


def test_text_must_be_str_or_bytes(tmp_path: Path) -> None:
    writer = SummaryWriter(tmp_path)
    with pytest.raises(ValueError, match="str"):
        writer.text("t", 3, 0)  # type: ignore[arg-type]
    writer.text("t", "ok", 0)
    writer.close()


def test_jax_arrays(tmp_path: Path) -> None:
    jnp = pytest.importorskip("jax.numpy", reason="JAX runs in .ci/stages/70-integrations.sh")
    writer = SummaryWriter(tmp_path)
    writer.scalar("loss", jnp.float32(0.5), jnp.int32(3))
    writer.histogram("w", jnp.arange(10.0), 3)
    writer.image("img", jnp.ones((4, 4)), 3)
    writer.close()
    (groups,) = read_runs(tmp_path).values()
    assert sorted(groups) == [("img", 3), ("loss", 3), ("w", 3)]
    from tensorboard.util import tensor_util

    (value,) = groups[("loss", 3)]
    assert tensor_util.make_ndarray(value.tensor) == np.float32(0.5)
