"""Whole tensors as torch's ``add_tensor`` writes them (plugin name ``tensor``).

The ``TensorProto`` stores the values in the typed repeated field torch picks for each dtype
(not in ``tensor_content``): float32 ``float_val``, float64 ``double_val``, int8/int16/int32
``int_val``, uint8 ``uint32_val``, int64 ``int64_val``, bool ``bool_val``, complex64
``scomplex_val`` and complex128 ``dcomplex_val`` (real and imaginary parts interleaved).
float16 (and bfloat16) go to ``half_val`` the way torch puts them there: the bit pattern of the
value *as float32*, read as an int32 — torch's choice, kept so the bytes agree. Other dtypes
(uint16/32/64, strings, objects) raise ``ValueError`` as in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._convert import as_array
from .metadata import DTYPE_NUMBERS, PLUGIN_TENSOR

__all__ = ["tensor_value"]

_LIMIT = 1 << 31  # protobuf's hard limit on a message, as torch checks it

_DT_BFLOAT16 = 14
# NumPy dtype name -> TensorProto field torch fills for it.
_FIELDS: dict[str, str] = {
    "float16": "half_val",
    "bfloat16": "half_val",
    "float32": "float_val",
    "float64": "double_val",
    "int8": "int_val",
    "uint8": "uint32_val",
    "int16": "int_val",
    "int32": "int_val",
    "int64": "int64_val",
    "bool": "bool_val",
    "complex64": "scomplex_val",
    "complex128": "dcomplex_val",
}


def _values(array: np.ndarray, field: str) -> list[Any]:
    flat = array.reshape(-1)
    if field == "half_val":
        return list(flat.astype(np.float32).view(np.int32).tolist())
    if array.dtype.kind == "c":
        real = np.empty((*flat.shape, 2), dtype=flat.real.dtype)
        real[:, 0], real[:, 1] = flat.real, flat.imag
        return list(real.reshape(-1).tolist())
    return list(flat.tolist())


def tensor_value(tag: str, data: Any) -> bytes:
    """Serialized ``Summary.Value`` of a whole tensor (see the module docstring).

    Raises:
      ValueError: the dtype is not supported or the tensor is 2 GiB or more.
    """
    from .. import proto

    array = as_array(data, tag)
    field = _FIELDS.get(array.dtype.name)
    if field is None:
        raise ValueError(f"{tag!r}: add_tensor does not support dtype {array.dtype}")
    if array.size * array.dtype.itemsize >= _LIMIT:
        raise ValueError(f"{tag!r}: tensor of {array.nbytes} bytes exceeds protobuf's 2 GiB limit")
    dtype = DTYPE_NUMBERS.get(array.dtype.name, _DT_BFLOAT16)
    value = proto.SummaryValue(tag=tag)
    value.metadata.plugin_data.plugin_name = PLUGIN_TENSOR
    tensor = value.tensor
    tensor.dtype = dtype
    tensor.tensor_shape.SetInParent()
    for size in array.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    getattr(tensor, field).extend(_values(array, field))
    return bytes(value.SerializeToString())
