"""``SummaryWriter.add_histogram`` writes the buckets tensorboardX 2.6.5 and torch 2.13 write, for
every ``bins`` form and with ``max_bins`` (issue 21, item 2): the same ``bucket_limit`` and
``bucket`` lists, empty interior buckets included (TF1's C++ op, which ``npsummary.v1.histogram``
follows, drops them), the same min, max and num, and sums within float64 rounding (the order of
additions differs). Golden files: ``gen_histogram_golden.py``; calls: ``histogram_program``.
"""

from __future__ import annotations

import functools
import json
import math
import warnings
from typing import Any

import numpy as np
import pytest

import npsummary
from conformance import histogram_program
from conformance._library import run_with_library
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


def _golden_edges() -> dict[str, list[float]]:
    with open(GOLDEN / "numpy.json") as f:
        data: dict[str, list[float]] = json.load(f)["edges"]
    return data


@functools.cache
def _edges_differ() -> frozenset[str]:
    """The tags whose installed NumPy bin edges are not the golden files' NumPy's."""
    installed = histogram_program.numpy_edges()
    return frozenset(tag for tag, edges in _golden_edges().items() if installed[tag] != edges)


@pytest.fixture(scope="module")
def tensorboardx_here() -> dict[str, dict[str, Any]]:
    """tensorboardX's histograms with the installed NumPy (the generator's own run)."""
    pytest.importorskip("tensorboardX")
    _, histograms = run_with_library(
        "tensorboardX", __file__, histogram_program.run, histogram_program.read_histograms
    )
    return histograms  # type: ignore[no-any-return]


def _expected(library: str, tag: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    if tag in _edges_differ():
        here: dict[str, dict[str, Any]] = request.getfixturevalue("tensorboardx_here")
        return here[tag]
    return _golden(library)[tag]


def _tags() -> list[str]:
    return [tag for tag, *_ in histogram_program.calls()]


@pytest.mark.parametrize("library", LIBRARIES)
def test_golden_file_covers_every_call(library: str) -> None:
    assert sorted(_golden(library)) == sorted(_tags())


def test_numpy_edges_cover_every_rule_call() -> None:
    rules = [
        tag for tag, _, bins, _ in histogram_program.calls() if bins in histogram_program.RULES
    ]
    assert sorted(_golden_edges()) == sorted(rules)


def test_golden_files_agree() -> None:
    # What lets tensorboardX stand for torch where the installed NumPy's edges differ.
    assert _golden("tensorboardX") == _golden("torch")


def test_installed_numpy_auto_rule_is_detected() -> None:
    # The golden files' NumPy (>= 2.3) floors 'auto' at half the 'sqrt' bin width; the zeros
    # data (its zeros narrow the interquartile range) gets 25 bins by that rule, 36 by the older
    # min(fd, sturges): on NumPy < 2.3 its expectation is tensorboardX's, run here.
    assert ("zeros/auto" in _edges_differ()) == (np.lib.NumpyVersion(np.__version__) < "2.3.0")


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tag", _tags())
def test_same_histogram(
    library: str, tag: str, ours: dict[str, dict[str, Any]], request: pytest.FixtureRequest
) -> None:
    theirs, mine = _expected(library, tag, request), ours[tag]
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
