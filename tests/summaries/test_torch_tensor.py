"""add_tensor: torch's bytes for every dtype torch supports, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary import MemorySink, SummaryWriter
from npsummary._summaries.torch_tensor import tensor_value

pytestmark = pytest.mark.torch

ARRAYS = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([0.1, -2.5]),
    np.array(3.5, dtype=np.float32),
    np.array([1, -2], dtype=np.int8),
    np.array([1, 200], dtype=np.uint8),
    np.array([1, -2], dtype=np.int16),
    np.array([1, -2], dtype=np.int32),
    np.array([1, -(2**40)], dtype=np.int64),
    np.array([True, False]),
    np.array([1.5, -2.25], dtype=np.float16),
    np.array([1 + 2j], dtype=np.complex64),
    np.array([1 - 2j, 3j], dtype=np.complex128),
    np.zeros((0, 3), dtype=np.float32),
    np.zeros((2, 0), dtype=np.int64),
    np.array([-1, -(2**31), 2**31 - 1], dtype=np.int32),
    np.array([[-(2**63), 2**63 - 1, 0, 127, 128, 16384]], dtype=np.int64),
    np.array([-0.0, -65504.0, np.inf], dtype=np.float16),
    np.array([np.nan, -np.inf, 1e-45], dtype=np.float32),
]


@pytest.mark.parametrize("array", ARRAYS, ids=lambda a: str(a.dtype))
def test_bytes_equal_torch(array: np.ndarray) -> None:
    torch = pytest.importorskip("torch")
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    theirs = torch_summary.tensor_proto("t", torch.from_numpy(array)).value[0]
    assert tensor_value("t", array) == theirs.SerializeToString()


@pytest.mark.parametrize("requires_grad", [False, True])
def test_torch_bfloat16_tensor_bytes_equal_torch(requires_grad: bool) -> None:
    # NumPy has no bfloat16: the tensor reaches us as float32 and is written as torch writes it.
    torch = pytest.importorskip("torch")
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    tensor = torch.tensor([[0.5, -3.0], [1e30, 0.1]], dtype=torch.bfloat16)
    theirs = torch_summary.tensor_proto("t", tensor).value[0]
    assert tensor_value("t", tensor.requires_grad_(requires_grad)) == theirs.SerializeToString()


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.float32]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
    )
)
def test_random_arrays_match_torch(array: np.ndarray) -> None:
    torch = pytest.importorskip("torch")
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    theirs = torch_summary.tensor_proto("t", torch.from_numpy(array.copy())).value[0]
    assert tensor_value("t", array) == theirs.SerializeToString()


@pytest.mark.parametrize("array", [np.array([1], dtype=np.uint16), np.array(["a"])])
def test_unsupported_dtypes_raise_naming_the_tag(array: np.ndarray) -> None:
    sink = MemorySink()
    with pytest.raises(ValueError, match=r"'my_tensor'.*dtype"):
        SummaryWriter(sink).add_tensor("my_tensor", array)
    assert sink.payloads == []
