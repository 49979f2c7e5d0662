"""Tests for npsummary._histogram against TF goldens and TensorBoard/tensorboardX/NumPy oracles."""

from __future__ import annotations

import sys
import tracemalloc
import warnings
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary import _histogram as H
from npsummary import reader as TB
from npsummary._histogram import _source, bin_rules, tbx, tf1, tf2
from paths import TESTS

GOLDEN = TESTS / "golden" / "histogram"
DBL_MAX = sys.float_info.max
TF1 = np.load(GOLDEN / "tf1_golden.npz")
TF2 = np.load(GOLDEN / "tf2_golden.npz")
TF1_CASES = sorted({k.rsplit(".", 1)[0] for k in TF1.files})
TF2_CASES = sorted(k for k in TF2.files if not k.endswith(".x"))


def _tf1_input(name: str) -> np.ndarray:
    x: np.ndarray = TF1[f"{name}.x"]
    if f"{name}.bf16" in TF1.files:
        return (x.astype(np.uint32) << 16).view(np.float32)  # exact bfloat16 values
    return x


def _bits(v: float) -> bytes:
    return cast(bytes, np.float64(v).tobytes())


def _tb_histogram_pb(data: np.ndarray, k: int) -> np.ndarray:
    summary_v2 = pytest.importorskip("tensorboard.plugins.histogram.summary_v2")
    tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
    with np.errstate(all="ignore"):
        pb = summary_v2.histogram_pb("t", data, k)
    return np.asarray(tensor_util.make_ndarray(pb.value[0].tensor))


# ---------------------------------------------------------------------------------------------
# TF1 exponential buckets


def test_tf1_limits() -> None:
    lim = H.TF1_BUCKET_LIMITS
    assert lim.size == 1551
    assert lim[0] == -DBL_MAX and lim[-1] == DBL_MAX and lim[775] == 0.0
    assert lim[776] == 1e-12 and lim[-2] == 9.920775621859783e19
    assert np.all(np.diff(lim) > 0)
    assert np.array_equal(lim[:775], -lim[776:][::-1])
    with pytest.raises(ValueError):
        lim[0] = 1.0


@pytest.mark.parametrize("name", TF1_CASES)
def test_tf1_golden(name: str) -> None:
    x = _tf1_input(name)
    stats = TF1[f"{name}.stats"]
    h = H.tf1_histogram(x)
    assert np.array_equal(h.bucket_limit, TF1[f"{name}.limit"])
    assert np.array_equal(h.bucket, TF1[f"{name}.bucket"])
    assert _bits(h.min) == _bits(stats[0]) and _bits(h.max) == _bits(stats[1])
    assert h.num == stats[2]
    with np.errstate(over="ignore"):
        scale = float(np.abs(x.astype(np.float64)).sum()) if x.size else 0.0
    if np.isfinite(stats[3]):
        assert abs(h.sum - stats[3]) <= 1e-12 * max(scale, 1e-300) + 1e-300
    if np.isfinite(stats[4]):
        assert h.sum_squares == pytest.approx(stats[4], rel=1e-12, abs=1e-300)
    else:
        assert h.sum_squares == stats[4]
    exact = H.tf1_histogram(x, exact_sum=True)
    got = np.array([exact.min, exact.max, exact.num, exact.sum, exact.sum_squares])
    assert got.tobytes() == stats.tobytes()  # bit for bit, sums included
    assert np.array_equal(exact.bucket, h.bucket)
    assert h.nonfinite.total == 0


def test_tf1_reference_example() -> None:
    # docs/FORMAT.md §5a, the worked example
    h = H.tf1_histogram(np.array([0, 0.5, 1, 1, -2, 100, 1e-13, -0.0], np.float32))
    assert h.bucket.tolist() == [0, 1, 0, 3, 0, 1, 0, 2, 0, 1, 0]
    assert h.bucket_limit[-1] == DBL_MAX and h.bucket_limit[2] == 0.0
    assert (h.min, h.max, h.num) == (-2.0, 100.0, 8.0)


def test_tf1_empty_and_all_nonfinite() -> None:
    for data in ([], np.zeros((0, 3)), [np.nan, np.inf, -np.inf, np.nan]):
        h = H.tf1_histogram(data)
        assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (DBL_MAX, -DBL_MAX, 0, 0, 0)
        assert h.bucket_limit.tolist() == [DBL_MAX] and h.bucket.tolist() == [0.0]
    assert H.tf1_histogram([np.nan, np.inf, -np.inf, np.nan]).nonfinite == H.NonFinite(2, 1, 1)


def test_tf1_dbl_max_clamped_to_last_bucket() -> None:
    h = H.tf1_histogram([DBL_MAX, 1.0])
    assert h.bucket_limit[-1] == DBL_MAX and h.bucket[-1] == 1
    assert h.bucket.sum() == 2 and h.max == DBL_MAX


def test_tf1_every_bucket_float32_and_float64() -> None:
    # each limit, its neighbours and mid-bucket points, against upper_bound semantics
    lim = H.TF1_BUCKET_LIMITS[1:-1]
    pts = np.concatenate([lim, np.nextafter(lim, np.inf), np.nextafter(lim, -np.inf), lim * 1.05])
    for x in (pts, pts.astype(np.float32)):
        xd = x.astype(np.float64)
        flushed = np.where(np.abs(xd) < sys.float_info.min, 0.0, xd)  # TF's denormals-are-zero
        idx = np.searchsorted(H.TF1_BUCKET_LIMITS, flushed, side="right")
        ref = np.bincount(idx, minlength=1551)
        full = tf1.tf1_pass(_source.Source(x), exact_sum=False, moments=False)[1]
        assert np.array_equal(full, ref)


