"""What the histogram cores return, and TF1's fixed bucket limits.

Pure data: the result dataclasses shared by every bucket scheme, TF1's 1551 bucket limits and the
empty TF1 histogram. Non-finite values (NaN, +Inf, -Inf) are left out of the buckets *and* of
every statistic (min, max, num, sum, sum_squares); ``num`` is the number of finite values. Each
result carries a :class:`NonFinite` count so that the caller can warn or raise, and a legacy
histogram whose bins had to be grouped says why in ``capped`` so that the caller, who knows the
tag, can warn: these cores never warn about data themselves.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = [
    "DBL_MAX",
    "N_TF1",
    "TF1_BUCKET_LIMITS",
    "ArrayLike",
    "F64Array",
    "IntArray",
    "LegacyHistogram",
    "NonFinite",
    "VariableStats",
    "empty_legacy",
]

ArrayLike: TypeAlias = npt.ArrayLike
F64Array: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]

DBL_MAX = sys.float_info.max


def _tf1_limits() -> F64Array:
    """``[-DBL_MAX, -9.92e19 .. -1e-12, 0, 1e-12 .. 9.92e19, DBL_MAX]``: ratio 1.1, built by
    repeated multiplication in double as ``histogram.cc`` builds them."""
    pos: list[float] = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    limits = np.array([-DBL_MAX, *(-p for p in reversed(pos)), 0.0, *pos, DBL_MAX])
    limits.flags.writeable = False
    return limits


TF1_BUCKET_LIMITS: F64Array = _tf1_limits()
N_TF1 = TF1_BUCKET_LIMITS.size  # 1551


@dataclass(frozen=True)
class NonFinite:
    """Counts of the values left out of a histogram."""

    nan: int = 0
    posinf: int = 0
    neginf: int = 0

    @property
    def total(self) -> int:
        return self.nan + self.posinf + self.neginf

    def __add__(self, other: NonFinite) -> NonFinite:
        return NonFinite(
            self.nan + other.nan, self.posinf + other.posinf, self.neginf + other.neginf
        )


@dataclass(frozen=True, eq=False)
class LegacyHistogram:
    """The fields of a legacy ``HistogramProto``; ``bucket_limit`` are right edges.

    ``capped`` is ``None``, or a sentence saying that adjacent bins were grouped because more
    were asked for than can be written (the caller warns with it, naming the tag).
    """

    min: float
    max: float
    num: float
    sum: float
    sum_squares: float
    bucket_limit: F64Array
    bucket: F64Array
    nonfinite: NonFinite
    capped: str | None = None


@dataclass(frozen=True, eq=False)
class VariableStats:
    """``variable_summaries``-style statistics and the TF1 histogram, from one pass."""

    mean: float
    stddev: float
    min: float
    max: float
    histogram: LegacyHistogram


def empty_legacy(nonfinite: NonFinite) -> LegacyHistogram:
    """TF1's histogram of no data: ``min=DBL_MAX, max=-DBL_MAX``, one empty bucket at DBL_MAX."""
    return LegacyHistogram(
        min=DBL_MAX,
        max=-DBL_MAX,
        num=0.0,
        sum=0.0,
        sum_squares=0.0,
        bucket_limit=np.array([DBL_MAX]),
        bucket=np.array([0.0]),
        nonfinite=nonfinite,
    )
