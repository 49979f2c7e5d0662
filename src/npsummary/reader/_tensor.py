"""``TensorProto`` to NumPy, as TensorFlow's ``make_ndarray`` reads it.

Data comes from ``tensor_content`` (little-endian bytes) or from the typed repeated field of the
dtype; a repeated field shorter than the shape is padded with its last value, as TensorFlow does.
DT_STRING becomes an object array of ``bytes``; DT_HALF comes from ``half_val`` bit patterns and
DT_BFLOAT16 is widened to float32 (NumPy has no bfloat16).

Defensive limits: a tensor never expands to more than :data:`MAX_EXPANSION` bytes beyond the
data it holds (a corrupt shape cannot request a huge allocation); such tensors, unknown dtypes
and wrong sizes raise :class:`ValueError`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import proto

__all__ = ["MAX_EXPANSION", "tensor_to_array"]

MAX_EXPANSION = 1 << 20

_NUMERIC: dict[int, tuple[str, str]] = {
    proto.DT_FLOAT: ("<f4", "float_val"),
    proto.DT_DOUBLE: ("<f8", "double_val"),
    proto.DT_INT32: ("<i4", "int_val"),
    proto.DT_UINT8: ("<u1", "int_val"),
    proto.DT_INT16: ("<i2", "int_val"),
    proto.DT_INT8: ("<i1", "int_val"),
    proto.DT_UINT16: ("<u2", "int_val"),
    proto.DT_INT64: ("<i8", "int64_val"),
    proto.DT_UINT32: ("<u4", "uint32_val"),
    proto.DT_UINT64: ("<u8", "uint64_val"),
    proto.DT_BOOL: ("?", "bool_val"),
    proto.DT_HALF: ("<f2", "half_val"),
    proto.DT_COMPLEX64: ("<c8", "scomplex_val"),
    proto.DT_COMPLEX128: ("<c16", "dcomplex_val"),
}


def _shape(tensor: Any) -> tuple[int, ...]:
    dims = tuple(int(d.size) for d in tensor.tensor_shape.dim)
    if any(d < 0 for d in dims):
        raise ValueError(f"tensor has an unknown dimension: {list(dims)}")
    return dims


def _size(shape: tuple[int, ...]) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


def _expand(flat: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    size = _size(shape)
    if flat.size == size:
        return flat.reshape(shape)
    if flat.size == 0 or flat.size > size:
        raise ValueError(f"tensor holds {flat.size} values for shape {list(shape)}")
    if (size - flat.size) * max(flat.itemsize, 1) > MAX_EXPANSION:
        raise ValueError(f"tensor of shape {list(shape)} holds only {flat.size} values")
    out = np.empty(size, flat.dtype)
    out[: flat.size] = flat
    out[flat.size :] = flat[-1]
    return out.reshape(shape)


def tensor_to_array(tensor: Any) -> np.ndarray:
    """The NumPy array held by a ``TensorProto`` (see the module docstring).

    Raises:
        ValueError: unknown dtype, or data that does not fit the shape.
    """
    shape = _shape(tensor)
    dtype = int(tensor.dtype)
    if dtype == proto.DT_STRING:
        flat = np.empty(len(tensor.string_val), object)
        flat[:] = list(tensor.string_val)
        if _size(shape) == 0:
            return np.empty(shape, object)
        return _expand(flat, shape)
    if dtype == proto.DT_BFLOAT16:
        bits = np.asarray(tensor.half_val, np.uint32)
        if tensor.tensor_content:
            bits = np.frombuffer(tensor.tensor_content, "<u2").astype(np.uint32)
        if _size(shape) == 0:
            return np.zeros(shape, np.float32)
        return _expand((bits << 16).view(np.float32), shape)
    if dtype not in _NUMERIC:
        raise ValueError(f"unsupported tensor dtype {dtype}")
    np_dtype, field = _NUMERIC[dtype]
    if _size(shape) == 0:
        return np.zeros(shape, np.dtype(np_dtype).newbyteorder("="))
    if tensor.tensor_content:
        content = tensor.tensor_content
        itemsize = np.dtype(np_dtype).itemsize
        if len(content) % itemsize:
            raise ValueError(f"tensor_content of {len(content)} bytes for {np_dtype}")
        flat = np.frombuffer(content, np_dtype)
    else:
        values = getattr(tensor, field)
        if dtype == proto.DT_HALF:
            flat = np.asarray(values, np.uint16).view("<f2")
        elif dtype in (proto.DT_COMPLEX64, proto.DT_COMPLEX128):
            pairs = np.asarray(values, np.float32 if dtype == proto.DT_COMPLEX64 else np.float64)
            flat = pairs.view(np_dtype) if pairs.size % 2 == 0 else pairs[:0].view(np_dtype)
        else:
            flat = np.asarray(values, np_dtype)
    return _expand(flat.astype(flat.dtype.newbyteorder("="), copy=False), shape)