def test_tf1_float16_bool_and_ints_match_float64() -> None:
    rng = np.random.default_rng(3)
    cases = [
        rng.standard_normal(300).astype(np.float16),
        rng.integers(0, 2, 50).astype(bool),
        rng.integers(-(2**40), 2**40, 200),
        rng.integers(0, 2**64 - 1, 200, dtype=np.uint64),
        np.array([1, 2, 3], np.uint32),
    ]
    for x in cases:
        a = H.tf1_histogram(x, exact_sum=True)
        b = H.tf1_histogram(x.astype(np.float64), exact_sum=True)
        assert np.array_equal(a.bucket_limit, b.bucket_limit)
        assert np.array_equal(a.bucket, b.bucket)
        assert (a.min, a.max, a.num, a.sum, a.sum_squares) == (
            b.min,
            b.max,
            b.num,
            b.sum,
            b.sum_squares,
        )


def _sequential_sums_with_daz(x: np.ndarray) -> tuple[float, float]:
    """TF's loop: ``sum += v; sum_squares += v * v`` in double, a subnormal input or square
    read as zero (denormals-are-zero), in input order."""
    tiny = sys.float_info.min
    s = q = 0.0
    for v in x.astype(np.float64).ravel().tolist():
        if not np.isfinite(v):
            continue
        v = 0.0 if abs(v) < tiny else v
        sq = v * v
        s += v
        q += 0.0 if sq < tiny else sq
    return s, q


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    st.one_of(
        hnp.arrays(
            np.float32,
            st.integers(0, 300),
            elements=st.floats(allow_subnormal=True, width=32),
        ),
        # float64-only ranges: generated into a float32 array they would round to 0, which
        # hypothesis refuses as a sign of a flush-to-zero build
        hnp.arrays(
            np.float64,
            st.integers(0, 300),
            elements=st.one_of(
                st.floats(allow_subnormal=True, width=32),
                st.floats(-1e-150, 1e-150),  # squares below the smallest normal double
                st.floats(-1e-300, 1e-300, allow_subnormal=True),
            ),
        ),
    )
)
@example(np.array([5e-324, -1e-310, 1e-320]))  # subnormal inputs flushed
@example(np.array([1e-160, -3e-170]))  # normal inputs, subnormal squares flushed
@example(np.array([1e-40, -1e-45, 3e-39], np.float32))  # float32 subnormals: kept
def test_tf1_exact_sums_are_sequential_with_flushed_subnormals(x: np.ndarray) -> None:
    # float32 chunks skip the flush (their values and squares are never subnormal doubles);
    # float64 chunks flush inputs and squares: both must equal TF's loop bit for bit.
    h = H.tf1_histogram(x, exact_sum=True)
    s, q = _sequential_sums_with_daz(x)
    assert _bits(h.sum) == _bits(s) and _bits(h.sum_squares) == _bits(q)


def test_negative_zero_rules() -> None:
    assert _bits(H.tf1_histogram([-0.0]).min) == _bits(-0.0)
    h = H.tf1_histogram([0.0, -0.0])
    assert _bits(h.min) == _bits(0.0) and _bits(h.max) == _bits(0.0)
    h = H.tf1_histogram(np.array([-0.0, 0.0], np.float32))
    assert _bits(h.min) == _bits(-0.0) and _bits(h.max) == _bits(-0.0)
    assert h.bucket_limit.tolist() == [0.0, 1e-12, DBL_MAX]


# ---------------------------------------------------------------------------------------------
# TF2 equal-width buckets


@pytest.mark.parametrize("key", TF2_CASES)
def test_tf2_golden(key: str) -> None:
    name, k = key.rsplit(".", 1)
    got, nf = H.tf2_buckets(TF2[f"{name}.x"], int(k[1:]))
    assert got.dtype == np.float64
    assert np.array_equal(got, TF2[key])
    assert nf.total == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int8])
def test_tf2_matches_histogram_pb(dtype: type) -> None:
    rng = np.random.default_rng(11)
    for _ in range(12):
        n = int(rng.integers(1, 3000))
        x = rng.standard_normal(n) * rng.lognormal(0, 4) + rng.standard_normal() * 10
        if np.issubdtype(dtype, np.integer):
            x = np.clip(x, np.iinfo(dtype).min, np.iinfo(dtype).max)
        x = x.astype(dtype)
        k = int(rng.integers(1, 80))
        got, _ = H.tf2_buckets(x, k)
        assert np.array_equal(got, _tb_histogram_pb(x, k))


def test_tf2_large_float32_uses_exact_fast_path() -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((1 << 20) + 1234) * 3 + 1).astype(np.float32)
    x[::1001] = np.float32(1.0)  # many repeats
    mn, mx = float(x.min()), float(x.max())
    assert tf2._reciprocal_is_exact(mn, mx, (mx - mn) / 30, 30)
    got, _ = H.tf2_buckets(x, 30)
    ref = np.bincount(
        np.minimum(np.floor((x.astype(np.float64) - mn) / ((mx - mn) / 30)).astype(int), 29),
        minlength=30,
    )
    assert np.array_equal(got[:, 2], ref)
    assert np.array_equal(got, _tb_histogram_pb(x, 30))


