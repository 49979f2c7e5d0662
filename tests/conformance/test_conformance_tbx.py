"""Conformance with tensorboardX 2.6: ``conformance/tbx_program.py`` run with npsummary must read
back, through TensorBoard's ``EventAccumulator`` and through tbparse, as the committed run that
tensorboardX wrote from the same program (``conformance/gen_tbx_golden.py``).

Method and allowed differences: see ``tb_compare``. One naming difference is stated in
docs/MIGRATION.md: ``add_scalars`` sub-runs are named as torch names them
(``<main_tag>_<key>``), where tensorboardX nests them (``<main_tag>/<key>``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import npsummary
from conformance import tbx_program
from paths import TESTS
from tb_compare import accumulators, assert_same_logdir, tbparse_scalars

pytestmark = pytest.mark.torch

GOLDEN = TESTS / "conformance" / "golden" / "tbx"


def _torch_run_name(run: str) -> str:
    return run if run == "." else run.replace("/", "_", 1)


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logdir = tmp_path_factory.mktemp("npsummary")
    with npsummary.SummaryWriter(logdir) as writer:
        tbx_program.run(writer)
    return logdir


def test_same_runs_tags_steps_and_values(ours: Path) -> None:
    with warnings.catch_warnings():
        # EventAccumulator prints/warns about scalars whose metadata names no plugin, which is
        # what tensorboardX writes for display_name; the same happens for both sides.
        warnings.simplefilter("ignore")
        assert_same_logdir(ours, GOLDEN, run_name=_torch_run_name)


def test_every_category_is_exercised() -> None:
    tags = accumulators(GOLDEN)["."].Tags()
    for category in ("scalars", "images", "audio", "histograms", "tensors"):
        assert tags[category], category


def test_tbparse_scalars_frames_equal(ours: Path) -> None:
    mine = tbparse_scalars(ours)
    theirs = tbparse_scalars(GOLDEN)
    theirs["dir_name"] = theirs["dir_name"].map(lambda d: d.replace("/", "_", 1))
    mine = mine.sort_values(["dir_name", "tag", "step"]).reset_index(drop=True)
    theirs = theirs.sort_values(["dir_name", "tag", "step"]).reset_index(drop=True)
    assert len(mine) == 5 * 3 + 5 * 2 + 3
    assert mine.equals(theirs), (mine, theirs)
