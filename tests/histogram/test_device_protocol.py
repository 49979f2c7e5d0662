"""The device and collective layers without torch, JAX or CuPy: the device path run with
NumPy standing in for CuPy (the same calls: ravel, view, bincount, searchsorted, asnumpy), and
the two-all_reduce protocol of one rank, whose all_reduce is the identity. Both must give the
NumPy core's histogram; the torch, JAX and torchrun versions are in test_histogram_device.py
and tests/frontends/test_sharded_histograms.py (CI stage 50)."""

from __future__ import annotations

import sys
import types
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from legacy_histograms import assert_same_legacy
from npsummary import _histogram as H
from npsummary._histogram import device, merge
from npsummary._histogram._results import F64Array, NonFinite
from npsummary._summaries import spread

_SPECIAL = [0.0, -0.0, 5e-324, 1e-310, -1e-40, 1e-45, np.inf, -np.inf, np.nan, 1.0, -2.5]
_BINS: list[Any] = ["tensorflow", 30, "sqrt", [-1.0, 0.0, 0.5, 2.0], 1, "rice"]


@st.composite
def _data(draw: st.DrawFn) -> np.ndarray:
    size = draw(st.integers(0, 200))
    pool = st.one_of(st.floats(-1e5, 1e5), st.sampled_from(_SPECIAL))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.float16, np.int16, np.int64]))
    x = np.array(draw(st.lists(pool, min_size=size, max_size=size)), dtype=np.float64)
    if draw(st.booleans()):
        x = np.abs(x)
    if np.dtype(dtype).kind in "iu":
        x = np.nan_to_num(x, nan=0, posinf=7, neginf=-7).clip(-30000, 30000)
    with np.errstate(all="ignore"):
        return x.astype(dtype)


