"""Histograms merged from parts (npsummary._histogram.merge): for every bucketing, data split
anywhere into pieces gives the histogram of the whole array, bit for bit (sums to 1e-12)."""

from __future__ import annotations

import math
from typing import Literal, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary import _histogram as H
from npsummary._histogram import merge, tbx
from npsummary._histogram._results import F64Array, NonFinite

# zeros of both signs, subnormals, non-finite values and ties: the cases where a merge can go
# wrong (zero-class extremes take their sign from the first such value in the data)
_SPECIAL = [0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-40, 1e-45, math.inf, -math.inf, math.nan]


@st.composite
def _arrays_and_cuts(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int16, np.int64]))
    size = draw(st.integers(0, 300))
    if np.dtype(dtype).kind == "f":
        pool = st.one_of(
            st.floats(-1e6, 1e6, width=cast(Literal[32, 64], np.dtype(dtype).itemsize * 8)),
            st.sampled_from(_SPECIAL),
            st.sampled_from([1.0, -2.5, 3.0]),
        )
        with np.errstate(over="ignore", under="ignore"):
            x = np.array(draw(st.lists(pool, min_size=size, max_size=size)), dtype=dtype)
    else:
        x = draw(hnp.arrays(dtype, size, elements=st.integers(-1000, 1000)))
    if draw(st.booleans()):
        x = np.abs(x)  # zero-class minima: the sign of the first zero decides
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=5)))
    return x, cuts


def _pieces(x: np.ndarray, cuts: list[int]) -> list[np.ndarray]:
    return np.split(x, cuts)


def _same_float(a: float, b: float) -> bool:
    return bool(np.float64(a).tobytes() == np.float64(b).tobytes())


def _assert_same_legacy(got: H.LegacyHistogram, want: H.LegacyHistogram) -> None:
    assert np.array_equal(got.bucket_limit, want.bucket_limit)
    assert np.array_equal(got.bucket, want.bucket)
    assert _same_float(got.min, want.min), (got.min, want.min)
    assert _same_float(got.max, want.max), (got.max, want.max)
    assert got.num == want.num
    assert got.nonfinite == want.nonfinite
    assert got.capped == want.capped
    scale = max(abs(want.sum), 1.0)
    assert abs(got.sum - want.sum) <= 1e-12 * max(scale, want.sum_squares**0.5 * 10)
    assert abs(got.sum_squares - want.sum_squares) <= 1e-12 * max(want.sum_squares, 1.0)


def _split(plan: merge.Plan, x: np.ndarray, cuts: list[int]) -> object:
    with np.errstate(over="ignore", invalid="ignore"):
        return merge.split_histogram(plan, _pieces(x, cuts))


@pytest.mark.fuzz
@settings(max_examples=examples(150), deadline=None)
@given(_arrays_and_cuts())
def test_tf1_merge_is_the_whole(case: tuple[np.ndarray, list[int]]) -> None:
    x, cuts = case
    got = _split(merge.tf1_plan(), x, cuts)
    assert isinstance(got, H.LegacyHistogram)
    _assert_same_legacy(got, H.tf1_histogram(x))


@pytest.mark.fuzz
@settings(max_examples=examples(150), deadline=None)
@given(_arrays_and_cuts(), st.sampled_from([0, 1, 2, 7, 30]))
def test_tf2_merge_is_the_whole(case: tuple[np.ndarray, list[int]], k: int) -> None:
    x, cuts = case
    got, nonfinite = cast("tuple[F64Array, NonFinite]", _split(merge.tf2_plan(k), x, cuts))
    want, want_nonfinite = H.tf2_buckets(x, k)
    # equal as numbers: the sign of a zero edge is np.min's within a chunk (either zero)
    assert np.array_equal(got, want)
    assert nonfinite == want_nonfinite


_BINS = st.one_of(
    st.just("tensorflow"),
    st.sampled_from(merge.MERGEABLE_RULES),
    st.integers(1, 50),
    st.lists(st.floats(-100, 100), min_size=2, max_size=20).map(sorted),
)


@pytest.mark.fuzz
@settings(max_examples=examples(200), deadline=None)
@given(_arrays_and_cuts(), _BINS, st.sampled_from([None, 1, 3, 10]))
def test_tbx_merge_is_the_whole(
    case: tuple[np.ndarray, list[int]], bins: object, max_bins: int | None
) -> None:
    x, cuts = case
    got = _split(merge.tbx_plan(bins, max_bins), x, cuts)
    assert isinstance(got, H.LegacyHistogram)
    with np.errstate(over="ignore", invalid="ignore"):
        want = H.binned_histogram(x, bins, max_bins)  # type: ignore[arg-type]
    _assert_same_legacy(got, want)


def test_tbx_default_bins_reaching_the_last_edge() -> None:
    """A value equal to the last default edge is counted in the closed last bin, as the
    single-array core's general path does."""
    last = tbx.tensorboardx_default_edges()[-1]
    x = np.array([1.0, -3.0, last, 0.5])
    got = merge.split_histogram(merge.tbx_plan("tensorflow"), [x[:1], x[1:3], x[3:]])
    assert isinstance(got, H.LegacyHistogram)
    _assert_same_legacy(got, H.binned_histogram(x, "tensorflow"))


def test_zero_extreme_takes_the_first_zero_of_the_whole() -> None:
    x = np.array([1e-310, 3.0, -0.0, 2.0])  # subnormal first: TF's min is that value
    for cuts in ([], [1], [2], [1, 3]):
        got = _split(merge.tf1_plan(), x, cuts)
        assert isinstance(got, H.LegacyHistogram)
        assert _same_float(got.min, 1e-310)
        _assert_same_legacy(got, H.tf1_histogram(x))


@pytest.mark.parametrize("rule", ["auto", "fd", "doane", "scott", "stone"])
def test_rules_without_an_exact_merge_are_refused(rule: str) -> None:
    with pytest.raises(ValueError, match=f"bins='{rule}' needs the quantiles"):
        merge.tbx_plan(rule)


def test_parts_of_different_dtypes_are_refused() -> None:
    with pytest.raises(ValueError, match="different dtypes"):
        merge.split_histogram(merge.tf1_plan(), [np.ones(3, np.float32), np.ones(3)])


def test_signatures_tell_bucketings_apart() -> None:
    signatures = {
        merge.tf1_plan().signature,
        merge.tf2_plan(30).signature,
        merge.tf2_plan(31).signature,
        merge.tbx_plan("tensorflow").signature,
        merge.tbx_plan("tensorflow", 10).signature,
        merge.tbx_plan(30).signature,
        merge.tbx_plan([0.0, 1.0]).signature,
        merge.tbx_plan([0.0, 2.0]).signature,
    }
    assert len(signatures) == 8
