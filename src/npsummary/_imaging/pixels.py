"""Image pixels: array intake and the value rules to uint8.

Layouts (``dataformats``) are parsed by :mod:`npsummary._imaging.dataformats` and applied by
:mod:`npsummary._imaging.layout`. C must be 1 (gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA).

Value rules (``to_uint8``), used for every image unless a TF-exact conversion is asked for:

- uint8: unchanged.
- bool: False -> 0, True -> 255.
- float16, float32, float64: the range [0, 1] maps to [0, 255] with rounding half up,
  ``u8 = floor(min(max(x * 255 + 0.5, 0), 255))``, computed in float64 (exact for float16 and
  float32 input); +inf -> 255, -inf -> 0; NaN -> 0 and counted, so the caller can warn.
- Every other integer type: clipped to [0, 255], not scaled.
- Anything else (complex, object, strings): TypeError.

Nothing wraps around, except in :func:`tensorboardx_to_uint8`, which reproduces tensorboardX's
``(x * 255).astype(uint8)`` (1.5 becomes 126, -0.2 becomes 205) for its flavour of the writer.

TF-exact conversions, checked against TensorFlow 2.21 golden files:

- ``tf2_convert_image_dtype`` is ``tf.image.convert_image_dtype(x, tf.uint8, saturate=True)``, the
  conversion ``tf.summary.image`` applies. Floats: ``trunc(clip(x * 255.5, 0, 255))`` with the
  product rounded in the input's own precision (float16 arithmetic for float16), NaN -> 0.
  Integers are shifted, rounding down, then saturated to [0, 255]: int8 -> ``2 * x``,
  int16 -> ``x >> 7``, int32 -> ``x >> 23``, int64 -> ``x >> 55``, uint16 -> ``x >> 8``,
  uint32 -> ``x >> 24``, uint64 -> ``x >> 56`` (TF has no CPU kernel for the last two; the same
  rule extended). uint8 unchanged. bool raises TypeError, as TF does.
- ``tf1_normalize_image`` is TF1's ImageSummary kernel (``NormalizeFloatImage``), per image: a
  pixel with any non-finite channel is set to ``bad_color[:C]`` and ignored otherwise. min and
  max of the other values are taken in float32. If min < 0: ``scale = 127 / max(|min|, |max|)``,
  ``offset = 128``; else ``scale = 255 / max``, ``offset = 0``; the scale is 0 when its
  denominator is below 1e-6. The scale is computed in float32, then rounded to the input dtype,
  and ``x * scale + offset`` is evaluated in the input dtype and truncated. uint8 is unchanged;
  other dtypes raise TypeError, as TF1 does.

Elementwise conversions work through the array in chunks of about 256 Ki elements, so temporaries
stay small whatever the image size. Grids of images are in :mod:`npsummary._imaging.grid`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from .._common.convert import REAL_NOT_BOOL, UINT8_OR_FLOAT, as_native_array, check_numeric
from .dataformats import who

__all__ = [
    "as_image_array",
    "tensorboardx_to_uint8",
    "tf1_normalize_image",
    "tf2_convert_image_dtype",
    "to_uint8",
]

CHANNELS = (1, 2, 3, 4)
_CHUNK = 1 << 18


# --------------------------------------------------------------------------- helpers


def as_image_array(data: object, tag: str = "") -> np.ndarray:
    """:func:`~npsummary._common.convert.as_native_array` (torch tensors detached, extension
    floats read as float32), after stacking a list or tuple of images into one array."""
    if isinstance(data, (list, tuple)):
        if not data:
            raise ValueError(f"{who('image', tag)}: expected an array, got an empty sequence")
        return np.stack([as_image_array(item, tag) for item in data])
    return as_native_array(data, tag)


def _chunks(shape: tuple[int, ...], limit: int = _CHUNK) -> Iterator[tuple[int | slice, ...]]:
    """Index tuples covering an array of ``shape`` in pieces of at most ``limit`` elements
    (or one innermost row, if longer)."""
    if not shape:
        yield ()
        return
    inner = math.prod(shape[1:])
    if len(shape) == 1 or inner <= limit:
        step = max(1, limit // max(inner, 1))
        for start in range(0, shape[0], step):
            yield (slice(start, min(shape[0], start + step)),)
    else:
        for i in range(shape[0]):
            for rest in _chunks(shape[1:], limit):
                yield (i, *rest)


# --------------------------------------------------------------------------- value rules


def to_uint8(
    image: Any, *, tag: str = "", floor: bool = False, wrap: bool = False
) -> tuple[np.ndarray, int]:
    """Pixels as uint8 per the module's value rules, and the number of NaNs replaced by 0.

    ``floor=True`` converts as torch's ``add_image`` does: every dtype but uint8 (bool and
    integers too) is cast to float32 and multiplied by 255 in float32, then clipped to [0, 255]
    and truncated. An int64 0/1 mask becomes 0/255. ``wrap=True`` (with ``floor``) converts as
    tensorboardX does instead: :func:`tensorboardx_to_uint8`. NaN, which their casts leave
    undefined, is 0 here. The default rounds floats to the nearest level and clips other
    integers unscaled.

    Raises:
      TypeError: the dtype is not bool, an integer or a float type.
    """
    arr = as_image_array(image, tag)
    kind = arr.dtype.kind
    if arr.dtype == np.uint8:
        return arr, 0
    check_numeric(arr, "image", tag=tag or None)
    out = np.empty(arr.shape, np.uint8)
    nan_count = 0
    for index in _chunks(arr.shape):
        src, dst = arr[index], out[index]
        if floor and wrap:
            nan_count += _scale_wrapping(src, dst)
        elif floor:
            nan_count += _scale_float32(src, dst)
        elif kind == "b":
            np.multiply(src, 255, out=dst, dtype=np.uint8)
        elif kind in "iu":
            info = np.iinfo(arr.dtype)
            np.copyto(dst, np.clip(src, max(0, info.min), min(255, info.max)), casting="unsafe")
        else:
            nans = int(np.count_nonzero(np.isnan(src)))
            nan_count += nans
            v = np.multiply(src, 255.0, dtype=np.float64)
            v += 0.5
            _clip_to_uint8(v, dst, nans)
    return out, nan_count


def _scale_float32(src: np.ndarray, dst: np.ndarray) -> int:
    """``dst = uint8(clip(float32(src) * 255, 0, 255))``, NaN as 0; returns the NaN count."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = src.astype(np.float32)
        v *= np.float32(255)
    nans = int(np.count_nonzero(np.isnan(v))) if src.dtype.kind == "f" else 0
    _clip_to_uint8(v, dst, nans)
    return nans


