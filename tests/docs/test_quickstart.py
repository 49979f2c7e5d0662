"""examples/quickstart.py runs and its output is readable by TensorBoard."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from conftest import read_run, read_scalars
from paths import ROOT

EXAMPLE = ROOT / "examples" / "quickstart.py"


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("quickstart", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_logs_every_kind(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    result = _load_example().train(str(tmp_path), steps=40, log_every=10)
    assert result["loss"] < 0.5
    scalars = read_scalars(tmp_path / "quickstart")
    assert [p.step for p in scalars["loss"]] == list(range(40))
    assert scalars["loss"][-1].value == pytest.approx(result["loss"], rel=1e-6)
    acc = read_run(tmp_path / "quickstart")
    tags = set(acc.Tags()["tensors"])
    expected = {
        "layer1/weights",
        "layer1/activations",
        "layer1/bias",
        "layer2/weights/mean",
        "layer2/weights/histogram",
        "fit",
        "layer1/weights_grid",
    }
    assert expected <= tags
    assert [e.step for e in acc.Tensors("fit")] == [0, 10, 20, 30, 39]
    assert set(read_scalars(tmp_path / "quickstart" / "grad_norm_w1")) == {"grad_norm"}
    tf2 = read_run(tmp_path / "quickstart_tf2")
    assert {"loss", "predictions", "fit"} <= set(tf2.Tags()["tensors"])
