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

from .._common.convert import as_array
from .._format.wire import encode_length_delimited, encode_value, encode_varint
from .metadata import DTYPE_NUMBERS, PLUGIN_TENSOR, metadata_bytes

__all__ = ["tensor_value"]

_LIMIT = 1 << 31  # protobuf's hard limit on a message, as torch checks it
_CHUNK = 1 << 20  # values encoded per block: bounded temporaries for huge tensors
_DT_BFLOAT16 = 14
_FIXED = {"float_val": (5, "<f4"), "double_val": (6, "<f8"), "scomplex_val": (9, "<f4")}
_FIXED["dcomplex_val"] = (12, "<f8")
_VARINT = {"int_val": 7, "int64_val": 10, "bool_val": 11, "half_val": 13, "uint32_val": 16}

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


def _varints(values: np.ndarray) -> bytes:
    """Protobuf varints of int64 ``values`` (negative ones as 10-byte two's complement)."""
    unsigned = values.astype(np.int64).view(np.uint64)
    lengths = np.ones(unsigned.shape, dtype=np.int64)
    for k in range(1, 10):
        lengths += unsigned >= np.uint64(1 << (7 * k))
    starts = np.cumsum(lengths) - lengths
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    for k in range(10):
        present = lengths > k
        if not present.any():
            break
        byte = (unsigned[present] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (lengths[present] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[present] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def _payload(flat: np.ndarray, field: str) -> bytes:
    """The packed bytes of ``flat`` in ``field``, encoded in blocks."""
    parts = []
    for start in range(0, flat.size, _CHUNK):
        block = flat[start : start + _CHUNK]
        if field == "half_val":
            parts.append(_varints(block.astype(np.float32).view(np.int32)))
        elif field in _VARINT:
            parts.append(_varints(block))
        elif block.dtype.kind == "c":
            pairs = np.empty((block.size, 2), dtype=_FIXED[field][1])
            pairs[:, 0], pairs[:, 1] = block.real, block.imag
            parts.append(pairs.tobytes())
        else:
            parts.append(block.astype(_FIXED[field][1]).tobytes())
    return b"".join(parts)


def _tensor_bytes(array: np.ndarray, name: str, field: str) -> bytes:
    dtype = DTYPE_NUMBERS.get(name, _DT_BFLOAT16)
    dims = b"".join(
        encode_length_delimited(2, b"\x08" + encode_varint(int(size)) if size else b"")
        for size in array.shape
    )
    out = b"\x08" + encode_varint(dtype) + encode_length_delimited(2, dims)
    if array.size:
        number = _VARINT[field] if field in _VARINT else _FIXED[field][0]
        out += encode_length_delimited(number, _payload(array.reshape(-1), field))
    return out


def tensor_value(tag: str, data: Any) -> bytes:
    """Serialized ``Summary.Value`` of a whole tensor (see the module docstring).

    Encoded field by field (the bytes protobuf writes for torch's message), so a huge tensor
    costs its packed size, not a Python object per value.

    Raises:
      ValueError: the dtype is not supported or the tensor is 2 GiB or more.
    """
    # A torch bfloat16 tensor reaches NumPy as float32 (as_array): it is still written as the
    # bfloat16 tensor torch writes.
    torch_bfloat16 = str(getattr(data, "dtype", "")) == "torch.bfloat16"
    array = as_array(data, tag)
    name = "bfloat16" if torch_bfloat16 else array.dtype.name
    field = _FIELDS.get(name)
    if field is None:
        raise ValueError(f"{tag!r}: add_tensor does not support dtype {array.dtype}")
    nbytes = array.size * (2 if torch_bfloat16 else array.dtype.itemsize)
    if nbytes >= _LIMIT:
        raise ValueError(f"{tag!r}: tensor of {nbytes} bytes exceeds protobuf's 2 GiB limit")
    return encode_value(tag, 8, _tensor_bytes(array, name, field), metadata_bytes(PLUGIN_TENSOR))