def _clip_to_uint8(v: np.ndarray, dst: np.ndarray, nans: int) -> None:
    """``dst = uint8(clip(v, 0, 255))`` truncated (floor, as ``v >= 0`` then), NaN as 0; ``v``
    is clipped in place, by the NaN-dropping fmax/fmin only where ``nans`` says it must."""
    if nans:
        np.fmax(v, 0.0, out=v)  # fmax/fmin drop NaN, so NaN -> 0
        np.fmin(v, 255.0, out=v)
    else:
        np.maximum(v, 0.0, out=v)
        np.minimum(v, 255.0, out=v)
    np.copyto(dst, v, casting="unsafe")


def tensorboardx_to_uint8(array: np.ndarray) -> tuple[np.ndarray, int]:
    """tensorboardX's ``(x * 255.0).astype(np.uint8)`` for every dtype but uint8, and the NaN
    count: the product is taken in NumPy's promotion of the input with a Python float (float16
    and float32 keep their precision, integers and bool become float64) and cast without
    clipping, so values outside [0, 1] wrap around exactly as NumPy's cast does on this machine
    (1.5 -> 126, -0.2 -> 205 on x86-64). NaN and infinity, undefined for that cast, give 0.
    uint8 is returned unchanged."""
    return to_uint8(array, floor=True, wrap=True)


