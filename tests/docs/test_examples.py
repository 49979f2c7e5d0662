"""The seed programs ported to NumPy (examples/seed_*.py) run at a small size, and what they
wrote is read back with TensorBoard's own EventAccumulator, as the dashboards would see it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from conftest import read_run
from paths import ROOT

EXAMPLES = ROOT / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def by_plugin(acc: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for tag in acc.Tags()["tensors"]:
        out.setdefault(acc.SummaryMetadata(tag).plugin_data.plugin_name, set()).add(tag)
    return out


def array(event: Any) -> np.ndarray:
    from tensorboard.util import tensor_util

    return np.asarray(tensor_util.make_ndarray(event.tensor_proto))


def decoded_image(event: Any, index: int = 0) -> np.ndarray:
    import io

    from PIL import Image

    blobs = array(event)
    with Image.open(io.BytesIO(blobs[2 + index])) as image:
        return np.asarray(image)


def test_seed_policy_histograms(tmp_path: Path) -> None:
    result = load("seed_policy_histograms").main(str(tmp_path), steps=21, batch=16)
    assert np.isfinite(result["loss"])
    acc = read_run(tmp_path)
    tags = by_plugin(acc)
    layers = {
        f"layer{i}/{kind}"
        for i in (1, 2, 3)
        for kind in ("weights", "bias", "layer", "activations")
    }
    assert layers | {"layer4/weights", "layer4/Qpred"} <= tags["histograms"]
    assert {"Q", "Y", "log_likelihood", "loss", "reward"} <= tags["scalars"]
    assert tags["images"] == {"input"}
    assert [e.step for e in acc.Tensors("layer1/weights")] == [0, 10, 20]
    weights = array(acc.Tensors("layer1/weights")[0])
    assert weights.shape == (30, 3) and weights[:, 2].sum() == 60 * 32  # every weight counted
    activations = array(acc.Tensors("layer2/activations")[-1])
    assert activations[0, 0] >= -1 and activations[-1, 1] <= 1  # tanh range
    assert decoded_image(acc.Tensors("input")[0]).shape == (6, 10)
    assert len(array(acc.Tensors("input")[0])) == 2 + 4  # max_outputs=4


def test_seed_init_histograms(tmp_path: Path) -> None:
    result = load("seed_init_histograms").main(str(tmp_path), epochs=3, n_train=200)
    assert 0 <= result["val_accuracy"] <= 1
    train = read_run(tmp_path / "train")
    tags = by_plugin(train)
    prefix = "dnn/hidden1_attn/Attention_variables"
    assert {
        f"{prefix}/W_omega/histogram",
        f"{prefix}/b_omega/histogram",
        "dnn/outputs/b/histogram",
    } <= tags["histograms"]
    assert {f"{prefix}/b_omega/mean", "dnn/outputs/W/max", "eval/accuracy"} <= tags["scalars"]
    assert [e.step for e in train.Tensors("dnn/outputs/b/histogram")] == [0, 2]
    # TensorBoard's migration of the legacy histograms: [k, 3] rows, counts sum to the size.
    b_omega = array(train.Tensors(f"{prefix}/b_omega/histogram")[0])
    b_out = array(train.Tensors("dnn/outputs/b/histogram")[0])
    assert b_omega[:, 2].sum() == 200 and b_out[:, 2].sum() == 10
    assert b_omega[0, 0] >= -0.2 and b_omega[-1, 1] <= 0.2  # init range, plus one epoch
    sizes = read_run(tmp_path / "sample_size")
    counts = [array(e)[:, 2].sum() for e in sizes.Tensors("uniform_init")]
    assert counts == [10, 100, 1000, 100000]


def test_seed_conv_visualization(tmp_path: Path) -> None:
    module = load("seed_conv_visualization")
    result = module.main(str(tmp_path), steps=5, batch=8, log_every=2)
    assert 0 <= result["test_accuracy"] <= 1
    train, test = read_run(tmp_path / "train"), read_run(tmp_path / "test")
    train_tags, test_tags = by_plugin(train), by_plugin(test)
    assert {"loss", "accuracy/accuracy"} <= train_tags["scalars"]
    assert [e.step for e in train.Tensors("loss")] == [0, 2, 4]
    assert [e.step for e in test.Tensors("loss")] == [0, 4]
    assert any(tag.startswith("conv1/weights") for tag in train_tags["histograms"])
    assert any(tag.startswith("fc2/bias") for tag in train_tags["scalars"])
    assert "images" not in train_tags
    assert test_tags["images"] == {
        "input_image/input",
        "conv1/filters",
        "conv2/filters",
        "h_conv1/feature_maps",
        "h_conv2/feature_maps",
    }
    assert [e.step for e in test.Tensors("conv1/filters")] == [0, 4]
    # 8 input images tiled 8 per row; 8 conv1 filters of 5x5 in a grid with 1-pixel padding.
    assert decoded_image(test.Tensors("input_image/input")[0]).shape == (
        28,
        8 * 28,
        3,
    )  # gray as RGB, as tensorboardX
    filters = decoded_image(test.Tensors("conv1/filters")[0])
    assert filters.ndim == 2 and filters.shape[0] >= 2 * 5 and filters.shape[1] >= 3 * 5
    maps = decoded_image(test.Tensors("h_conv2/feature_maps")[-1])
    assert maps.ndim == 2 and maps.shape[0] >= 14 and len(np.unique(maps)) > 2
