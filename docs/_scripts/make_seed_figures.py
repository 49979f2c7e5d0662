"""Make the images of the user guide's worked examples (docs/guide/seeds.md).

Runs the three seed examples (examples/seed_*.py) into a temporary logdir, reads what they wrote
back with npsummary.reader, and saves small PNGs into docs/_static/seeds/: histograms drawn with
matplotlib as TensorBoard's Histograms tab draws them (one outline per logged step), and the
conv example's filter and feature-map images exactly as logged (the PNG bytes of the event
file). The PNGs are committed, so that building the site needs neither matplotlib nor the
minute the conv example takes; run this script again after changing an example:

    pip install -e '.[test]'    # matplotlib
    python docs/_scripts/make_seed_figures.py
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from npsummary import reader

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "_static" / "seeds"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _rebin(buckets: np.ndarray, bins: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Spread each bucket's count over 30 equal-width bins of its range, as TensorBoard's
    Histograms tab does before drawing; returns (edges, counts)."""
    left, right, count = buckets[:, 0], buckets[:, 1], buckets[:, 2]
    edges = np.linspace(left.min(), right.max(), bins + 1)
    out = np.zeros(bins)
    for lo, hi, c in zip(left, right, count, strict=True):
        if hi <= lo:
            out[min(np.searchsorted(edges, lo, side="right") - 1, bins - 1)] += c
            continue
        overlap = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
        out += c * overlap / (hi - lo)
    return edges, out


def _outline(ax: Any, buckets: np.ndarray, **style: Any) -> None:
    edges, counts = _rebin(buckets)
    ax.stairs(counts, edges, **style)


def _ridges(path: Path, series: dict[str, Any], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(series), figsize=(3.2 * len(series), 2.6), squeeze=False)
    for ax, (label, hist) in zip(axes[0], series.items(), strict=True):
        colors = plt.cm.viridis(np.linspace(0, 0.9, len(hist.steps)))
        for step, buckets, color in zip(hist.steps, hist.buckets, colors, strict=True):
            _outline(ax, buckets, color=color, lw=1, label=f"step {step}")
        ax.set_title(label, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.locator_params(axis="x", nbins=5)
        ax.set_yticks([])
    if len(next(iter(series.values())).steps) > 1:
        axes[0][-1].legend(fontsize=6, loc="upper right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def policy_figure(logdir: Path) -> None:
    _example("seed_policy_histograms").main(str(logdir / "policy"), steps=301)
    hist = reader.histograms(logdir / "policy")
    keep = {}
    for tag in ("layer1/weights", "layer1/activations", "layer3/weights"):
        series = hist[(".", tag)]
        pick = np.unique(np.linspace(0, len(series.steps) - 1, 4).astype(int))
        keep[tag] = type(series)(
            steps=series.steps[pick],
            wall_times=series.wall_times[pick],
            buckets=[series.buckets[i] for i in pick],
        )
    _ridges(OUT / "policy_histograms.png", keep, "seed 000: weights and activations over 300 steps")


def init_figure(logdir: Path) -> None:
    _example("seed_init_histograms").main(str(logdir / "init"), epochs=2, n_train=400)
    series = reader.histograms(logdir / "init" / "sample_size")[(".", "uniform_init")]
    sizes = (10, 100, 1000, 100000)
    split = {
        f"{size} values": type(series)(
            steps=series.steps[i : i + 1],
            wall_times=series.wall_times[i : i + 1],
            buckets=[series.buckets[i]],
        )
        for i, size in enumerate(sizes)
    }
    _ridges(OUT / "init_sample_size.png", split, "seed 001: one uniform(-0.1, 0.1), four sizes")


def conv_figures(logdir: Path) -> None:
    _example("seed_conv_visualization").main(str(logdir / "conv"), steps=60, log_every=20)
    images = reader.images(logdir / "conv" / "test")
    for tag, name in (
        ("input_image/input", "conv_input.png"),
        ("conv1/filters", "conv1_filters.png"),
        ("h_conv1/feature_maps", "conv1_feature_maps.png"),
        ("h_conv2/feature_maps", "conv2_feature_maps.png"),
    ):
        last = images[(".", tag)].images[-1][0]  # the last step's PNG, as logged
        (OUT / name).write_bytes(last)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        policy_figure(Path(tmp))
        init_figure(Path(tmp))
        conv_figures(Path(tmp))
    for path in sorted(OUT.iterdir()):
        print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
