"""skorch: its ``TensorBoard`` callback logs every value of ``net.history``'s last row with
``add_scalar`` and skips, with ``suppress(NotImplementedError)``, the values torch's writer
cannot convert (a list, tuple or dict). npsummary's writer raises an error that is both its
documented ``TypeError``/``ValueError`` and that ``NotImplementedError`` (issue 21, item 1), so
training finishes and both logdirs read back the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from integrations._harness import REASON, assert_same_training

skorch = pytest.importorskip("skorch", reason=REASON)
torch = pytest.importorskip("torch", reason=REASON)

import npsummary  # noqa: E402
from tb_compare import accumulators  # noqa: E402

TIMING = ("dur",)


def _train(writer: Any) -> None:
    from skorch.callbacks import Callback, TensorBoard

    class RecordOddValues(Callback):  # type: ignore[misc]
        """Values a user records in the history that are no scalar."""

        def on_epoch_end(self, net: Any, **kwargs: Any) -> None:
            epoch = net.history[-1, "epoch"]
            net.history.record("layer_norms", [0.5 * epoch, 0.25])
            net.history.record("pair", (1.0, 2.0))
            net.history.record("per_class", {"a": 1.0})
            net.history.record("lr_seen", 0.01 * epoch)

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    net = skorch.NeuralNetClassifier(
        torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(dim=-1)),
        max_epochs=3,
        lr=0.1,
        batch_size=16,
        train_split=skorch.dataset.ValidSplit(4),
        callbacks=[RecordOddValues(), TensorBoard(writer)],
        verbose=0,
    )
    net.fit(x, y)


def test_history_with_a_list_trains_and_matches_torch(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    ours, theirs = tmp_path / "ours", tmp_path / "torch"
    _train(npsummary.SummaryWriter(str(ours)))
    _train(TorchWriter(str(theirs)))
    assert_same_training(ours, theirs, timing_tags=TIMING)
    (run,) = accumulators(ours).values()
    tags = run.Tags()["scalars"]
    assert "Loss/train_loss" in tags and "lr_seen" in tags
    assert not {"layer_norms", "pair", "per_class"} & set(tags)
    assert [event.step for event in run.Scalars("lr_seen")] == [1, 2, 3]
