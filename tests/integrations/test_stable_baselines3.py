"""stable-baselines3: its TensorBoard output format logs scalars, ``Video``, ``Figure``,
``Image`` and ``HParam`` (the latter through ``writer.file_writer.add_summary``).

The same short PPO training runs with torch's writer and with npsummary's, injected where SB3
binds the class (``stable_baselines3.common.logger.SummaryWriter``) or, in the last test, by
``npsummary.patch()`` with SB3 unmodified; both logdirs must read back the same, except SB3's
``time/*`` measurements.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from integrations._harness import REASON, assert_same_training

sb3 = pytest.importorskip("stable_baselines3", reason=REASON)
pytest.importorskip("torch", reason=REASON)

import npsummary  # noqa: E402
from tb_compare import accumulators  # noqa: E402

TIMING = ("time/",)


def _callback(video: bool) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Figure, HParam, Image, Video

    class Extras(BaseCallback):  # type: ignore[misc]
        def _on_training_start(self) -> None:
            hparams = {"algorithm": "PPO", "gamma": self.model.gamma, "n_steps": 32}
            metrics = {"rollout/ep_len_mean": 0.0, "train/value_loss": 0.0}
            self.logger.record("hparams", HParam(hparams, metrics), exclude=("stdout",))

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            k = self.num_timesteps
            ramp = np.linspace(0, 1, 48).reshape(4, 4, 3)
            self.logger.record("extra/image", Image(ramp * (k % 7) / 7, "HWC"), exclude="stdout")
            figure = plt.figure(figsize=(2, 2), dpi=40)
            figure.add_subplot().plot([0, 1, 2], [0, k % 5, 1])
            self.logger.record("extra/figure", Figure(figure, close=True), exclude="stdout")
            if video:
                frames = np.zeros((1, 3, 3, 8, 8), np.uint8)
                frames[0, 1, :, :, : k % 8] = 200
                self.logger.record("extra/video", Video(frames, fps=2), exclude="stdout")
            self.logger.record("extra/text", f"timesteps {k}", exclude="stdout")

    return Extras()


def _learn(logdir: Path, *, video: bool = False) -> Path:
    """A short PPO run logging every kind SB3 has. Video only on request: torch's writer needs
    moviepy for it (absent here, so it logs nothing and the runs could not be compared)."""
    from stable_baselines3 import PPO

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PPO(
            "MlpPolicy",
            "CartPole-v1",
            n_steps=32,
            batch_size=16,
            n_epochs=2,
            policy_kwargs={"net_arch": [8]},
            tensorboard_log=str(logdir),
            seed=0,
            device="cpu",
        )
        model.learn(total_timesteps=96, callback=_callback(video), tb_log_name="ppo")
    (run,) = logdir.iterdir()
    return run


def test_ppo_with_npsummary_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stable_baselines3.common import logger

    theirs = _learn(tmp_path / "torch")
    monkeypatch.setattr(logger, "SummaryWriter", npsummary.SummaryWriter)
    ours = _learn(tmp_path / "npsummary")
    assert_same_training(ours, theirs, timing_tags=TIMING)
    acc = accumulators(ours)["."]
    tags = acc.Tags()
    assert {"train/value_loss", "rollout/ep_len_mean", "time/fps"} <= set(tags["scalars"])
    assert {"extra/image", "extra/figure"} <= set(tags["images"])
    assert acc.PluginTagToContent("hparams"), "HParam wrote no hparams summaries"
    assert "extra/text/text_summary" in tags["tensors"]


def test_video_is_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stable_baselines3.common import logger

    monkeypatch.setattr(logger, "SummaryWriter", npsummary.SummaryWriter)
    ours = _learn(tmp_path / "npsummary", video=True)
    assert "extra/video" in accumulators(ours)["."].Tags()["images"]


def test_patch_makes_sb3_use_npsummary_unmodified(tmp_path: Path) -> None:
    theirs = _learn(tmp_path / "torch")
    assert "stable_baselines3.common.logger.SummaryWriter" in npsummary.patch()
    ours = _learn(tmp_path / "patched")
    npsummary.unpatch()
    from stable_baselines3.common import logger

    assert logger.SummaryWriter is not npsummary.SummaryWriter
    assert_same_training(ours, theirs, timing_tags=TIMING)
