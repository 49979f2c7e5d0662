"""Image conversions for summaries: layouts, value rules, grids and TF-exact normalisation.

Layouts (``dataformats``) follow tensorboardX's ``convert_to_HWC``: one letter per array axis,
naming the axes in order, from N (batch), C (channels), H (height), W (width); case-insensitive,
no letter twice. Per rank the letters must be a permutation of ``HW`` (2-D), ``HWC`` (3-D) or
``NCHW`` (4-D), so ``'WH'`` is a transposed gray image and ``'CWH'`` a transposed CHW one.
``to_nhwc`` also takes a permutation of ``NHW``: a batch of gray images. C must be 1 (gray),
2 (gray + alpha), 3 (RGB) or 4 (RGBA). One channel stays gray: it is never expanded to RGB
(tensorboardX triples it). A 4-D layout given to ``to_hwc`` becomes one image through
``make_grid(ncols=8, padding=0)``, which is exactly tensorboardX's grid. Layout functions return
views and keep the dtype; values are converted separately.

Value rules (``to_uint8``), used for every image unless a TF-exact conversion is asked for:

- uint8: unchanged.
- bool: False -> 0, True -> 255.
- float16, float32, float64: the range [0, 1] maps to [0, 255] with rounding half up,
  ``u8 = floor(min(max(x * 255 + 0.5, 0), 255))``, computed in float64 (exact for float16 and
  float32 input); +inf -> 255, -inf -> 0; NaN -> 0 and counted, so the caller can warn.
- Every other integer type: clipped to [0, 255], not scaled.
- Anything else (complex, object, strings): TypeError.

Nothing wraps around: tensorboardX's ``(x * 255).astype(uint8)`` turns 1.5 into 126 and -0.2
into 205.

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

__all__ = [
    "as_image_array",
    "parse_layout",
    "tf1_normalize_image",
    "tf2_convert_image_dtype",
    "to_hwc",
    "to_nhwc",
    "to_uint8",
    "who",
]

_CHANNELS = (1, 2, 3, 4)
_CHUNK = 1 << 18
_LAYOUTS = {2: "HW", 3: "HWC", 4: "NCHW"}
_BATCH_LAYOUTS = {3: "NHW", 4: "NCHW"}


# --------------------------------------------------------------------------- helpers


def as_image_array(data: object) -> np.ndarray:
    """NumPy view of an array-like; torch tensors are detached and moved to the CPU first."""
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, (list, tuple)):
        if not data:
            raise ValueError("expected an array, got an empty sequence")
        arr = np.stack([as_image_array(item) for item in data])
    else:
        detach = getattr(data, "detach", None)
        if callable(detach) and hasattr(data, "cpu"):  # torch.Tensor, without importing torch
            data = detach().cpu()
            if str(getattr(data, "dtype", "")) == "torch.bfloat16":
                data = data.float()  # type: ignore[attr-defined]
        arr = np.asarray(data)
    from .._common.convert import real_dtype  # here: this module also loads on its own (tests)

    target = real_dtype(arr.dtype)  # ml_dtypes (JAX) bfloat16, float8...: read as float32
    return arr if target is None else arr.astype(target)


def who(kind: str, tag: str) -> str:
    return f"{kind} {tag!r}" if tag else kind


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


def parse_layout(dataformats: object, kind: str, tag: str) -> str:
    if not isinstance(dataformats, str):
        raise TypeError(
            f"{who(kind, tag)}: dataformats must be a str such as 'CHW', "
            f"got {type(dataformats).__name__}"
        )
    fmt = dataformats.upper()
    if not fmt or set(fmt) - set("NCHW") or len(set(fmt)) != len(fmt):
        raise ValueError(
            f"{who(kind, tag)}: dataformats {dataformats!r} is not a layout; use each of the "
            "letters N, C, H, W at most once, e.g. 'CHW', 'HWC', 'HW', 'NCHW' or 'NHWC'"
        )
    return fmt


def _layout_error(kind: str, tag: str, fmt: str, shape: tuple[int, ...]) -> str:
    need = f"a {len(fmt)}-D array"
    if "C" in fmt:
        need += " with C in {1, 2, 3, 4}"
    msg = f"{who(kind, tag)}: dataformats {fmt!r} expects {need}, got shape {shape}"
    if len(shape) == len(fmt) and "C" in fmt:
        for alt in ("CHW", "HWC", "NCHW", "NHWC"):
            if len(alt) == len(fmt) and alt != fmt and shape[alt.index("C")] in _CHANNELS:
                return msg + f"; if the channels are on another axis, pass dataformats={alt!r}"
    return msg


def _transpose(
    arr: np.ndarray, fmt: str, layouts: dict[int, str], target: str, kind: str, tag: str
) -> np.ndarray:
    """Transpose ``arr`` (layout ``fmt``) to ``target`` order, checking rank, letters and C."""
    expected = layouts.get(len(fmt))
    if expected is None or set(fmt) != set(expected):
        names = [repr(v) for v in layouts.values()]
        options = ", ".join(names[:-1]) + " or " + names[-1]
        raise ValueError(
            f"{who(kind, tag)}: dataformats {fmt!r} must be a permutation of {options}, "
            f"got shape {arr.shape}"
        )
    if arr.ndim != len(fmt) or ("C" in fmt and arr.shape[fmt.index("C")] not in _CHANNELS):
        raise ValueError(_layout_error(kind, tag, fmt, arr.shape))
    out: np.ndarray = arr.transpose([fmt.index(ch) for ch in target if ch in fmt])
    return out


# --------------------------------------------------------------------------- layouts


def to_hwc(image: Any, dataformats: str = "CHW", *, tag: str = "") -> np.ndarray:
    """One image as ``[H, W, C]`` (a view when possible), keeping its dtype.

    ``HW`` gives ``[H, W, 1]``. A 4-D layout (a permutation of NCHW) is tiled with
    ``make_grid(ncols=8, padding=0)`` as tensorboardX's ``add_image`` does.

    Raises:
      ValueError: the layout is invalid, or the array's rank or channel count does not match it;
        the message names the shape received and the layout expected.
    """
    arr = as_image_array(image)
    fmt = parse_layout(dataformats, "image", tag)
    if len(fmt) == 4:
        from .grid import make_grid  # _grid builds on this module

        batch = _to_nhwc(arr, fmt, "image", tag)
        if batch.shape[0] == 0:
            raise ValueError(f"{who('image', tag)}: empty batch, shape {arr.shape}")
        return make_grid(batch, ncols=8, padding=0)
    hwc = _transpose(arr, fmt, _LAYOUTS, "HWC", "image", tag)
    if hwc.ndim == 2:
        hwc = hwc[:, :, None]
    if hwc.shape[0] < 1 or hwc.shape[1] < 1:
        raise ValueError(f"{who('image', tag)}: H and W must be >= 1, got shape {arr.shape}")
    return hwc


def to_nhwc(images: Any, dataformats: str = "NCHW", *, tag: str = "") -> np.ndarray:
    """A batch of images as ``[N, H, W, C]`` (a view when possible), keeping the dtype.

    ``dataformats`` is a permutation of NCHW, or of NHW for gray images. A list or tuple of
    arrays is stacked first (each in the layout without N).

    Raises:
      ValueError: as ``to_hwc``.
    """
    fmt = parse_layout(dataformats, "images", tag)
    return _to_nhwc(as_image_array(images), fmt, "images", tag)


def _to_nhwc(arr: np.ndarray, fmt: str, kind: str, tag: str) -> np.ndarray:
    nhwc = _transpose(arr, fmt, _BATCH_LAYOUTS, "NHWC", kind, tag)
    if nhwc.ndim == 3:
        nhwc = nhwc[:, :, :, None]
    if nhwc.shape[1] < 1 or nhwc.shape[2] < 1:
        raise ValueError(f"{who(kind, tag)}: H and W must be >= 1, got shape {arr.shape}")
    return nhwc


# --------------------------------------------------------------------------- value rules


def to_uint8(image: Any, *, tag: str = "", floor: bool = False) -> tuple[np.ndarray, int]:
    """Pixels as uint8 per the module's value rules, and the number of NaNs replaced by 0.

    ``floor=True`` converts floats as torch's ``add_image`` does: ``x * 255`` computed in the
    array's own precision (at least float32), clipped to [0, 255] and truncated (tensorboardX
    truncates too, without the clipping). The default rounds to the nearest level.

    Raises:
      TypeError: the dtype is not bool, an integer or a float type.
    """
    arr = as_image_array(image)
    kind = arr.dtype.kind
    if arr.dtype == np.uint8:
        return arr, 0
    if kind not in "buif":
        raise TypeError(
            f"{who('image', tag)}: values must be bool, integer or float, got dtype {arr.dtype}"
        )
    out = np.empty(arr.shape, np.uint8)
    nan_count = 0
    for index in _chunks(arr.shape):
        src, dst = arr[index], out[index]
        if kind == "b":
            np.multiply(src, 255, out=dst, dtype=np.uint8)
        elif kind in "iu":
            info = np.iinfo(arr.dtype)
            np.copyto(dst, np.clip(src, max(0, info.min), min(255, info.max)), casting="unsafe")
        else:
            nans = int(np.count_nonzero(np.isnan(src)))
            nan_count += nans
            if floor:
                v = np.multiply(src, 255, dtype=np.result_type(arr.dtype, np.float32))
            else:
                v = np.multiply(src, 255.0, dtype=np.float64)
                v += 0.5
            if nans:
                np.fmax(v, 0.0, out=v)  # fmax/fmin drop NaN, so NaN -> 0
                np.fmin(v, 255.0, out=v)
            else:
                np.maximum(v, 0.0, out=v)
                np.minimum(v, 255.0, out=v)
            np.copyto(dst, v, casting="unsafe")  # truncation == floor for v >= 0
    return out, nan_count


def tf2_convert_image_dtype(data: Any, *, tag: str = "") -> np.ndarray:
    """``tf.image.convert_image_dtype(data, tf.uint8, saturate=True)``, exactly; same shape.

    Raises:
      TypeError: bool or a non-numeric dtype (TF raises AttributeError for these).
    """
    arr = as_image_array(data)
    dtype = arr.dtype
    if dtype == np.uint8:
        return arr
    if dtype.kind not in "iuf":
        raise TypeError(
            f"{who('image', tag)}: tf.image.convert_image_dtype accepts float and integer "
            f"images, got dtype {dtype}"
        )
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
      TypeError: dtype other than uint8, float16, float32, float64 (TF1 rejects them too).
      ValueError: not 3-D/4-D with C in 1..4, or ``bad_color`` shorter than C.
    """
    arr = as_image_array(data)
    if arr.ndim not in (3, 4) or arr.shape[-1] not in _CHANNELS:
        raise ValueError(
            f"{who('image', tag)}: TF1 image summaries expect [H, W, C] or [N, H, W, C] with "
            f"C in {{1, 2, 3, 4}}, got shape {arr.shape}"
        )
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype.kind != "f" or arr.dtype.itemsize not in (2, 4, 8):  # either byte order
        raise TypeError(
            f"{who('image', tag)}: TF1 image summaries accept uint8, float16, float32 or "
            f"float64, got {arr.dtype}"
        )
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