def _scale_wrapping(src: np.ndarray, dst: np.ndarray) -> int:
    """``dst = uint8(src * 255.0)`` as tensorboardX casts (no clipping), non-finite as 0;
    returns the NaN count."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.multiply(src, 255.0)
        bad = ~np.isfinite(v)
        nans = int(np.count_nonzero(np.isnan(v))) if src.dtype.kind == "f" else 0
        if bad.any():
            v[bad] = 0
        dst[...] = v.astype(np.uint8)
    return nans


def tf2_convert_image_dtype(data: Any, *, tag: str = "") -> np.ndarray:
    """``tf.image.convert_image_dtype(data, tf.uint8, saturate=True)``, exactly; same shape.

    Raises:
      TypeError: bool or a non-numeric dtype (TF raises AttributeError for these).
    """
    arr = as_image_array(data, tag)
    dtype = arr.dtype
    if dtype == np.uint8:
        return arr
    check_numeric(arr, "image", tag=tag or None, accepted=REAL_NOT_BOOL)
    out = np.empty(arr.shape, np.uint8)
    with np.errstate(over="ignore", invalid="ignore"):
        for index in _chunks(arr.shape):
            src, dst = arr[index], out[index]
            if dtype.kind == "f":
                v = np.multiply(src, dtype.type(255.5))  # rounded in the input's precision
                np.fmax(v, 0, out=v)  # TF's cast maps NaN to 0
                np.fmin(v, 255, out=v)
                np.copyto(dst, v, casting="unsafe")
            elif dtype == np.int8:
                np.copyto(dst, np.clip(src, 0, 127), casting="unsafe")
                dst *= 2
            else:
                shift = 8 * dtype.itemsize - (9 if dtype.kind == "i" else 8)
                np.copyto(dst, np.clip(src >> shift, 0, 255), casting="unsafe")
    return out


def tf1_normalize_image(
    data: Any, bad_color: Any = (255, 0, 0, 255), *, tag: str = ""
) -> np.ndarray:
    """TF1 ImageSummary normalisation of ``[H, W, C]`` or ``[N, H, W, C]`` (each image alone).

    Raises:
      TypeError: a dtype other than uint8 or a float (TF1 rejects them too); long double is
        read as float64.
      ValueError: not 3-D/4-D with C in 1..4, or ``bad_color`` shorter than C.
    """
    arr = as_image_array(data, tag)
    if arr.ndim not in (3, 4) or arr.shape[-1] not in CHANNELS:
        raise ValueError(
            f"{who('image', tag)}: TF1 image summaries expect [H, W, C] or [N, H, W, C] with "
            f"C in {{1, 2, 3, 4}}, got shape {arr.shape}"
        )
    if arr.dtype == np.uint8:
        return arr
    check_numeric(arr, "image", tag=tag or None, accepted=UINT8_OR_FLOAT)
    if arr.dtype.itemsize > 8:
        arr = arr.astype(np.float64)  # long double: no TF dtype, read as float64
    channels = arr.shape[-1]
    bad = np.asarray(bad_color)
    if bad.ndim != 1 or bad.shape[0] < channels or bad.dtype.kind not in "iu":
        raise ValueError(
            f"{who('image', tag)}: bad_color must be a 1-D integer sequence of length "
            f">= {channels}, got {bad_color!r}"
        )
    if bad.min() < 0 or bad.max() > 255:
        raise ValueError(f"{who('image', tag)}: bad_color must be in 0..255, got {bad_color!r}")
    bad = bad[:channels].astype(np.uint8)
    batch = arr[None] if arr.ndim == 3 else arr
    out = np.empty(batch.shape, np.uint8)
    for i in range(batch.shape[0]):
        _tf1_normalize_one(batch[i], bad, out[i])
    return out[0] if arr.ndim == 3 else out


def _tf1_normalize_one(image: np.ndarray, bad: np.ndarray, out: np.ndarray) -> None:
    ftype = image.dtype.type
    lo, hi = np.float32(np.inf), np.float32(-np.inf)
    with np.errstate(over="ignore"):  # float64 beyond float32 range becomes +-inf, as in C++
        for index in _chunks(image.shape[:-1], _CHUNK // image.shape[-1]):
            block = image[index]
            finite = block[np.isfinite(block).all(axis=-1)].astype(np.float32)
            if finite.size:
                lo, hi = min(lo, finite.min()), max(hi, finite.max())
    threshold = np.float32(1e-6)
    if lo < 0:
        max_val = max(abs(lo), abs(hi))
        scale = ftype(0 if max_val < threshold else np.float32(127) / max_val)
        offset = ftype(128)
    else:
        scale = ftype(0 if hi < threshold else np.float32(255) / hi)
        offset = ftype(0)
    with np.errstate(over="ignore", invalid="ignore"):
        for index in _chunks(image.shape[:-1], _CHUNK // image.shape[-1]):
            block = image[index]
            bad_pixel = ~np.isfinite(block).all(axis=-1)
            v = block * scale
            v += offset
            v[bad_pixel] = 0
            dst = out[index]
            np.copyto(dst, v, casting="unsafe")  # truncation, like static_cast<uint8>
            dst[bad_pixel] = bad
