"""transformers: ``TensorBoardCallback(tb_writer=...)`` with a tiny BERT built from a config in
code (no hub access, ``HF_HUB_OFFLINE=1``) on synthetic tokens.

The same four training steps run with torch's writer and with npsummary's; both logdirs must
read back the same, except the run-time measurements (``train_runtime``, ``*_per_second``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from integrations._harness import REASON, assert_same_training

transformers = pytest.importorskip("transformers", reason=REASON)
torch: Any = pytest.importorskip("torch", reason=REASON)

import npsummary  # noqa: E402
from tb_compare import accumulators  # noqa: E402

TIMING = ("runtime", "per_second")


class _Tokens(torch.utils.data.Dataset):  # type: ignore[misc]
    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(0)
        self.ids = torch.randint(3, 50, (16, 6), generator=generator)
        self.labels = (self.ids.sum(dim=1) % 2).long()

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {
            "input_ids": self.ids[i],
            "attention_mask": torch.ones(6, dtype=torch.long),
            "labels": self.labels[i],
        }


def _train(output_dir: Path, writer: Any) -> None:
    from transformers.integrations import TensorBoardCallback

    config = transformers.BertConfig(
        vocab_size=50,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=16,
        num_labels=2,
    )
    transformers.set_seed(0)
    model = transformers.BertForSequenceClassification(config)
    args = transformers.TrainingArguments(
        output_dir=str(output_dir),
        max_steps=4,
        per_device_train_batch_size=4,
        logging_steps=1,
        learning_rate=1e-2,
        report_to=[],
        use_cpu=True,
        seed=0,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(
        model=model,
        args=args,
        train_dataset=_Tokens(),
        callbacks=[TensorBoardCallback(tb_writer=writer)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.train()


def test_tensorboard_callback_with_npsummary_writer(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter

    theirs, ours = tmp_path / "torch", tmp_path / "npsummary"
    # One output_dir for both runs, so the logged TrainingArguments JSON is the same text.
    _train(tmp_path / "out", SummaryWriter(log_dir=str(theirs)))
    _train(tmp_path / "out", npsummary.SummaryWriter(ours))
    assert_same_training(ours, theirs, timing_tags=TIMING)
    tags = accumulators(ours)["."].Tags()
    assert {"train/loss", "train/learning_rate", "train/grad_norm"} <= set(tags["scalars"])
    assert {"args/text_summary", "model_config/text_summary"} <= set(tags["tensors"])
