"""npsummary._common.convert.check_int: the one integer-argument check of every front end."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npsummary._common.convert import check_int

_NP_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


class _Index:
    """An integer-like object, as an integer torch tensor is to NumPy."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


class _BrokenIndex:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __index__(self) -> int:
        raise self.exc

    def __repr__(self) -> str:
        return "<broken>"


@pytest.mark.fuzz
@given(st.integers())
def test_python_ints_come_back_unchanged(value: int) -> None:
    got = check_int(value, "n")
    assert got == value and type(got) is int


@pytest.mark.fuzz
@given(st.integers(-(2**63), 2**63 - 1), st.sampled_from(_NP_INTS))
def test_numpy_integers_and_index_objects_become_ints(value: int, dtype: type) -> None:
    info = np.iinfo(dtype)
    value = min(max(value, int(info.min)), int(info.max))
    candidates: tuple[object, ...] = (dtype(value), np.array(value, dtype), _Index(value))
    for candidate in candidates:
        got = check_int(candidate, "n")
        assert got == value and type(got) is int


@pytest.mark.fuzz
@given(st.integers(), st.integers(-50, 50), st.integers(0, 50))
def test_range_is_inclusive_and_out_of_range_is_value_error(
    value: int, minimum: int, width: int
) -> None:
    maximum = minimum + width
    if minimum <= value <= maximum:
        assert check_int(value, "n", minimum=minimum, maximum=maximum) == value
    else:
        with pytest.raises(ValueError) as info:
            check_int(value, "n", minimum=minimum, maximum=maximum, tag="loss")
        bound = f">= {minimum}" if value < minimum else f"<= {maximum}"
        assert str(info.value) == f"'loss': n must be {bound}, got {value}"


@pytest.mark.fuzz
@given(
    st.one_of(
        st.booleans(),
        st.floats(allow_nan=True),
        st.text(max_size=5),
        st.binary(max_size=5),
        st.none(),
        st.lists(st.integers(), max_size=3),
        st.complex_numbers(),
    )
)
def test_non_integers_are_type_errors(value: Any) -> None:
    with pytest.raises(TypeError) as info:
        check_int(value, "max_queue", minimum=1, tag="run")
    text = str(info.value)
    assert text.startswith("'run': max_queue must be an int, got ")
    assert type(value).__name__ in text


@pytest.mark.parametrize(
    "value",
    [
        np.True_,
        np.array(False),
        np.float32(2.0),
        np.float64(3.0),
        np.array(2.0),
        np.array([3]),
        np.timedelta64(3, "s"),
    ],
)
def test_numpy_non_integers_are_type_errors(value: Any) -> None:
    with pytest.raises(TypeError, match="ncols"):
        check_int(value, "ncols")


@pytest.mark.parametrize(
    "exc", [TypeError("no"), ValueError("no"), RuntimeError("no"), ZeroDivisionError()]
)
def test_a_failing_index_becomes_type_error(exc: BaseException) -> None:
    with pytest.raises(TypeError, match=r"n must be an int, got <broken> \(_BrokenIndex\)"):
        check_int(_BrokenIndex(exc), "n")


class _BoolTensor:
    """A 0-d bool tensor: it has __index__, but a bool is not a count."""

    dtype = "torch.bool"

    def __index__(self) -> int:
        return 1


class _BrokenDtype(_Index):
    @property
    def dtype(self) -> str:
        raise RuntimeError("device lost")


def test_bool_tensors_and_broken_dtypes_are_type_errors() -> None:
    with pytest.raises(TypeError, match="step must be an int"):
        check_int(_BoolTensor(), "step")
    with pytest.raises(TypeError, match="n must be an int"):
        check_int(_BrokenDtype(3), "n")


def test_none_only_when_allowed() -> None:
    assert check_int(None, "max_bins", minimum=1, allow_none=True) is None
    assert check_int(4, "max_bins", minimum=1, allow_none=True) == 4
    with pytest.raises(TypeError, match=r"^max_bins must be an int or None, got 2\.0"):
        check_int(2.0, "max_bins", minimum=1, allow_none=True)
    with pytest.raises(TypeError, match=r"^max_bins must be an int, got None"):
        check_int(None, "max_bins")


def test_messages_without_tag_and_with_one_bound() -> None:
    with pytest.raises(ValueError, match=r"^padding must be >= 0, got -1$"):
        check_int(-1, "padding", minimum=0)
    with pytest.raises(ValueError, match=r"^'t': k must be <= 3, got 4$"):
        check_int(np.int64(4), "k", maximum=3, tag="t")
    with pytest.raises(TypeError, match=r"^'t': k must be an int, got '4' \(str\)$"):
        check_int("4", "k", maximum=3, tag="t")


def test_process_group_must_be_a_torch_process_group() -> None:
    import npsummary

    with npsummary.SummaryWriter(npsummary.MemorySink()) as writer:
        with pytest.raises(TypeError, match=r"'w': process_group must be a torch\.distributed"):
            writer.add_histogram("w", [1.0, 2.0], 0, process_group=object())
        writer.add_histogram("w", [1.0, 2.0], 0, process_group=None)


def test_is_dtensor_asks_the_class_not_torch() -> None:
    from npsummary._common.convert import is_dtensor

    fake = type("DTensor", (), {"__module__": "torch.distributed.tensor._api"})
    assert is_dtensor(type("Sub", (fake,), {})())
    assert not is_dtensor(type("DTensor", (), {"__module__": "mylib"})())
    assert not is_dtensor(np.ones(3))
