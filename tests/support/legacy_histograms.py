"""One comparison of two legacy histograms, for the tests of histograms bucketed elsewhere (on a
device, in parts): edges, counts, min, max and count bit for bit, sums to 1e-12 relative."""

from __future__ import annotations

from typing import Any

import numpy as np

from npsummary import _histogram as H


def assert_same_legacy(got: Any, want: H.LegacyHistogram) -> None:
    assert isinstance(got, H.LegacyHistogram)
    assert np.array_equal(got.bucket_limit, want.bucket_limit)
    assert np.array_equal(got.bucket, want.bucket)
    for field in ("min", "max", "num"):
        a, b = getattr(got, field), getattr(want, field)
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), (field, a, b)
    assert got.nonfinite == want.nonfinite
    assert abs(got.sum - want.sum) <= 1e-12 * max(1.0, abs(want.sum), want.sum_squares**0.5 * 10)
    assert abs(got.sum_squares - want.sum_squares) <= 1e-12 * max(1.0, want.sum_squares)
