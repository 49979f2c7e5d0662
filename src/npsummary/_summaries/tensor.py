"""Tensors: ``TensorProto`` bytes from arrays, string arrays, and the generic tensor value.

Numeric arrays are stored as little-endian ``tensor_content`` with an explicit shape, strings as
UTF-8 ``string_val`` entries (DT_STRING), exactly as TensorFlow serializes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._common.convert import as_array, real_dtype
from .._common.messages import check_event_size
from .._format.wire import encode_value
from .metadata import DT_STRING, DTYPE_NUMBERS

__all__ = [
    "as_tensor_array",
    "fill_float_tensor",
    "string_array",
    "tensor_bytes",
    "tensor_value",
]

_TENSOR_FIELD = 8


def string_array(data: Any, tag: str) -> np.ndarray:
    """Return ``data`` (a str, bytes, or array-like of them) as an object array of bytes."""
    if isinstance(data, (str, bytes)):
        array = np.empty((), dtype=object)
        array[()] = data
    else:
        try:
            array = data if isinstance(data, np.ndarray) else np.asarray(data, dtype=object)
        except Exception as exc:  # a broken __array__ can raise anything
            raise TypeError(
                f"{tag!r}: cannot convert {type(data).__name__} to an array of strings: {exc}"
            ) from exc
        if array.dtype.kind not in "SUO":
            raise TypeError(
                f"{tag!r}: text data must be str, bytes or an array of them, "
                f"got an array of dtype {array.dtype}"
            )
    out = np.empty(array.shape, dtype=object)
    flat_out = out.reshape(-1)
    for i, item in enumerate(array.reshape(-1)):
        if isinstance(item, str):
            try:
                flat_out[i] = item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{tag!r}: text is not valid UTF-8: {exc.reason}") from None
        elif isinstance(item, (bytes, np.bytes_)):
            flat_out[i] = bytes(item)
        else:
            raise TypeError(
                f"{tag!r}: text data must contain only str or bytes, got {type(item).__name__}"
            )
    return out


def tensor_bytes(array: np.ndarray, tag: str = "") -> bytes:
    """Serialized ``TensorProto`` holding ``array`` (numeric, or an object array of bytes from
    :func:`string_array`) as TensorFlow serializes it."""
    from .. import proto

    tensor = proto.TensorProto()
    tensor.tensor_shape.SetInParent()
    for size in array.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    if array.dtype.kind in "SUO":
        check_event_size(sum(len(item) + 6 for item in array.flat), tag)
        tensor.dtype = DT_STRING
        tensor.string_val.extend(
            [item.encode("utf-8") if isinstance(item, str) else bytes(item) for item in array.flat]
        )
        return bytes(tensor.SerializeToString())
    dtype = DTYPE_NUMBERS.get(array.dtype.name)
    if dtype is None:
        raise TypeError(
            f"{tag!r}: cannot store an array of dtype {array.dtype} in a tensor summary"
        )
    check_event_size(array.nbytes + 16 * array.ndim + 64, tag)  # before copying or encoding
    tensor.dtype = dtype
    little_endian = array.dtype.newbyteorder("<")
    tensor.tensor_content = np.ascontiguousarray(array, dtype=little_endian).tobytes()
    return bytes(tensor.SerializeToString())


def fill_float_tensor(tensor: Any, array: np.ndarray) -> None:
    """Fill a ``TensorProto`` message as TensorBoard's mesh and PR-curve writers do: ``DT_FLOAT``,
    the array's shape, and its values as float32 in ``float_val`` (not ``tensor_content``)."""
    from .. import proto

    tensor.dtype = proto.DT_FLOAT
    for size in array.shape:
        tensor.tensor_shape.dim.add().size = int(size)
    tensor.float_val.extend(array.astype(np.float32).reshape(-1).tolist())


def tensor_value(tag: str, tensor: bytes, metadata: bytes | None) -> bytes:
    """Serialized ``Summary.Value{tag, tensor, metadata}``; ``metadata=None`` omits it."""
    return encode_value(tag, _TENSOR_FIELD, tensor, metadata)


def as_tensor_array(tensor: Any, tag: str) -> np.ndarray:
    """Convert ``tensor`` as ``tf.convert_to_tensor`` would: NumPy keeps its dtype, Python
    floats become float32, ints int32 (int64 when too large) and strings DT_STRING."""
    if isinstance(tensor, (np.ndarray, np.generic)):
        array = np.asarray(tensor)
    elif isinstance(tensor, (str, bytes)):
        return string_array(tensor, tag)
    else:
        array = as_array(tensor, tag)
        if not hasattr(tensor, "__array__"):
            if array.dtype == np.float64:
                array = array.astype(np.float32)
            elif array.dtype == np.int64 and (
                array.size == 0 or (array.min() >= -(2**31) and array.max() < 2**31)
            ):
                array = array.astype(np.int32)
    if array.dtype.kind in "SUO":
        return string_array(array, tag)
    target = real_dtype(array.dtype)  # bfloat16, float8...: stored as float32
    return array if target is None else array.astype(target)