def test_threshold_search_against_brute_force() -> None:
    # every float32 in [mn, mx] enumerated: the first one where floor((x-mn)/w) >= j
    rng = np.random.default_rng(21)
    for _ in range(20):
        mn = np.float32(rng.standard_normal() * 10.0 ** rng.integers(-5, 5))
        span = int(rng.integers(100, 200_000))
        keys = tf2._f32_key(np.array([mn]))[0] + np.arange(span + 1)
        vals = tf2._f32_from_key(keys).astype(np.float64)
        mx = float(vals[-1])
        k = int(rng.integers(2, 40))
        w = (mx - float(mn)) / k
        js = np.arange(1, k, dtype=np.int64)
        f = np.floor((vals - float(mn)) / w)
        brute = np.array([keys[np.argmax(f >= j)] for j in js])
        near = tf2._f32_key((float(mn) + js * w).astype(np.float32))

        def past(v: np.ndarray, j: np.ndarray, m: float = float(mn), w: float = w) -> Any:
            return np.floor((v - m) / w) >= j

        for guess in (near, np.full(k - 1, keys[0])):
            got = tf2._first_true_f32(
                past,
                int(keys[0]),
                int(keys[-1]),
                js,
                guess,
            )
            assert np.array_equal(got, brute)


def test_tf2_reciprocal_check_detects_mismatch() -> None:
    # where x * (1/width) and x / width switch buckets at different float32 values the fast
    # path must be refused; data sitting on those switch points still matches histogram_pb
    mismatches = 0
    for hi in range(31, 200):
        w = hi / 30
        if tf2._reciprocal_is_exact(0.0, float(hi), w, 30):
            continue
        mismatches += 1
        centre = (np.arange(1, 30) * w).astype(np.float32)
        x = np.concatenate(
            [[0.0, hi], *(centre + d * np.spacing(centre) for d in range(-3, 4))]
        ).astype(np.float32)
        x = np.tile(x, (1 << 20) // x.size + 1)
        assert np.array_equal(H.tf2_buckets(x, 30)[0][:, 2], _tb_histogram_pb(x, 30)[:, 2])
        if mismatches >= 2:
            break
    assert mismatches == 2


def test_tf2_empty_constant_zero_buckets() -> None:
    assert np.array_equal(H.tf2_buckets([])[0], np.zeros((30, 3)))
    assert H.tf2_buckets([1.0, 2.0], 0)[0].shape == (0, 3)
    got, _ = H.tf2_buckets([5.0, 5.0, 5.0], 4)
    assert got.tolist() == [[5, 5, 0], [5, 5, 0], [5, 5, 0], [5, 5, 3]]
    got, nf = H.tf2_buckets([np.nan, np.inf], 3)
    assert np.array_equal(got, np.zeros((3, 3))) and nf == H.NonFinite(1, 1, 0)


def test_tf2_nonfinite_excluded() -> None:
    x = np.array([1.0, np.nan, 3.0, np.inf, -np.inf, 2.0, np.nan])
    got, nf = H.tf2_buckets(x, 4)
    assert nf == H.NonFinite(nan=2, posinf=1, neginf=1) and nf.total == 4
    assert np.array_equal(got, _tb_histogram_pb(np.array([1.0, 3.0, 2.0]), 4))


def test_tf2_overflowing_range_is_sane() -> None:
    for x in ([-1e308, 1e308, 0.0], [0.0, 5e-324], [-DBL_MAX, DBL_MAX]):
        got, _ = H.tf2_buckets(np.array(x), 10)
        assert np.all(np.isfinite(got))
        assert np.all(np.diff(got[:, 0]) >= 0) and got[:, 2].sum() == len(x)
        assert got[0, 0] == min(x) and got[-1, 1] == max(x)


@pytest.mark.parametrize("bad", [1.5, "3", None, True, np.float64(2.0)])
def test_tf2_bucket_count_type_errors(bad: object) -> None:
    with pytest.raises(TypeError, match="bucket_count"):
        H.tf2_buckets([1.0], bad)  # type: ignore[arg-type]


def test_tf2_bucket_count_value_errors() -> None:
    with pytest.raises(ValueError, match="-1"):
        H.tf2_buckets([1.0], -1)
    with pytest.raises(ValueError, match="int32"):
        H.tf2_buckets([1.0], 2**31)
    assert H.tf2_buckets([1.0, 2.0], np.int64(3))[0].shape == (3, 3)


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64]),
        hnp.array_shapes(max_dims=2, max_side=40),
        elements={"allow_nan": False, "allow_infinity": False, "allow_subnormal": False},
    ),
    st.integers(1, 60),
)
def test_tf2_property_matches_histogram_pb(x: np.ndarray, k: int) -> None:
    got, _ = H.tf2_buckets(x, k)
    with np.errstate(over="ignore"):
        finite_range = x.size and np.isfinite(np.float64(x.max()) - np.float64(x.min()))
    if finite_range:
        assert np.array_equal(got, _tb_histogram_pb(x, k))
    assert got[:, 2].sum() == x.size


# ---------------------------------------------------------------------------------------------
# tensorboardX-style bins


def _tbx(x: np.ndarray, bins: object, max_bins: int | None = None) -> object:
    summary = pytest.importorskip("tensorboardX.summary")
    return summary.make_histogram(x.astype(float), bins, max_bins)


def _assert_like_tbx(h: H.LegacyHistogram, ref: object) -> None:
    assert np.array_equal(h.bucket_limit, np.array(ref.bucket_limit))  # type: ignore[attr-defined]
    assert np.array_equal(h.bucket, np.array(ref.bucket))  # type: ignore[attr-defined]
    assert (h.min, h.max, h.num) == (ref.min, ref.max, ref.num)  # type: ignore[attr-defined]
    assert h.sum == pytest.approx(ref.sum, rel=1e-12, abs=1e-9)  # type: ignore[attr-defined]
    assert h.sum_squares == pytest.approx(ref.sum_squares, rel=1e-12)  # type: ignore[attr-defined]


