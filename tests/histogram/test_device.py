"""Histograms bucketed on the array's own device (npsummary._histogram.device), checked on the
CPU by forcing the device path: torch CPU tensors here, a JAX array sharded over 4 forced host
devices in a child process (XLA_FLAGS=--xla_force_host_platform_device_count=4). Each result must
be the NumPy core's: buckets, counts, min, max and num bit for bit, sums to 1e-12."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from legacy_histograms import assert_same_legacy
from npsummary import _histogram as H
from npsummary import proto, v1
from npsummary._histogram import device
from npsummary._histogram._results import F64Array, NonFinite
from npsummary._summaries import histogram as builders
from paths import SUPPORT

# torch and jax are installed by CI stage 50 (.ci/stages/50-remote.sh), which runs this marker
pytestmark = pytest.mark.distributed

_SPECIAL = [0.0, -0.0, 5e-324, 1e-310, -1e-40, 1e-45, np.inf, -np.inf, np.nan, 1.0, -2.5]
_BINS: list[Any] = ["tensorflow", 30, "sqrt", [-1.0, 0.0, 0.5, 2.0], 1]


@st.composite
def _data(draw: st.DrawFn) -> np.ndarray:
    size = draw(st.integers(0, 200))
    pool = st.one_of(st.floats(-1e5, 1e5), st.sampled_from(_SPECIAL))
    x = np.array(draw(st.lists(pool, min_size=size, max_size=size)), dtype=np.float64)
    if draw(st.booleans()):
        x = np.abs(x)
    return x


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> Any:
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(device, "FORCE", True)
    return torch


def test_cpu_tensors_take_the_host_path_unless_forced() -> None:
    torch = pytest.importorskip("torch")
    assert device.device_library(torch.ones(3)) is None
    assert device.device_library(np.ones(3)) is None


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(_data(), st.sampled_from(["float32", "float64", "float16", "bfloat16", "int64"]))
def test_torch_device_path_is_the_numpy_core(x: np.ndarray, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    with np.errstate(all="ignore"):
        base = np.nan_to_num(x, nan=0, posinf=7, neginf=-7) if dtype == "int64" else x
        t = torch.from_numpy(base.astype(np.float64)).to(getattr(torch, dtype))
    host = t.float().numpy() if dtype == "bfloat16" else t.numpy()
    saved = device.FORCE
    device.FORCE = True
    try:
        assert device.device_library(t) == "torch"
        for bins in _BINS:
            got = builders.tensorboardx_histogram("w", t, bins, None)
            assert_same_legacy(got, H.binned_histogram(host, bins))
        for k in (0, 1, 30):
            result = device.histogram_on_device("torch", t, _tf2_plan(k))
            got_rows, got_nf = cast("tuple[F64Array, NonFinite]", result)
            want_rows, want_nf = H.tf2_buckets(host, k)
            assert np.array_equal(got_rows, want_rows) and got_nf == want_nf
        assert_same_legacy(_device_tf1(t), H.tf1_histogram(host))
    finally:
        device.FORCE = saved


def _tf2_plan(k: int) -> Any:
    from npsummary._histogram.merge import tf2_plan

    return tf2_plan(k)


def _device_tf1(t: Any) -> H.LegacyHistogram:
    from npsummary._histogram.merge import tf1_plan

    result = device.histogram_on_device("torch", t, tf1_plan())
    assert isinstance(result, H.LegacyHistogram)
    return result


def test_front_ends_send_device_tensors_to_the_device(forced: Any) -> None:
    t = forced.linspace(-3, 3, 1001)
    got = proto.Summary.FromString(v1.histogram("w", t)).value[0].histo
    want = proto.Summary.FromString(v1.histogram("w", t.numpy())).value[0].histo
    assert list(got.bucket) == list(want.bucket) and got.min == want.min
    value, _ = builders.tf2_histogram_value("w", t, None, None)
    assert value == builders.tf2_histogram_value("w", t.numpy(), None, None)[0]


def test_rules_needing_quantiles_go_to_the_host(forced: Any) -> None:
    t = forced.randn(500, generator=forced.Generator().manual_seed(0))
    got = builders.tensorboardx_histogram("w", t, "auto", None)
    assert_same_legacy(got, H.binned_histogram(t.numpy(), "auto"))


def test_jax_sharded_arrays_are_bucketed_shard_by_shard() -> None:
    pytest.importorskip("jax", reason="needs jax (pip install jax jaxlib)")
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    env["JAX_PLATFORMS"] = "cpu"
    result = subprocess.run(
        [sys.executable, str(SUPPORT / "_jax_sharded_child.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "checked" in result.stdout
