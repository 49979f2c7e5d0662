"""accelerate: ``Accelerator(log_with="tensorboard")``, its documented use with
``init_trackers(project, config=...)`` and ``accelerator.log``.

accelerate builds its own writer from ``torch.utils.tensorboard``; ``npsummary.patch()`` is the
one-line switch. The same logging runs with torch's writer and with npsummary's; both logdirs
must read back the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from integrations._harness import REASON, assert_same_training

accelerate = pytest.importorskip("accelerate", reason=REASON)
torch = pytest.importorskip("torch", reason=REASON)

import npsummary  # noqa: E402
from tb_compare import accumulators  # noqa: E402

CONFIG = {"lr": 0.01, "epochs": 2, "optimizer": "sgd", "nesterov": False}


def _run(project_dir: Path, config: dict[str, object] | None) -> Path:
    accelerator = accelerate.Accelerator(log_with="tensorboard", project_dir=str(project_dir))
    accelerator.init_trackers("tiny", config=config)
    tracker = accelerator.get_tracker("tensorboard", unwrap=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = accelerator.prepare(model, optimizer)
    x, y = torch.randn(8, 2), torch.randn(8, 1)
    for step in range(4):
        loss = torch.nn.functional.mse_loss(model(x), y)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        accelerator.log(
            {"loss": loss.item(), "phase": f"step {step}", "pair": {"a": step, "b": -step}},
            step=step,
        )
    accelerator.end_training()
    assert isinstance(tracker, npsummary.SummaryWriter) == _patched()
    return project_dir / "tiny"


def _patched() -> bool:
    from torch.utils import tensorboard

    return tensorboard.SummaryWriter is npsummary.SummaryWriter


def _both(tmp_path: Path, config: dict[str, object] | None) -> Path:
    """Run with torch's writer, then with npsummary's through patch(); compare; return ours."""
    theirs = _run(tmp_path / "torch", config)
    npsummary.patch()
    try:
        ours = _run(tmp_path / "npsummary", config)
    finally:
        npsummary.unpatch()
    assert_same_training(ours, theirs)
    return ours


def test_log_with_tensorboard_through_patch(tmp_path: Path) -> None:
    ours = _both(tmp_path, None)
    tags = accumulators(ours)["."].Tags()
    assert "loss" in tags["scalars"] and "phase/text_summary" in tags["tensors"]


def _has_hparams(accumulator: Any) -> bool:
    try:
        return bool(accumulator.PluginTagToContent("hparams"))
    except KeyError:  # a run without any hparams summary
        return False


def test_init_trackers_with_config(tmp_path: Path) -> None:
    ours = _both(tmp_path, CONFIG)
    assert any(_has_hparams(acc) for acc in accumulators(ours).values())