def _data(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(2000).astype(np.float32),
        rng.lognormal(0, 2, 1500),
        rng.integers(-50, 50, 800),
        np.concatenate([rng.standard_normal(500), [40.0, -60.0]]),
        np.full(10, 3.0),
        np.array([7.5]),
        rng.exponential(1.0, 3000) ** 3,
    ]


@pytest.mark.parametrize("bins", [1, 7, 30, 100, 1000])
@pytest.mark.parametrize("max_bins", [None, 3, 10])
def test_binned_int_bins_like_tbx(bins: int, max_bins: int | None) -> None:
    for x in _data(bins):
        _assert_like_tbx(H.binned_histogram(x, bins, max_bins), _tbx(x, bins, max_bins))


@pytest.mark.parametrize("rule", H.RULE_NAMES)
def test_binned_rules_like_tbx(rule: str) -> None:
    for x in _data(len(rule)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 'stone' suboptimal note
            ref = _tbx(x, rule)
            got = H.binned_histogram(x, rule, rule_bin_cap=10**9)
        _assert_like_tbx(got, ref)


def test_binned_rules_beyond_one_chunk_like_numpy() -> None:
    rng = np.random.default_rng(8)
    n = _source.CHUNK * 2 + 12345
    x = np.concatenate([rng.standard_normal(n - 1000), np.round(rng.standard_normal(1000), 1)])
    for rule in ("fd", "auto", "scott", "doane", "sturges"):
        edges = np.histogram_bin_edges(x, rule)
        h = H.binned_histogram(x, rule, rule_bin_cap=10**9)
        counts = np.histogram(x, edges)[0]
        nz = np.flatnonzero(counts)
        assert np.array_equal(h.bucket_limit, edges[nz[0] : nz[-1] + 2])
        assert h.bucket.sum() == counts.sum() == x.size
        _assert_like_tbx(h, _tbx(x, rule))


def test_order_statistics_exact_with_duplicates() -> None:
    rng = np.random.default_rng(9)
    x = np.concatenate([np.full(200_000, 2.5), rng.standard_normal(150_000), [-0.0, 0.0] * 10])
    rng.shuffle(x)
    src = _source.Source(x)
    stt = _source.Stats()
    for i, c in enumerate(src.chunks()):
        stt.finite(i, c)
    ranks = [0, 1, 5000, 100_000, 200_000, 349_999, stt.n - 1]
    got = bin_rules.order_stats(src, stt, ranks)
    ref = np.sort(x)
    assert [got[r] for r in ranks] == [float(ref[r]) for r in ranks]


def test_binned_explicit_edges_like_tbx() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal(3000)
    for edges in (
        [-1.0, 0.0, 1.0],
        np.linspace(-3, 3, 50),
        [-10, -1, -1, 0, 2, 2],
        [0.0, 0.5, 100.0],
        [-np.inf, 0.0, np.inf],
    ):
        for mb in (None, 2):
            ref = _tbx(x, np.asarray(edges, float), mb)
            _assert_like_tbx(H.binned_histogram(x, edges, mb), ref)


def test_binned_default_tbx_bins_as_explicit_edges() -> None:
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    edges = [-p for p in pos[::-1]] + [0.0] + pos
    rng = np.random.default_rng(4)
    x = rng.standard_normal(5000).astype(np.float32)
    _assert_like_tbx(H.binned_histogram(x, edges), _tbx(x, edges))
    _assert_like_tbx(H.binned_histogram(x, edges, 100), _tbx(x, edges, 100))


def test_binned_tensorflow_is_tensorboardx_default_bins() -> None:
    # 'tensorflow' stands for tensorboardX's and torch's default_bins edges, which are TF1's
    # bucket limits without ±DBL_MAX; the one-pass TF1 counter gives np.histogram's counts.
    edges = tbx.tensorboardx_default_edges()
    assert np.array_equal(np.array(edges), H.TF1_BUCKET_LIMITS[1:-1])
    rng = np.random.default_rng(1)
    last = edges[-1]
    for x in (
        rng.standard_normal(500),
        rng.standard_normal(3000).astype(np.float32) * 1e-3,
        np.array([-1e30, -5.0, 0.0, -0.0, 1e-300, 7.0]),
        np.array([1.0, last, last, 1e25]),  # the closed last bin: the general path
    ):
        for max_bins in (None, 7, 100):
            _assert_like_tbx(
                H.binned_histogram(x, "tensorflow", max_bins), _tbx(x, edges, max_bins)
            )
    # Beyond the last edge np.histogram counts nothing (1e25 stays in num), TF1 counts it.
    a, b = H.binned_histogram(x, "tensorflow"), H.tf1_histogram(x)
    assert (a.bucket.sum(), b.bucket.sum(), a.num) == (3, 4, 4)


def test_rule_explosion_is_capped_and_says_so() -> None:
    # fd with a tiny IQR and far outliers asks for ~1e11 bins (tensorboardX issue #1)
    rng = np.random.default_rng(17)
    x = np.concatenate([rng.standard_normal(10_000) * 1e-6, [-1e6, 1e6]])
    tracemalloc.start()
    h = H.binned_histogram(x, "fd", rule_bin_cap=1000)
    assert h.capped is not None and "asked for" in h.capped and "rule_bin_cap=1000" in h.capped
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 2**20
    assert h.bucket.size <= 1002 and h.bucket.sum() == x.size
    lo, hi = float(x.min()), float(x.max())
    iqr = np.subtract(*np.percentile(x, [75, 25]))
    nbins = int(np.ceil((hi - lo) / (2.0 * iqr * x.size ** (-1.0 / 3.0))))
    assert nbins > 10**12
    edges = bin_rules.linspace_at(lo, hi, nbins + 1, tbx._grouped_edge_index(nbins, nbins // 1000))
    counts = np.histogram(x, edges)[0]
    nz = np.flatnonzero(counts)
    assert np.array_equal(h.bucket[1:], counts[nz[0] : nz[-1] + 1])
    assert np.array_equal(h.bucket_limit, edges[nz[0] : nz[-1] + 2])


def test_stone_suboptimal_note_points_at_the_callers_line() -> None:
    # Two spikes and a far outlier: the risk falls to the largest candidate; NumPy warns too.
    x = np.concatenate([np.zeros(1000), np.full(1000, 1e-3), [1.0]])
    with pytest.warns(RuntimeWarning, match="suboptimal"):
        np.histogram_bin_edges(x, "stone")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        H.binned_histogram(x, "stone")
    assert [(w.category, w.filename) for w in caught] == [(RuntimeWarning, __file__)]


def test_binned_too_many_bins_for_range_widens_and_says_so() -> None:
    h = H.binned_histogram(np.array([1.0, np.nextafter(1.0, 2.0)]), 100)
    assert h.capped is not None and "too many bins" in h.capped
    assert h.bucket.sum() == 2
    h = H.binned_histogram(np.full(4, 1e300), 10)
    assert h.capped is not None and h.capped.startswith("bins=10: too many bins")
    assert h.bucket.sum() == 4
    assert H.binned_histogram(np.arange(100.0), 10).capped is None


def test_binned_nonfinite_and_empty() -> None:
    x = np.array([1.0, np.nan, 2.0, np.inf, 3.0])
    h = H.binned_histogram(x, 3)
    assert h.nonfinite == H.NonFinite(1, 1, 0) and h.num == 3 == h.bucket.sum()
    assert (h.min, h.max, h.sum, h.sum_squares) == (1.0, 3.0, 6.0, 14.0)
    for data in ([], [np.nan]):
        e = H.binned_histogram(data, "auto")
        assert e.bucket_limit.tolist() == [DBL_MAX] and e.num == 0


def test_binned_equal_width_edges_inside_the_data_do_not_fail() -> None:
    """A zero-class minimum is reported as the first such value (here a subnormal above 0.0),
    so the equal-width edges start above the data's 0.0: the counter used to index past its
    edges (IndexError); the value outside the edges is left out of the buckets, as any is."""
    x = np.array([1.0, 2.2250738585072014e-309, 0.0])
    h = H.binned_histogram(x, "sqrt")
    assert h.min == 2.2250738585072014e-309
    assert h.bucket.sum() == 2
    assert h.num == 3


def test_binned_values_outside_edges_stay_in_stats() -> None:
    h = H.binned_histogram([0.5, 100.0, -3.0], [0.0, 1.0, 2.0])
    assert h.num == 3 and h.bucket.sum() == 1 and (h.min, h.max) == (-3.0, 100.0)
    h = H.binned_histogram([5.0], [0.0, 1.0])
    assert h.bucket_limit.tolist() == [DBL_MAX] and h.bucket.tolist() == [0.0]


@pytest.mark.parametrize(
    ("bins", "exc", "match"),
    [
        ("bogus", ValueError, "bogus"),
        (0, ValueError, "bins must be >= 1"),
        (-3, ValueError, "-3"),
        (2.5, TypeError, "float"),
        (True, TypeError, "bool"),
        ([3.0, 1.0], ValueError, "non-decreasing"),
        ([0.0, np.nan, 1.0], ValueError, "NaN"),
        ([0.0, np.nan], ValueError, "NaN"),
        ([[0.0, 1.0]], ValueError, "1-D"),
        ([1.0], ValueError, "at least 2"),
        (["a", "b"], TypeError, "real numbers"),
    ],
)
def test_binned_bins_validation(bins: object, exc: type, match: str) -> None:
    with pytest.raises(exc, match=match) as raised:
        H.binned_histogram([1.0, 2.0], bins)  # type: ignore[arg-type]
    assert "bins" in str(raised.value)  # the argument is named (the explore profile's find)


def test_binned_max_bins_validation() -> None:
    with pytest.raises(ValueError, match="max_bins"):
        H.binned_histogram([1.0], 10, max_bins=0)
    with pytest.raises(TypeError, match="max_bins"):
        H.binned_histogram([1.0], 10, max_bins=2.0)  # type: ignore[arg-type]


def test_binned_rule_bin_cap_validation() -> None:
    with pytest.raises(ValueError, match="rule_bin_cap"):
        H.binned_histogram([1.0, 2.0], "auto", rule_bin_cap=0)
    with pytest.raises(TypeError, match="rule_bin_cap"):
        H.binned_histogram([1.0, 2.0], "auto", rule_bin_cap=1.5)  # type: ignore[arg-type]


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 300),
        elements=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False),
    ),
    st.integers(1, 50),
)
def test_binned_property_against_np_histogram(x: np.ndarray, bins: int) -> None:
    counts, edges = np.histogram(x, bins)
    h = H.binned_histogram(x, bins)
    nz = np.flatnonzero(counts)
    start, end = nz[0], nz[-1] + 1
    ref_c = counts[start - 1 : end] if start else np.concatenate([[0], counts[:end]])
    assert np.array_equal(h.bucket, ref_c)
    assert np.array_equal(h.bucket_limit, edges[start : end + 1])
    assert h.num == h.bucket.sum() == x.size


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 200),
        elements=st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False),
    ),
    st.sampled_from(["auto", "fd", "sturges", "sqrt", "rice", "stone"]),
)
def test_binned_rule_property_against_numpy(x: np.ndarray, rule: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            edges = np.histogram_bin_edges(x, rule)
        except (ValueError, MemoryError):  # a rule asked NumPy for more bins than it can make
            assume(False)
        # 'fd' on a narrow interquartile range asks for tens of millions of bins: past a million
        # the oracle alone costs hundreds of MiB, so such draws are left to the cap tests.
        assume(edges.size <= 10**6)
        h = H.binned_histogram(x, rule, rule_bin_cap=10**9)
    counts = np.histogram(x, edges)[0]
    nz = np.flatnonzero(counts)
    assert np.array_equal(h.bucket_limit, edges[nz[0] : nz[-1] + 2])
    assert h.bucket.sum() == x.size


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.float32, np.float64]),
        st.integers(0, 200),
        elements={"allow_subnormal": False},
    )
)
def test_tf1_property_invariants(x: np.ndarray) -> None:
    h = H.tf1_histogram(x)
    fin = x[np.isfinite(x)].astype(np.float64)
    assert h.num == h.bucket.sum() == fin.size
    assert np.all(np.diff(h.bucket_limit) > 0) and h.bucket_limit[-1] == DBL_MAX
    assert h.nonfinite.total == x.size - fin.size
    if fin.size:
        assert (h.min, h.max) == (fin.min(), fin.max())
        idx = np.searchsorted(H.TF1_BUCKET_LIMITS, fin, side="right")
        full = np.bincount(np.minimum(idx, 1550), minlength=1551)
        assert np.array_equal(h.bucket[h.bucket > 0], full[full > 0])


