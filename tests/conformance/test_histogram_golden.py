"""``SummaryWriter.add_histogram`` writes the buckets tensorboardX 2.6.5 and torch 2.13 write, for
every ``bins`` form and with ``max_bins`` (issue 21, item 2): the same ``bucket_limit`` and
``bucket`` lists, empty interior buckets included (TF1's C++ op, which ``npsummary.v1.histogram``
follows, drops them), the same min, max and num, and sums within float64 rounding (the order of
additions differs). Golden files: ``gen_histogram_golden.py``; calls: ``histogram_program``.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import pytest

import npsummary
from conformance import histogram_program
from paths import TESTS

GOLDEN = TESTS / "conformance" / "golden" / "histograms"
LIBRARIES = ("tensorboardX", "torch")


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    pytest.importorskip("tensorboard")
    logdir = tmp_path_factory.mktemp("histograms")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "stone" note, as theirs
        with npsummary.SummaryWriter(str(logdir)) as writer:
            histogram_program.run(writer)
    return histogram_program.read_histograms(str(logdir))


def _golden(library: str) -> dict[str, dict[str, Any]]:
    with open(GOLDEN / f"{library}.json") as f:
        data: dict[str, dict[str, Any]] = json.load(f)["histograms"]
    return data


def _tags() -> list[str]:
    return [tag for tag, *_ in histogram_program.calls()]


@pytest.mark.parametrize("library", LIBRARIES)
def test_golden_file_covers_every_call(library: str) -> None:
    assert sorted(_golden(library)) == sorted(_tags())


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tag", _tags())
def test_same_histogram(library: str, tag: str, ours: dict[str, dict[str, Any]]) -> None:
    theirs, mine = _golden(library)[tag], ours[tag]
    assert mine["bucket_limit"] == theirs["bucket_limit"]
    assert mine["bucket"] == theirs["bucket"]
    for field in ("min", "max", "num"):
        assert mine[field] == theirs[field], field
    for field in ("sum", "sum_squares"):
        assert math.isclose(mine[field], theirs[field], rel_tol=1e-12, abs_tol=1e-12), field


def test_default_bins_keep_interior_empty_buckets(ours: dict[str, dict[str, Any]]) -> None:
    # The issue's case: 5,000 near-normal samples, bins='tensorflow'. TF1's form (v1) has fewer.
    from npsummary import v1
    from npsummary.proto import Summary

    values = histogram_program.datasets()["normal"]
    written = ours["normal/tensorflow"]
    tf1 = Summary.FromString(v1.histogram("h", values)).value[0].histo
    assert 0.0 in written["bucket"][1:-1]
    assert len(written["bucket"]) > len(tf1.bucket)
    assert sum(written["bucket"]) == sum(tf1.bucket) == len(values)
