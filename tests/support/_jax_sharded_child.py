"""Child of tests/histogram/test_device.py: JAX arrays sharded over 4 forced host devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=4``), replicated along one mesh axis, must
give the NumPy core's histogram of the whole array through every front end, bucketed shard by
shard on the devices (the device path, taken because the arrays span several devices)."""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from npsummary import _histogram as H
from npsummary._histogram import device
from npsummary._summaries import histogram as builders


def _same(got: H.LegacyHistogram, want: H.LegacyHistogram) -> None:
    assert np.array_equal(got.bucket_limit, want.bucket_limit)
    assert np.array_equal(got.bucket, want.bucket)
    for field in ("min", "max", "num"):
        a, b = getattr(got, field), getattr(want, field)
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), (field, a, b)
    assert abs(got.sum - want.sum) <= 1e-12 * max(1.0, want.sum_squares**0.5 * 10)
    assert abs(got.sum_squares - want.sum_squares) <= 1e-12 * max(1.0, want.sum_squares)


def main() -> None:
    assert len(jax.devices()) == 4, jax.devices()
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    rng = np.random.default_rng(0)
    cases = []
    x = rng.standard_normal((6, 8)).astype(np.float32)
    x[0, 5], x[2, 0] = -0.0, np.nan
    cases.append(np.abs(x))  # a zero minimum: the first zero of the whole array decides
    cases.append((x * 1000).astype(np.float16))
    checked = 0
    for x in cases:
        for spec in (P("x", "y"), P(None, "y"), P()):
            a = jax.device_put(x, NamedSharding(mesh, spec))
            assert device.device_library(a) == "jax"
            host = np.asarray(x, np.float32) if x.dtype == np.float16 else x
            for bins in ("tensorflow", 30, [-1.0, 0.0, 0.5, 2.0]):
                with np.errstate(all="ignore"):
                    got = builders.tensorboardx_histogram("w", a, bins, None)
                    _same(got, H.binned_histogram(host, bins))
                checked += 1
            value, nonfinite = builders.tf2_histogram_value("w", a, None, None)
            assert value == builders.tf2_histogram_value("w", host, None, None)[0]
            assert nonfinite.nan == 1
            got_v1, _ = builders.tf1_histogram_value("w", a)
            want_v1, _ = builders.tf1_histogram_value("w", host)
            checked += 1
            assert len(got_v1) == len(want_v1)
    print(f"checked {checked}")


if __name__ == "__main__":
    main()
