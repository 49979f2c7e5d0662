"""PyTorch Lightning: ``TensorBoardLogger`` with default settings plus ``log_graph=True``.

The same tiny training runs twice, once with torch's writer (Lightning's default) and once with
npsummary's, injected at the logger's ``_experiment`` (or, in the last test, by
``npsummary.patch()`` with Lightning unmodified); both logdirs must read back the same.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from integrations._harness import REASON, assert_same_training

pl: Any = pytest.importorskip("lightning.pytorch", reason=REASON)
torch = pytest.importorskip("torch", reason=REASON)

import npsummary  # noqa: E402
from tb_compare import accumulators  # noqa: E402


class TinyModel(pl.LightningModule):  # type: ignore[misc]
    def __init__(self, lr: float = 0.05, hidden: int = 4) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(3, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1)
        )
        self.example_input_array = torch.zeros(2, 3)

    def forward(self, x: Any) -> Any:
        return self.net(x)

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        self.log_dict({"scaled": loss * 10, "bias0": self.net[0].bias[0]})
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def _loader() -> Any:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 3, generator=generator)
    y = x.sum(dim=1, keepdim=True) * 0.5
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)


def _train(save_dir: Path, inject: bool) -> Path:
    from lightning.pytorch.loggers import TensorBoardLogger

    pl.seed_everything(0, verbose=False)
    logger = TensorBoardLogger(save_dir, name="tiny", version=0, log_graph=True)
    if inject:
        logger._experiment = npsummary.SummaryWriter(log_dir=logger.log_dir)
    trainer = pl.Trainer(
        max_epochs=2,
        logger=logger,
        accelerator="cpu",
        log_every_n_steps=1,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's advice about workers and batch sizes
        trainer.fit(TinyModel(), _loader(), _loader())
    if inject:
        assert isinstance(logger.experiment, npsummary.SummaryWriter)
    return Path(logger.log_dir)


def test_tensorboard_logger_with_npsummary_writer(tmp_path: Path) -> None:
    theirs = _train(tmp_path / "torch", inject=False)
    ours = _train(tmp_path / "npsummary", inject=True)
    assert_same_training(ours, theirs)
    acc = accumulators(ours)["."]
    tags = acc.Tags()
    assert tags["graph"], "log_graph=True wrote no graph"
    assert {"train_loss", "val_loss", "hp_metric", "epoch"} <= set(tags["scalars"])
    assert acc.PluginTagToContent("hparams"), "log_hyperparams wrote no hparams summaries"


def test_patch_makes_lightning_use_npsummary_unmodified(tmp_path: Path) -> None:
    theirs = _train(tmp_path / "torch", inject=False)
    assert npsummary.patch()
    ours = _train(tmp_path / "patched", inject=False)
    from lightning.pytorch.loggers import TensorBoardLogger

    logger = TensorBoardLogger(tmp_path / "probe")
    assert isinstance(logger.experiment, npsummary.SummaryWriter)
    logger.experiment.close()
    npsummary.unpatch()
    from torch.utils.tensorboard import SummaryWriter

    assert SummaryWriter is not npsummary.SummaryWriter
    assert_same_training(ours, theirs)
