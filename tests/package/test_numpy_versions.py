"""Behaviour that must not depend on the installed NumPy (1.23 to 2.x), and the one place where
it must: the ``'auto'`` bin rule, which NumPy 2.3 changed and which we follow as installed, as
tensorboardX does by calling ``np.histogram`` (issue 14).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from npsummary import MemorySink, SummaryWriter
from npsummary._histogram import bin_rules, binned_histogram
from npsummary._imaging.grid import make_grid

NEW_AUTO = np.lib.NumpyVersion(np.__version__) >= "2.3.0"


def test_auto_rule_is_the_installed_numpys() -> None:
    assert bin_rules._auto_floors_fd_at_half_sqrt() is NEW_AUTO


@pytest.mark.parametrize(
    "x",
    [
        np.array([0.0] * 8 + [1.0]),  # IQR 0: the two rules disagree (5 bins before 2.3, 6 after)
        np.concatenate([np.zeros(500), np.linspace(0.0, 1.0, 11)]),
        np.concatenate([np.full(300, 3.0), np.random.default_rng(1).standard_normal(40)]),
        np.random.default_rng(2).standard_normal(2000),  # FD wins under both rules
        np.array([1.0, 2.0]),
    ],
)
def test_auto_bins_match_the_installed_numpy(x: np.ndarray) -> None:
    edges = np.histogram_bin_edges(x, "auto")
    h = binned_histogram(x, "auto", rule_bin_cap=10**9)
    counts = np.histogram(x, edges)[0]
    nz = np.flatnonzero(counts)
    assert np.array_equal(h.bucket_limit, edges[nz[0] : nz[-1] + 2])
    assert h.bucket.sum() == x.size


def test_add_histogram_auto_matches_numpy_through_the_writer() -> None:
    from npsummary import proto

    x = np.array([0.0] * 8 + [1.0])
    sink = MemorySink()
    SummaryWriter(sink).add_histogram("h", x, 0, bins="auto")
    event = proto.Event.FromString(sink.payloads[-1])
    histo = event.summary.value[0].histo
    edges = np.histogram_bin_edges(x, "auto")
    assert len(edges) - 1 == (6 if NEW_AUTO else 5)
    # tensorboardX's layout: an empty bucket ending at the first edge, then each bin's right edge.
    assert list(histo.bucket_limit) == edges.tolist()
    assert list(histo.bucket) == [0.0, 8.0] + [0.0] * (len(edges) - 3) + [1.0]


@pytest.mark.parametrize(
    ("dtype", "pad_value"),
    [
        (np.uint8, 300),
        (np.uint8, -1),
        (np.int8, 128),
        (np.uint16, 1 << 16),
        (np.int64, 1 << 63),
        (np.uint8, float("nan")),
        (np.uint8, float("inf")),
        (np.float16, 1e6),
        (np.float32, 1e39),
        (np.uint8, "1"),
        (np.uint8, [1, 2]),
        (np.uint8, 1j),
    ],
)
def test_make_grid_pad_value_out_of_range_is_a_value_error(dtype: type, pad_value: object) -> None:
    # NumPy 1.x wrapped (with a DeprecationWarning), 2.x raised OverflowError: now ValueError on
    # every version, and never a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="pad_value"):
            make_grid(
                np.zeros((2, 2, 2, 1), dtype),
                ncols=2,
                padding=1,
                pad_value=pad_value,  # type: ignore[arg-type]
            )


@pytest.mark.parametrize(
    ("dtype", "pad_value", "expected"),
    [
        (np.uint8, 255, 255),
        (np.uint8, 0, 0),
        (np.int8, -128, -128),
        (np.uint8, 7.9, 7),  # truncated like any float-to-int cast
        (np.uint8, True, 1),
        (np.int64, -1, -1),
        (np.float32, float("nan"), np.nan),
        (np.float32, -float("inf"), -np.inf),
        (np.float16, 0.5, 0.5),
        (np.bool_, 1, True),
    ],
)
def test_make_grid_pad_value_in_range(dtype: type, pad_value: float, expected: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grid = make_grid(np.ones((2, 1, 1, 1), dtype), ncols=2, padding=1, pad_value=pad_value)
    assert grid.dtype == dtype
    np.testing.assert_array_equal(grid[0, 0, 0], np.array(expected, dtype))
    np.testing.assert_array_equal(grid[1, 1, 0], np.array(1, dtype))