@pytest.fixture
def numpy_as_cupy(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("cupy")
    fake.__dict__.update({n: getattr(np, n) for n in dir(np) if not n.startswith("__")})
    fake.asnumpy = np.asarray  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", fake)


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(_data())
def test_device_path_with_numpy_as_cupy_is_the_core(x: np.ndarray) -> None:
    with pytest.MonkeyPatch.context() as mp:
        fake = types.ModuleType("cupy")
        fake.__dict__.update({n: getattr(np, n) for n in dir(np) if not n.startswith("__")})
        fake.asnumpy = np.asarray  # type: ignore[attr-defined]
        mp.setitem(sys.modules, "cupy", fake)
        with np.errstate(all="ignore"):
            for bins in _BINS:
                got = device.histogram_on_device("cupy", x, merge.tbx_plan(bins))
                assert_same_legacy(got, H.binned_histogram(x, bins))
            assert_same_legacy(
                device.histogram_on_device("cupy", x, merge.tf1_plan()), H.tf1_histogram(x)
            )
            for k in (0, 1, 30):
                result = device.histogram_on_device("cupy", x, merge.tf2_plan(k))
                rows, nonfinite = cast("tuple[F64Array, NonFinite]", result)
                want, want_nonfinite = H.tf2_buckets(x, k)
                assert np.array_equal(rows, want) and nonfinite == want_nonfinite


def test_device_library_of_plain_arrays_and_cupy(numpy_as_cupy: None) -> None:
    assert device.device_library(np.ones(3)) is None
    cupy_like = type("ndarray", (), {"__module__": "cupy._core.core"})()
    assert device.device_library(cupy_like) == "cupy"


def test_device_parts_of_different_dtypes_are_refused(numpy_as_cupy: None) -> None:
    parts = [device.DeviceArray("cupy", np.ones(3)), device.DeviceArray("cupy", np.ones(3, "f"))]
    with pytest.raises(ValueError, match="different dtypes"):
        device.device_histogram(merge.tf1_plan(), parts)


def test_complex_device_arrays_are_refused(numpy_as_cupy: None) -> None:
    with pytest.raises(
        TypeError, match=r"^values must be numeric \(real numbers: .* of dtype complex128$"
    ):
        device.DeviceArray("cupy", np.ones(3, complex))


def _one_rank(local: Any, reduce: Any = None) -> spread.Spread:
    part = spread.Spread(local, spread._RankOrder(0), None, 0, 1, None)
    part._all_reduce = reduce or (lambda vector, op: vector)  # type: ignore[method-assign]
    return part


@pytest.mark.parametrize("bins", _BINS)
def test_one_rank_protocol_is_the_core(bins: Any) -> None:
    x = np.random.default_rng(3).standard_normal(5000).astype(np.float32)
    x[[3, 9]] = np.nan, -0.0
    with np.errstate(all="ignore"):
        assert_same_legacy(
            _one_rank(x).histogram("w", merge.tbx_plan(bins)), H.binned_histogram(x, bins)
        )
    rows, nonfinite = _one_rank(x).histogram("w", merge.tf2_plan(30))
    want, want_nonfinite = H.tf2_buckets(x, 30)
    assert np.array_equal(rows, want) and nonfinite == want_nonfinite


def test_one_rank_protocol_on_device(numpy_as_cupy: None, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.linspace(-2, 2, 999)
    monkeypatch.setattr(device, "device_library", lambda values: "cupy")
    got = _one_rank(x.tolist()).histogram("w", merge.tf1_plan())
    assert_same_legacy(got, H.tf1_histogram(x))


def test_ranks_calling_other_histograms_are_told(monkeypatch: pytest.MonkeyPatch) -> None:
    def other_tag(vector: np.ndarray, op: str) -> np.ndarray:
        if op == "MAX":
            vector = vector.copy()
            vector[0] += 1  # another rank's tag checksum is larger
        return vector

    def other_bins(vector: np.ndarray, op: str) -> np.ndarray:
        if op == "MAX":
            vector = vector.copy()
            vector[3] += 1
        return vector

    with pytest.raises(ValueError, match=r"'w': .* another tag at this point"):
        _one_rank(np.ones(4), other_tag).histogram("w", merge.tf1_plan())
    with pytest.raises(ValueError, match="another bins, bucket count or dtype"):
        _one_rank(np.ones(4), other_bins).histogram("w", merge.tf1_plan())


def test_global_order_places_a_shard_in_the_whole() -> None:
    order = spread._GlobalOrder((2, 3), (1, 4), (4, 10))
    assert [order(i) for i in range(6)] == [14.0, 15.0, 16.0, 24.0, 25.0, 26.0]
    mesh = types.SimpleNamespace(size=lambda dim: (2, 4)[dim])
    shard = types.SimpleNamespace(is_shard=lambda: True, dim=1)
    rep = types.SimpleNamespace(is_shard=lambda: False)
    # 19 columns over 4: chunks of 5, 5, 5, 4 (torch's rule)
    assert spread._shard_box((6, 19), mesh, (rep, shard), (1, 3)) == ((6, 4), (0, 15))
    assert spread._shard_box((6, 19), mesh, (rep, shard), (0, 1)) == ((6, 5), (0, 5))


def _cupy_array(x: np.ndarray) -> np.ndarray:
    """``x`` as an array whose class says it is CuPy's (the builders go by the module name)."""
    cls = type("ndarray", (np.ndarray,), {"__module__": "cupy._core.core"})
    return x.view(cls)


def test_builders_send_device_arrays_to_the_device(numpy_as_cupy: None) -> None:
    from npsummary import proto
    from npsummary._summaries import histogram as builders

    x = np.random.default_rng(5).standard_normal(3000)
    a = _cupy_array(x)
    assert device.device_library(a) == "cupy"
    assert_same_legacy(builders.tensorboardx_histogram("w", a, 30, None), H.binned_histogram(x, 30))
    # quantile rules are computed on the host
    got = builders.tensorboardx_histogram("w", a, "fd", None)
    assert_same_legacy(got, H.binned_histogram(x, "fd"))
    value, _ = builders.tf1_histogram_value("w", a)
    want, _ = builders.tf1_histogram_value("w", x)
    got_histo = proto.Summary.Value.FromString(value).histo
    want_histo = proto.Summary.Value.FromString(want).histo
    assert list(got_histo.bucket) == list(want_histo.bucket)
    assert (got_histo.min, got_histo.max, got_histo.num) == (
        want_histo.min,
        want_histo.max,
        want_histo.num,
    )
    assert (
        builders.tf2_histogram_value("w", a, 7, None)[0]
        == builders.tf2_histogram_value("w", x, 7, None)[0]
    )


def test_device_library_asks_only_the_array() -> None:
    cuda = types.SimpleNamespace(type="cuda")
    cpu = types.SimpleNamespace(type="cpu")
    torch_like = type("Tensor", (), {"__module__": "torch", "device": cuda})
    torch_cpu = type("Tensor", (), {"__module__": "torch", "device": cpu})
    assert device.device_library(torch_like()) == "torch"
    assert device.device_library(torch_cpu()) is None
    assert device.device_library(type("Size", (), {"__module__": "torch"})()) is None
    gpu = types.SimpleNamespace(platform="gpu")
    host = types.SimpleNamespace(platform="cpu")

    def jax_like(*devices: Any) -> Any:
        return type("ArrayImpl", (), {"__module__": "jaxlib._jax", "devices": lambda s: devices})()

    assert device.device_library(jax_like(gpu)) == "jax"
    assert device.device_library(jax_like(host, host)) == "jax"  # sharded: shard by shard
    assert device.device_library(jax_like(host)) is None
    assert device.device_library(type("PRNGKeyArray", (), {"__module__": "jax"})()) is None