def test_linspace_at_matches_numpy() -> None:
    rng = np.random.default_rng(6)
    for _ in range(200):
        a, b = sorted(rng.standard_normal(2) * 10.0 ** rng.integers(-300, 300))
        num = int(rng.integers(2, 500))
        idx = np.unique(rng.integers(0, num, 20))
        assert np.array_equal(bin_rules.linspace_at(a, b, num, idx), np.linspace(a, b, num)[idx])
    assert np.array_equal(
        bin_rules.linspace_at(0.0, 5e-324, 31, np.arange(31)), np.linspace(0, 5e-324, 31)
    )


# ---------------------------------------------------------------------------------------------
# Distributions and legacy migration


def _tb_compress(buckets: np.ndarray) -> list[tuple[float, float]]:
    compressor = pytest.importorskip("tensorboard.plugins.distribution.compressor")
    return [tuple(v) for v in compressor.compress_histogram(buckets)]


def test_compress_matches_tensorboard_tf2() -> None:
    rng = np.random.default_rng(12)
    datasets = [
        rng.standard_normal(1000),
        rng.lognormal(0, 2, 500),
        np.array([1.0]),
        np.full(5, 2.0),
        np.array([]),
        np.concatenate([np.zeros(100), [1.0]]),
    ]
    for x in datasets:
        for k in (30, 1, 7):
            b, _ = H.tf2_buckets(x, k)
            assert TB.compress_histogram(b) == _tb_compress(b)
    assert TB.compress_histogram(np.zeros((0, 3))) == [(bp, 0.0) for bp in TB.NORMAL_HISTOGRAM_BPS]


