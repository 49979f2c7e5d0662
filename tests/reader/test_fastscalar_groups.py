"""The bulk scalar matcher's grouping of rows (16-bit hash buckets, then an exact comparison)
puts two rows in one group exactly when they are equal, whatever the hash does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary.reader._fastscalar import _group_words


@pytest.mark.fuzz
@settings(max_examples=examples(80), deadline=None)
@given(
    st.integers(1, 3),
    st.lists(st.integers(0, 40), min_size=1, max_size=300),
    st.integers(0, 2**32 - 1),
)
def test_groups_are_exactly_the_equal_rows(width: int, picks: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Few distinct rows, many repeats; with m rows the hash keeps about log2(m) bits, so
    # distinct rows share buckets often and the exact comparison must split them.
    distinct = rng.integers(0, 2**64, (41, width), dtype=np.uint64)
    distinct[1] = distinct[0]
    distinct[2, 0] ^= np.uint64(1) << np.uint64(63)
    rows = distinct[picks]
    first, inverse = _group_words(rows.copy())
    assert (rows == rows[first][inverse]).all()  # every row equals its group's row
    groups = {tuple(r) for r in rows.tolist()}
    assert first.size == len(groups)  # and equal rows share one group
    assert set(inverse.tolist()) == set(range(first.size))


def test_colliding_buckets_are_split() -> None:
    rows = np.arange(64, dtype=np.uint64).reshape(-1, 1)  # 64 rows, at most 128 buckets
    first, inverse = _group_words(rows.copy())
    assert first.size == 64
    assert (rows[first][inverse] == rows).all()
