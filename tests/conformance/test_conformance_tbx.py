"""Conformance with tensorboardX 2.6: ``conformance/tbx_program.py`` run with npsummary must read
back, through TensorBoard's ``EventAccumulator`` and through tbparse, as the committed run that
tensorboardX wrote from the same program (``conformance/gen_tbx_golden.py``).

Method and allowed differences: see ``tb_compare``. The program runs with the tensorboardX flavour
(``npsummary.TensorboardXSummaryWriter``), so the runs have tensorboardX's names (``add_scalars``
nests ``<main_tag>/<key>``); ``npsummary.SummaryWriter`` writes the same values under torch's
names (``<main_tag>_<key>``), checked too.
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
    with npsummary.TensorboardXSummaryWriter(logdir) as writer:
        tbx_program.run(writer)
    return logdir


@pytest.fixture(scope="module")
def ours_torch_flavour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    logdir = tmp_path_factory.mktemp("npsummary_torch")
    with npsummary.SummaryWriter(logdir) as writer:
        tbx_program.run(writer)
    return logdir


def test_same_runs_tags_steps_and_values(ours: Path) -> None:
    with warnings.catch_warnings():
        # EventAccumulator prints/warns about scalars whose metadata names no plugin, which is
        # what tensorboardX writes for display_name; the same happens for both sides.
        warnings.simplefilter("ignore")
        assert_same_logdir(ours, GOLDEN)


def test_torch_flavour_has_the_same_values_under_torchs_run_names(
    ours_torch_flavour: Path,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # torch makes audio samples trunc(x * 32767), tensorboardX's soundfile about
        # floor(x * 32768): negative samples differ by up to two steps.
        assert_same_logdir(ours_torch_flavour, GOLDEN, run_name=_torch_run_name, audio_steps=2)


def test_every_category_is_exercised() -> None:
    tags = accumulators(GOLDEN)["."].Tags()
    for category in ("scalars", "images", "audio", "histograms", "tensors"):
        assert tags[category], category


def test_tbparse_scalars_frames_equal(ours: Path) -> None:
    mine = tbparse_scalars(ours)
    theirs = tbparse_scalars(GOLDEN)
    mine = mine.sort_values(["dir_name", "tag", "step"]).reset_index(drop=True)
    theirs = theirs.sort_values(["dir_name", "tag", "step"]).reset_index(drop=True)
    assert len(mine) == 5 * 3 + 5 * 2 + 3
    assert mine.equals(theirs), (mine, theirs)