def test_compress_matches_tensorboard_legacy() -> None:
    data_compat = pytest.importorskip("tensorboard.data_compat")
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
    rng = np.random.default_rng(13)
    for x in (rng.standard_normal(800), np.array([0.5, 0.5, 3.0]), np.array([]), [-0.0, 7.0]):
        for h in (H.tf1_histogram(x), H.binned_histogram(x, 10)):
            proto = summary_pb2.HistogramProto(
                min=h.min,
                max=h.max,
                num=h.num,
                sum=h.sum,
                sum_squares=h.sum_squares,
                bucket_limit=h.bucket_limit.tolist(),
                bucket=h.bucket.tolist(),
            )
            value = summary_pb2.Summary.Value(tag="t", histo=proto)
            migrated = tensor_util.make_ndarray(data_compat.migrate_value(value).tensor)
            ours = TB.legacy_to_buckets(h)
            assert ours.dtype == migrated.dtype and np.array_equal(ours, migrated)
            assert TB.compress_histogram(ours) == _tb_compress(migrated)
            assert TB.compress_histogram(TB.legacy_to_buckets(h, loader="rust"))[0][0] == 0


def test_legacy_to_buckets_rust_form() -> None:
    e = TB.legacy_to_buckets(H.tf1_histogram([]), loader="rust")
    assert e.tolist() == [[DBL_MAX, -DBL_MAX, 0.0]]
    r = TB.legacy_to_buckets(H.tf1_histogram([5.0, 5.0]), loader="rust")
    assert r[0, 0] == 5.0 and r[-1, 1] == 5.0 and r[:, 2].tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match="loader"):
        TB.legacy_to_buckets(H.tf1_histogram([1.0]), loader="go")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# variable_stats


def test_variable_stats() -> None:
    rng = np.random.default_rng(14)
    x = (rng.standard_normal(_source.CHUNK * 3 + 17) * 1e-3 + 1e4).astype(np.float64)
    v = H.variable_stats(x)
    assert v.mean == pytest.approx(np.mean(x), rel=1e-15)
    assert v.stddev == pytest.approx(np.sqrt(np.mean(np.square(x - np.mean(x)))), rel=1e-9)
    assert (v.min, v.max) == (x.min(), x.max())
    h = H.tf1_histogram(x)
    assert np.array_equal(v.histogram.bucket, h.bucket)
    assert np.array_equal(v.histogram.bucket_limit, h.bucket_limit)
    nf = H.variable_stats([1.0, np.nan, 3.0])
    assert (nf.mean, nf.stddev, nf.histogram.nonfinite.nan) == (2.0, 1.0, 1)
    e = H.variable_stats([])
    assert np.isnan(e.mean) and np.isnan(e.stddev) and (e.min, e.max) == (np.inf, -np.inf)


