"""``npsummary.integrations.clu`` against CLU's ``metric_writers`` (golden files written by CLU
0.0.12 through TensorFlow 2.21; ``write_pointcloud`` by the mesh summary CLU's main branch
calls), and a tiny JAX training loop written with CLU's own ``create_default_writer`` and
``periodic_actions`` with TensorFlow absent. ``SummaryWriter`` needs no CLU; the rest skips
without it (CLU and JAX run in .ci/stages/70-integrations.sh)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from integrations._golden import assert_same_logdir, golden, read_runs
from integrations.golden_tf import programs
from npsummary.integrations import clu as metric_writers

pytestmark = pytest.mark.tf_free

REASON = "CLU runs in .ci/stages/70-integrations.sh"


def test_summary_writer_same_files_as_clu(tmp_path: Path) -> None:
    programs.clu_summary_writer(metric_writers, str(tmp_path / "logs"))
    assert_same_logdir(tmp_path / "logs", golden("clu_summary_writer"))


def test_write_pointcloud_same_files_as_mesh_summary(tmp_path: Path) -> None:
    writer = metric_writers.SummaryWriter(tmp_path / "logs")
    for step, clouds, colors, configs in programs.clu_pointcloud_calls():
        writer.write_pointcloud(step, clouds, point_colors=colors, configs=configs)
    writer.close()
    assert_same_logdir(tmp_path / "logs", golden("clu_pointcloud"))


def test_write_pointcloud_rejects_bad_shapes(tmp_path: Path) -> None:
    writer = metric_writers.SummaryWriter(tmp_path)
    with pytest.raises(ValueError, match="'pc': vertex must have shape"):
        writer.write_pointcloud(0, {"pc": np.zeros((5, 3))})
    writer.write_pointcloud(0, {"pc": np.zeros((1, 5, 3))})  # the writer stays usable
    writer.close()
    (groups,) = read_runs(tmp_path).values()
    assert list(groups) == [("pc_VERTEX", 0)]


def test_flatten_dict_as_clu() -> None:
    flat = metric_writers.flatten_dict({"a": [1, {"b": None}], "c": {"d": "e"}, "f": 2.0})
    assert flat == [("a.0", 1), ("a.1.b", ""), ("c.d", "e"), ("f", 2.0)]


def test_default_writer_same_files_as_clu(tmp_path: Path) -> None:
    pytest.importorskip("clu", reason=REASON)
    programs.clu_default_writer(metric_writers, str(tmp_path / "logs"))
    assert_same_logdir(tmp_path / "logs", golden("clu_default_writer"))


def test_is_a_clu_metric_writer() -> None:
    pytest.importorskip("clu", reason=REASON)
    from clu.metric_writers import interface

    assert issubclass(metric_writers.SummaryWriter, interface.MetricWriter)
    assert metric_writers.MetricWriter is interface.MetricWriter
    # Every abstract method of CLU's interface is implemented.
    assert not getattr(metric_writers.SummaryWriter, "__abstractmethods__", frozenset())
    for name in ("MultiWriter", "AsyncMultiWriter", "LoggingWriter", "ensure_flushes"):
        assert getattr(metric_writers, name).__module__.startswith("clu.")


TRAINING_LOOP = """
import sys
from npsummary.integrations import clu as metric_writers  # the one changed line
from clu import periodic_actions
import jax, jax.numpy as jnp

logdir = sys.argv[1]
writer = metric_writers.create_default_writer(logdir)
writer.write_hparams({"lr": 0.5, "model": {"width": 1}})
report = periodic_actions.ReportProgress(num_train_steps=4, writer=writer, every_steps=2)
x = jnp.linspace(-1.0, 1.0, 8)
y = 3.0 * x + 0.5
params = {"w": jnp.zeros(()), "b": jnp.zeros(())}

def loss_fn(p):
    return jnp.mean((p["w"] * x + p["b"] - y) ** 2)

for step in range(1, 5):
    loss, grads = jax.value_and_grad(loss_fn)(params)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads)
    writer.write_scalars(step, {"loss": loss})
    writer.write_histograms(step, {"w": params["w"].reshape(1)})
    report(step)
writer.flush()
writer.close()
assert "tensorflow" not in sys.modules
from clu import metric_writers as real

assert real.SummaryWriter is metric_writers.SummaryWriter, real.SummaryWriter
print("ok")
"""


def test_jax_training_loop_with_clu_without_tensorflow(tmp_path: Path) -> None:
    pytest.importorskip("clu", reason=REASON)
    pytest.importorskip("jax", reason=REASON)
    if _has_tensorflow():
        pytest.skip("TensorFlow is installed: this test shows CLU working without it")
    done = subprocess.run(
        [sys.executable, "-c", TRAINING_LOOP, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("ok")
    from tb_compare import accumulators

    (acc,) = accumulators(tmp_path).values()
    tags = acc.Tags()
    assert "loss" in tags["tensors"] and "w" in tags["tensors"]
    losses = [(e.step, float(np.asarray(_array(e.tensor_proto)))) for e in acc.Tensors("loss")]
    assert [s for s, _ in losses] == [1, 2, 3, 4]
    assert losses[0][1] == pytest.approx(float(np.mean((3 * np.linspace(-1, 1, 8) + 0.5) ** 2)))
    assert losses[-1][1] < losses[0][1]
    assert any(t.startswith("steps_per_sec") for t in tags["tensors"])  # ReportProgress
    assert "_hparams_/session_start_info" in acc.PluginTagToContent("hparams")


def _array(tensor: object) -> np.ndarray:
    from tensorboard.util import tensor_util

    return np.asarray(tensor_util.make_ndarray(tensor))


def _has_tensorflow() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def test_without_clu_only_summary_writer_works() -> None:
    if _installed("clu"):
        pytest.skip("CLU is installed here")
    assert metric_writers.SummaryWriter.__mro__[1] is object
    with pytest.raises(ImportError, match="pip install clu"):
        metric_writers.create_default_writer("unused")
    with pytest.raises(ImportError, match="MultiWriter is CLU's"):
        _ = metric_writers.MultiWriter


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
