"""Each flavour writes its library's files where tensorboardX and torch differ (issue 21, item 4):
``npsummary.TensorboardXSummaryWriter`` as tensorboardX 2.6.5 (nested ``add_scalars`` sub-runs,
cleaned tags, boolean hparams), ``npsummary.SummaryWriter`` as torch 2.13. Calls:
``flavour_program``; golden files: ``gen_flavour_golden.py``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import npsummary
from conformance import flavour_program
from paths import TESTS

GOLDEN = TESTS / "conformance" / "golden" / "flavours"
WRITERS = {"tensorboardX": "TensorboardXSummaryWriter", "torch": "SummaryWriter"}


def _golden(library: str) -> dict[str, list[list[Any]]]:
    with open(GOLDEN / f"{library}.json") as f:
        data: dict[str, list[list[Any]]] = json.load(f)["runs"]
    return data


@pytest.mark.parametrize("library", sorted(WRITERS))
def test_flavour_writes_its_librarys_runs_and_tags(library: str, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    writer_class = getattr(npsummary, WRITERS[library])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with writer_class(str(tmp_path)) as writer:
            assert writer.flavour == library
            flavour_program.run(writer)
    assert flavour_program.read_logdir(str(tmp_path)) == _golden(library)


def test_the_libraries_do_differ() -> None:
    # Otherwise a flavour would have nothing to choose.
    tbx, torch = _golden("tensorboardX"), _golden("torch")
    assert sorted(tbx) != sorted(torch)
    assert tbx["."] != torch["."]
    assert tbx["session"] != torch["session"]


def test_patch_installs_each_flavour() -> None:
    tensorboardX = pytest.importorskip("tensorboardX")
    npsummary.unpatch()
    try:
        npsummary.patch()
        assert tensorboardX.SummaryWriter is npsummary.TensorboardXSummaryWriter
    finally:
        npsummary.unpatch()
    assert tensorboardX.SummaryWriter.__module__.startswith("tensorboardX")
    try:
        import torch.utils.tensorboard as torch_tb
    except Exception:  # torch not installed here (stage 40 has it)
        return
    npsummary.patch()
    try:
        assert torch_tb.SummaryWriter is npsummary.SummaryWriter
    finally:
        npsummary.unpatch()