# ---------------------------------------------------------------------------------------------
# Input handling


@pytest.mark.parametrize(
    "bad",
    [
        np.array([1 + 2j]),
        np.array(["a"]),
        np.array([b"a"]),
        np.array([object()], dtype=object),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.zeros(2, dtype=[("a", "f4")]),
        np.zeros(2, dtype="V8"),  # raw bytes: NumPy's cast to float32 fails only when it runs
        np.zeros(2, dtype="m8[s]"),
    ],
)
def test_non_real_inputs_rejected(bad: np.ndarray) -> None:
    for fn in (H.tf1_histogram, H.tf2_buckets, lambda v: H.binned_histogram(v, 3)):
        with pytest.raises(
            TypeError, match=r"^values must be numeric \(real numbers: bool, int or float\), got"
        ):
            fn(bad)


def test_layouts_and_array_likes_agree() -> None:
    rng = np.random.default_rng(15)
    base = rng.standard_normal((700, 411)).astype(np.float32)
    ref_tf1 = H.tf1_histogram(base.ravel(), exact_sum=True)
    ref_tf2 = H.tf2_buckets(base.ravel())[0]
    for view in (base.T.copy().T, np.asfortranarray(base)):
        h = H.tf1_histogram(view, exact_sum=True)
        assert np.array_equal(h.bucket, ref_tf1.bucket) and h.sum == ref_tf1.sum
        assert np.array_equal(H.tf2_buckets(view)[0], ref_tf2)
    strided = base[:, ::3]
    assert np.array_equal(H.tf1_histogram(strided).bucket, H.tf1_histogram(strided.copy()).bucket)
    wide = rng.standard_normal((3, _source.CHUNK + 5))[:, ::2]
    assert (
        H.tf1_histogram(wide, exact_sum=True).sum
        == H.tf1_histogram(wide.copy(), exact_sum=True).sum
    )

    class Wrapped:
        def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
            return base

    assert np.array_equal(H.tf2_buckets(Wrapped())[0], ref_tf2)
    assert H.tf1_histogram(3.5).num == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        matrix = np.asmatrix(base[:50, :50])
    assert np.array_equal(H.tf2_buckets(matrix)[0], H.tf2_buckets(base[:50, :50])[0])
    assert H.tf1_histogram([1, 2, 3]).sum == 6
    big_endian = base.astype(">f4")
    assert np.array_equal(H.tf2_buckets(big_endian)[0], ref_tf2)


def test_bfloat16_via_ml_dtypes() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = _tf1_input("bf16")
    xb = x.astype(ml_dtypes.bfloat16)
    h = H.tf1_histogram(xb, exact_sum=True)
    stats = TF1["bf16.stats"]
    assert np.array_equal(h.bucket, TF1["bf16.bucket"])
    assert np.array([h.min, h.max, h.num, h.sum, h.sum_squares]).tobytes() == stats.tobytes()
    assert np.array_equal(H.tf2_buckets(xb)[0], H.tf2_buckets(x)[0])


def _two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (_source, tf1):
        monkeypatch.setattr(module, "second_core_free", lambda: True)


def _pass_fields(st: _source.Stats, counts: np.ndarray) -> tuple[object, ...]:
    return (
        counts.tobytes(),
        st.n,
        _bits(st.mn),
        _bits(st.mx),
        _bits(st.sum),
        _bits(st.sum_squares),
        st.nonfinite,
        sorted(st.bad),
    )


