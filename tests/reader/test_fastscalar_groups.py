"""The bulk scalar matcher's grouping of rows (16-bit hash buckets, then an exact comparison)
puts two rows in one group exactly when they are equal, whatever the hash does."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary.reader._fastscalar import FastScalars, _group_words


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


@pytest.mark.parametrize("odd", [None, 0, 5, 63])
def test_rows_all_equal_are_one_group_and_one_odd_row_another(odd: int | None) -> None:
    rows = np.tile(np.array([[7, 1 << 63, 0]], np.uint64), (64, 1))
    if odd is not None:
        rows[odd, 2] = 1
    first, inverse = _group_words(rows.copy())
    assert (rows == rows[first][inverse]).all()
    assert first.size == (1 if odd is None else 2)
    if odd is not None:
        assert np.flatnonzero(inverse != inverse[(odd + 1) % 64]).tolist() == [odd]


def test_colliding_buckets_are_split() -> None:
    rows = np.arange(64, dtype=np.uint64).reshape(-1, 1)  # 64 rows, at most 128 buckets
    first, inverse = _group_words(rows.copy())
    assert first.size == 64
    assert (rows[first][inverse] == rows).all()


@pytest.mark.parametrize("seed", range(8))
def test_each_piece_gets_its_scalars_grouped_as_its_collector_would_group_them(seed: int) -> None:
    """pieces() sorts the rows once by (piece, group): each piece's share must be its own rows
    (subset()), and with few groups in the order a stable sort by group gives, empty pieces
    too."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 6, 9).tolist()  # records per piece, some pieces empty
    bounds = np.cumsum([0, *sizes]).tolist()
    index = np.flatnonzero(rng.random(bounds[-1]) < 0.8)  # some records are not scalars
    groups = int(rng.integers(1, 5)) if seed % 4 else 70  # past _FEW_GROUPS: renumbered
    fast = FastScalars(
        index,
        rng.integers(0, groups, index.size),
        rng.integers(0, 100, index.size),
        rng.random(index.size),
        rng.random(index.size),
        [f"t{g}" for g in range(groups)],
        [None] * groups,
    )
    pieces = fast.pieces(bounds)
    assert len(pieces) == len(sizes)
    for (a, b), got in zip(itertools.pairwise(bounds), pieces, strict=True):
        own = fast.subset(a, b)
        assert own.index.size == np.count_nonzero((index >= a) & (index < b))
        assert ((own.index >= 0) & (own.index < b - a)).all()
        if got.group_counts is None:
            order = np.arange(own.index.size)
            assert got.tags == own.tags
        else:
            order = np.argsort(own.group, kind="stable")
            assert got.group_counts == np.bincount(own.group, minlength=groups).tolist()
        for name in ("index", "group", "steps", "wall_times", "values"):
            np.testing.assert_array_equal(getattr(got, name), getattr(own, name)[order], name)