def test_tf1_pass_in_two_threads_is_one_pass_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_cores(monkeypatch)  # the threaded path on any runner
    # From 8 chunks on, the second half is counted by a thread and merged in input order:
    # counts, extremes (which of -0.0/0.0 comes first), sums and the non-finite chunks must
    # be exactly those of one sequential pass.
    chunk = _source.CHUNK
    n = 9 * chunk + 12345
    rng = np.random.default_rng(21)
    x = rng.standard_normal(n).astype(np.float32)
    nonfinite = x.copy()
    nonfinite[[5, n - 3]] = np.nan
    nonfinite[n // 2 + 7] = np.inf
    nonfinite[6 * chunk] = -np.inf
    zeros = np.abs(x)
    zeros[chunk + 1] = 0.0  # the minimum, first in the first half
    zeros[7 * chunk + 2] = -0.0  # an equal minimum in the second half: the first one stays
    ties = -zeros
    cases = {
        "normal": x,
        "nonfinite": nonfinite,
        "zeros": zeros,
        "ties": ties,
        "float64": x.astype(np.float64) * 1e-3,
        "2-D": x[: 9 * chunk].reshape(9, chunk),
        "reversed view": x[::-1],
        "int16": rng.integers(-1000, 1000, n).astype(np.int16),
        "constant": np.full(n, 3.5, np.float32),
        "all nan in one half": np.where(np.arange(n) >= n // 2, np.nan, x).astype(np.float32),
    }
    for name, v in cases.items():
        assert _source.split_in_two(_source.Source(v)) is not None, name
        for exact_sum, moments in ((False, False), (True, False), (False, True), (True, True)):
            # the last three: a thread counts, this one sums (in input order)
            kw = {"exact_sum": exact_sum, "moments": moments}
            two = tf1.tf1_pass(_source.Source(v), **kw)
            one = tf1.tf1_pass(_source.Source(v), parallel=False, **kw)
            assert _pass_fields(*two) == _pass_fields(*one), (name, kw)
            if moments:
                assert (_bits(two[0].mean), _bits(two[0].m2)) == (
                    _bits(one[0].mean),
                    _bits(one[0].m2),
                ), (name, kw)
    strided = np.asfortranarray(nonfinite[: 9 * chunk].reshape(chunk, 9))  # not one flat run
    assert _source.split_in_two(_source.Source(strided)) is None
    two = tf1.tf1_pass(_source.Source(strided), exact_sum=False, moments=False)
    one = tf1.tf1_pass(_source.Source(strided), exact_sum=False, moments=False, parallel=False)
    assert _pass_fields(*two) == _pass_fields(*one)


def _tf2_reference_counts(x: np.ndarray, k: int) -> np.ndarray:
    """TF's v3 formula in float64: ``min(floor((x - min) / width), k - 1)``."""
    mn, mx = x.min(), x.max()
    index = np.minimum(np.floor((x - mn) / ((mx - mn) / k)).astype(np.int64), k - 1)
    return np.bincount(index, minlength=k)


def test_tf2_in_two_threads_is_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_cores(monkeypatch)  # the threaded path on any runner
    # min/max scan and bucketing of 8 chunks or more run as two halves in two threads
    chunk = _source.CHUNK
    n = 9 * chunk + 777
    rng = np.random.default_rng(22)
    x = rng.standard_normal(n).astype(np.float32)
    x[[3, n - 5]] = np.nan
    x[6 * chunk + 1] = -np.inf
    x[7 * chunk] = 40.0  # the maximum, in the second half
    assert _source.split_in_two(_source.Source(x)) is not None
    one = _source.scan_minmax(_source.Source(x), parallel=False)
    two = _source.scan_minmax(_source.Source(x))
    assert (two.n, _bits(two.mn), _bits(two.mx), two.nonfinite, two.bad) == (
        one.n,
        _bits(one.mn),
        _bits(one.mx),
        one.nonfinite,
        one.bad,
    )
    for v in (x, x.astype(np.float64)):
        got, nf = H.tf2_buckets(v, 30)
        fin = v[np.isfinite(v)].astype(np.float64)
        assert nf == one.nonfinite
        assert got[-1, 1] == 40.0 and np.array_equal(got[:, 2], _tf2_reference_counts(fin, 30))


def test_tf1_pass_in_two_threads_reraises_the_workers_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _two_cores(monkeypatch)
    real = _source.stats_pass  # what tf1 imported

    def failing_second_half(src: object, st: _source.Stats, add: object = None) -> object:
        if st._chunk_sums is not None:  # the worker's statistics record their chunk sums
            raise MemoryError("second half")
        return real(src, st, add)  # type: ignore[arg-type]

    monkeypatch.setattr(tf1, "stats_pass", failing_second_half)
    x = np.zeros(9 * _source.CHUNK, np.float32)
    with pytest.raises(MemoryError, match="second half"):
        H.tf1_histogram(x)

    def failing_count(self: object, c: np.ndarray) -> None:
        raise MemoryError("counting thread")

    monkeypatch.setattr(tf1._Tf1Counter, "add", failing_count)
    with pytest.raises(MemoryError, match="counting thread"):
        H.tf1_histogram(x, exact_sum=True)


def test_no_free_core_counts_in_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    for module in (_source, tf1):
        monkeypatch.setattr(module, "second_core_free", lambda: False)
    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    x = np.random.default_rng(23).standard_normal(9 * _source.CHUNK).astype(np.float32)
    assert _source.split_in_two(_source.Source(x)) is None
    assert H.tf1_histogram(x).num == x.size == H.tf1_histogram(x, exact_sum=True).num
    assert H.tf2_buckets(x)[0][:, 2].sum() == x.size
    assert started == []


def test_second_core_free_needs_two_cpus_and_a_low_load(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def load(value: float) -> None:
        monkeypatch.setattr(os, "getloadavg", lambda: (value, value, value))

    monkeypatch.setattr(_source, "_usable_cores", lambda: 1)
    load(0.0)
    assert not _source.second_core_free()
    monkeypatch.setattr(_source, "_usable_cores", lambda: 2)
    assert _source.second_core_free()
    load(1.5)  # this process alone, and its threads now and then
    assert _source.second_core_free()
    load(1.9)  # another busy process: the halves would queue for one core
    assert not _source.second_core_free()

    def no_load_average() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(os, "getloadavg", no_load_average)
    assert _source.second_core_free()


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    _two_cores(monkeypatch)  # the threaded path on any runner
    rng = np.random.default_rng(16)
    small = rng.standard_normal(1_000_000).astype(np.float32)
    big = rng.standard_normal(6_000_000).astype(np.float32)  # 24 MiB
    # TF1 and TF2 count inputs of 8 chunks or more in two threads, whose second set of chunk
    # buffers is a constant, not a growth: compare two sizes past that threshold
    small_threaded = big[:2_000_000]
    assert _source.split_in_two(_source.Source(small_threaded)) is not None
    for fn, sizes in (
        (H.tf1_histogram, (small_threaded, big)),
        (lambda v: H.binned_histogram(v, "tensorflow"), (small_threaded, big)),
        (H.tf2_buckets, (small_threaded, big)),
        (H.variable_stats, (small, big)),
        (lambda v: H.binned_histogram(v, 30), (small, big)),
        (lambda v: H.binned_histogram(v, "fd"), (small, big)),
    ):
        peaks = []
        for x in sizes:
            tracemalloc.start()
            fn(x)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        assert peaks[1] < 16 * 2**20, peaks
        assert peaks[1] < peaks[0] + 2**20, peaks  # does not grow with the input
