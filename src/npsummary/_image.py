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

Grids: ``make_grid`` tiles ``[N, H, W, C]`` like torchvision (row-major, ``min(ncols, N)``
columns, ``padding`` pixels around and between tiles, filled with ``pad_value``).
``kernel_grid`` and ``feature_map_grid`` draw conv filters and activations as grids of tiles,
each min-max normalised to [0, 1] by default (``normalize='tile'``); a constant tile becomes 0.5
(gray 128) and non-finite values are left out of the min-max (NaN is drawn as 0, +inf as 255).
Their results go through ``to_uint8``.

Elementwise conversions work through the array in chunks of about 256 Ki elements, so temporaries
stay small whatever the image size.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

_CHANNELS = (1, 2, 3, 4)
_CHUNK = 1 << 18
_LAYOUTS = {2: "HW", 3: "HWC", 4: "NCHW"}
_BATCH_LAYOUTS = {3: "NHW", 4: "NCHW"}
_NORMALIZE = ("tile", "filter", "layer", "none")


# --------------------------------------------------------------------------- helpers


def _as_array(data: object) -> np.ndarray:
    """NumPy view of an array-like; torch tensors are detached and moved to the CPU first."""
    if isinstance(data, np.ndarray):
        arr = data
    elif isinstance(data, (list, tuple)):
        if not data:
            raise ValueError("expected an array, got an empty sequence")
        arr = np.stack([_as_array(item) for item in data])
    else:
        detach = getattr(data, "detach", None)
        if callable(detach) and hasattr(data, "cpu"):  # torch.Tensor, without importing torch
            data = detach().cpu()
            if str(getattr(data, "dtype", "")) == "torch.bfloat16":
                data = data.float()  # type: ignore[attr-defined]
        arr = np.asarray(data)
    if arr.dtype.kind == "V" and arr.dtype.name.startswith(("bfloat16", "float8", "float4")):
        arr = arr.astype(np.float32)  # ml_dtypes (JAX) low-precision floats
    return arr


def _who(kind: str, tag: str) -> str:
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


def _parse_layout(dataformats: object, kind: str, tag: str) -> str:
    if not isinstance(dataformats, str):
        raise TypeError(
            f"{_who(kind, tag)}: dataformats must be a str such as 'CHW', "
            f"got {type(dataformats).__name__}"
        )
    fmt = dataformats.upper()
    if not fmt or set(fmt) - set("NCHW") or len(set(fmt)) != len(fmt):
        raise ValueError(
            f"{_who(kind, tag)}: dataformats {dataformats!r} is not a layout; use each of the "
            "letters N, C, H, W at most once, e.g. 'CHW', 'HWC', 'HW', 'NCHW' or 'NHWC'"
        )
    return fmt


def _layout_error(kind: str, tag: str, fmt: str, shape: tuple[int, ...]) -> str:
    need = f"a {len(fmt)}-D array"
    if "C" in fmt:
        need += " with C in {1, 2, 3, 4}"
    msg = f"{_who(kind, tag)}: dataformats {fmt!r} expects {need}, got shape {shape}"
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
            f"{_who(kind, tag)}: dataformats {fmt!r} must be a permutation of {options}, "
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
    arr = _as_array(image)
    fmt = _parse_layout(dataformats, "image", tag)
    if len(fmt) == 4:
        batch = _to_nhwc(arr, fmt, "image", tag)
        if batch.shape[0] == 0:
            raise ValueError(f"{_who('image', tag)}: empty batch, shape {arr.shape}")
        return make_grid(batch, ncols=8, padding=0)
    hwc = _transpose(arr, fmt, _LAYOUTS, "HWC", "image", tag)
    if hwc.ndim == 2:
        hwc = hwc[:, :, None]
    if hwc.shape[0] < 1 or hwc.shape[1] < 1:
        raise ValueError(f"{_who('image', tag)}: H and W must be >= 1, got shape {arr.shape}")
    return hwc


def to_nhwc(images: Any, dataformats: str = "NCHW", *, tag: str = "") -> np.ndarray:
    """A batch of images as ``[N, H, W, C]`` (a view when possible), keeping the dtype.

    ``dataformats`` is a permutation of NCHW, or of NHW for gray images. A list or tuple of
    arrays is stacked first (each in the layout without N).

    Raises:
      ValueError: as ``to_hwc``.
    """
    fmt = _parse_layout(dataformats, "images", tag)
    return _to_nhwc(_as_array(images), fmt, "images", tag)


def _to_nhwc(arr: np.ndarray, fmt: str, kind: str, tag: str) -> np.ndarray:
    nhwc = _transpose(arr, fmt, _BATCH_LAYOUTS, "NHWC", kind, tag)
    if nhwc.ndim == 3:
        nhwc = nhwc[:, :, :, None]
    if nhwc.shape[1] < 1 or nhwc.shape[2] < 1:
        raise ValueError(f"{_who(kind, tag)}: H and W must be >= 1, got shape {arr.shape}")
    return nhwc


def make_grid(
    nhwc: np.ndarray, ncols: int = 8, padding: int = 2, pad_value: float = 0
) -> np.ndarray:
    """Tile ``[N, H, W, C]`` into one ``[H', W', C]`` image of the same dtype.

    Row-major, ``min(ncols, N)`` columns and ``ceil(N / columns)`` rows; ``padding`` pixels of
    ``pad_value`` around and between tiles (torchvision's ``make_grid``; with ``padding=0`` it is
    tensorboardX's). Empty cells of the last row are ``pad_value`` too.
    """
    arr = _as_array(nhwc)
    if arr.ndim != 4 or arr.shape[0] < 1:
        raise ValueError(f"make_grid expects a non-empty [N, H, W, C] array, got shape {arr.shape}")
    for name, value, low in (("ncols", ncols, 1), ("padding", padding, 0)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"make_grid: {name} must be an int >= {low}, got {value!r}")
    try:
        fill = np.array(pad_value, dtype=arr.dtype)
    except (OverflowError, ValueError, TypeError) as exc:
        raise ValueError(f"make_grid: pad_value {pad_value!r} does not fit {arr.dtype}") from exc
    n, h, w, c = arr.shape
    cols = min(int(ncols), n)
    rows = -(-n // cols)
    p = int(padding)
    canvas = np.empty((rows * (h + p) + p, cols * (w + p) + p, c), arr.dtype)
    canvas[...] = fill
    for r in range(rows):
        k = min(cols, n - r * cols)
        top = r * (h + p) + p
        # The k tiles of this row, seen as [H, k, W + p, C] inside the canvas.
        band = canvas[top : top + h, p : p + k * (w + p)].reshape(h, k, w + p, c)
        band[:, :, :w] = arr[r * cols : r * cols + k].transpose(1, 0, 2, 3)
    return canvas


# --------------------------------------------------------------------------- value rules


def to_uint8(image: Any, *, tag: str = "") -> tuple[np.ndarray, int]:
    """Pixels as uint8 per the module's value rules, and the number of NaNs replaced by 0.

    Raises:
      TypeError: the dtype is not bool, an integer or a float type.
    """
    arr = _as_array(image)
    kind = arr.dtype.kind
    if arr.dtype == np.uint8:
        return arr, 0
    if kind not in "buif":
        raise TypeError(
            f"{_who('image', tag)}: values must be bool, integer or float, got dtype {arr.dtype}"
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
    arr = _as_array(data)
    dtype = arr.dtype
    if dtype == np.uint8:
        return arr
    if dtype.kind not in "iuf":
        raise TypeError(
            f"{_who('image', tag)}: tf.image.convert_image_dtype accepts float and integer "
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
    arr = _as_array(data)
    if arr.ndim not in (3, 4) or arr.shape[-1] not in _CHANNELS:
        raise ValueError(
            f"{_who('image', tag)}: TF1 image summaries expect [H, W, C] or [N, H, W, C] with "
            f"C in {{1, 2, 3, 4}}, got shape {arr.shape}"
        )
    if arr.dtype == np.uint8:
        return arr
    if arr.dtype not in (np.float16, np.float32, np.float64):
        raise TypeError(
            f"{_who('image', tag)}: TF1 image summaries accept uint8, float16, float32 or "
            f"float64, got {arr.dtype}"
        )
    channels = arr.shape[-1]
    bad = np.asarray(bad_color)
    if bad.ndim != 1 or bad.shape[0] < channels or bad.dtype.kind not in "iu":
        raise ValueError(
            f"{_who('image', tag)}: bad_color must be a 1-D integer sequence of length "
            f">= {channels}, got {bad_color!r}"
        )
    if bad.min() < 0 or bad.max() > 255:
        raise ValueError(f"{_who('image', tag)}: bad_color must be in 0..255, got {bad_color!r}")
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


# --------------------------------------------------------------------------- grids


def _normalize_groups(values: np.ndarray, groups: int, mode: str) -> np.ndarray:
    """Min-max normalise each of ``groups`` equal consecutive parts of ``values`` to [0, 1]."""
    if mode == "none":
        return values
    flat = values.astype(np.float64).reshape(groups if mode != "layer" else 1, -1)
    finite = np.isfinite(flat)
    lo = np.where(finite, flat, np.inf).min(axis=1, keepdims=True)
    hi = np.where(finite, flat, -np.inf).max(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        # Halved so that hi - lo cannot overflow for weights near the float64 limits.
        half_lo = lo / 2
        span = hi / 2 - half_lo
        ok = np.isfinite(span) & (span > 0)
        scaled = (flat / 2 - np.where(ok, half_lo, 0.0)) / np.where(ok, span, 0.5)
    # Constant (or all non-finite) groups are drawn mid-gray; non-finite values keep their
    # sign as +-inf (-> 255 / 0) and NaN stays NaN (-> 0).
    scaled = np.where(ok | ~finite, scaled, 0.5)
    return scaled.reshape(values.shape)


def _check_normalize(normalize: str, allowed: tuple[str, ...]) -> None:
    if normalize not in allowed:
        raise ValueError(f"normalize must be one of {allowed}, got {normalize!r}")


def _grid_uint8(tiles: np.ndarray, ncols: int, padding: int, pad_value: float) -> np.ndarray:
    return to_uint8(make_grid(tiles, ncols, padding, pad_value))[0]


def kernel_grid(
    weights: Any,
    layout: str = "HWIO",
    *,
    ncols: int | None = None,
    padding: int = 1,
    normalize: str = "tile",
    rgb: bool | None = None,
    pad_value: float = 0.0,
    tag: str = "",
) -> np.ndarray:
    """Conv filters of one layer as a single uint8 image ``[H, W, C]``.

    Args:
      weights: 4-D kernel; ``layout`` names its axes with O (out), I (in), H, W: ``'HWIO'``
        (TF/Keras ``[kh, kw, in, out]``), ``'OIHW'`` (PyTorch) or any other permutation.
      ncols: grid columns; default: the input-channel count for gray tiles (so row r is output
        filter r and column c input channel c; ``ceil(sqrt(out))`` if in == 1), and
        ``ceil(sqrt(out))`` for RGB tiles.
      padding, pad_value: space between tiles and its value, on the normalised [0, 1] scale
        (in the weights' own units with ``normalize='none'``).
      normalize: ``'tile'`` (min-max per tile), ``'filter'`` (per output filter, across its
        input channels), ``'layer'`` (one min-max for all weights) or ``'none'`` (weights are
        taken as [0, 1] values). A constant tile/filter/layer becomes 0.5.
      rgb: draw each output filter as one RGB tile from its three input channels. Default: when
        the layer has exactly 3 input channels (a first layer over RGB images); otherwise every
        (out, in) slice is its own gray tile, in order out-major.
    """
    arr = _as_array(weights)
    if not isinstance(layout, str) or sorted(layout.upper()) != sorted("OIHW"):
        raise ValueError(
            f"{_who('kernel', tag)}: layout must be a permutation of 'OIHW' such as 'HWIO' or "
            f"'OIHW', got {layout!r}"
        )
    fmt = layout.upper()
    if arr.ndim != 4:
        raise ValueError(
            f"{_who('kernel', tag)}: layout {fmt!r} expects a 4-D array "
            f"[{', '.join({'O': 'out', 'I': 'in', 'H': 'kh', 'W': 'kw'}[c] for c in fmt)}], "
            f"got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{_who('kernel', tag)}: empty kernel, shape {arr.shape}")
    if arr.dtype.kind not in "buif":
        raise TypeError(f"{_who('kernel', tag)}: weights must be numeric, got dtype {arr.dtype}")
    _check_normalize(normalize, _NORMALIZE)
    oihw = arr.transpose([fmt.index(c) for c in "OIHW"])
    n_out, n_in, kh, kw = oihw.shape
    if rgb is None:
        rgb = n_in == 3
    if rgb and n_in != 3:
        raise ValueError(f"{_who('kernel', tag)}: rgb=True needs 3 input channels, got {n_in}")
    if rgb:
        tiles = oihw.transpose(0, 2, 3, 1)  # [out, kh, kw, 3]
        groups = n_out
        default_cols = math.ceil(math.sqrt(n_out))
    else:
        tiles = oihw.reshape(n_out * n_in, kh, kw, 1)
        groups = n_out * n_in if normalize == "tile" else n_out
        default_cols = n_in if n_in > 1 else math.ceil(math.sqrt(n_out))
    if normalize == "filter":
        groups = n_out
    tiles = _normalize_groups(tiles, groups, normalize)
    return _grid_uint8(tiles, default_cols if ncols is None else ncols, padding, pad_value)


def feature_map_grid(
    activations: Any,
    dataformats: str = "NHWC",
    *,
    sample: int = 0,
    ncols: int | None = None,
    padding: int = 1,
    normalize: str = "tile",
    pad_value: float = 0.0,
    tag: str = "",
) -> np.ndarray:
    """One sample's channels as a grid of gray tiles, uint8 ``[H, W, 1]``.

    Args:
      activations: 4-D (``dataformats`` a permutation of NCHW, e.g. ``'NHWC'`` or ``'NCHW'``) or
        3-D for a single sample (a permutation of CHW); any number of channels.
      sample: which batch element to draw (ignored for 3-D input).
      ncols: grid columns, default ``ceil(sqrt(C))``.
      normalize: ``'tile'`` (min-max per channel, the default), ``'layer'`` (one min-max over
        the sample) or ``'none'`` (values taken as [0, 1]); a constant tile becomes 0.5.
    """
    arr = _as_array(activations)
    fmt = _parse_layout(dataformats, "feature map", tag)
    if sorted(fmt) not in (sorted("NCHW"), sorted("CHW")) or arr.ndim != len(fmt):
        raise ValueError(
            f"{_who('feature map', tag)}: dataformats {fmt!r} must be a permutation of 'NCHW' "
            f"(or 'CHW' for one sample) with one letter per axis, got shape {arr.shape}"
        )
    if arr.dtype.kind not in "buif":
        raise TypeError(f"{_who('feature map', tag)}: values must be numeric, got {arr.dtype}")
    _check_normalize(normalize, ("tile", "layer", "none"))
    chw = arr.transpose([fmt.index(c) for c in "NCHW" if c in fmt])
    if chw.ndim == 4:
        if not -chw.shape[0] <= sample < chw.shape[0]:
            raise ValueError(
                f"{_who('feature map', tag)}: sample {sample} out of range for batch of "
                f"{chw.shape[0]}"
            )
        chw = chw[sample]
    if chw.size == 0:
        raise ValueError(f"{_who('feature map', tag)}: empty feature map, shape {arr.shape}")
    channels = chw.shape[0]
    tiles = _normalize_groups(chw[:, :, :, None], channels, normalize)
    cols = math.ceil(math.sqrt(channels)) if ncols is None else ncols
    return _grid_uint8(tiles, cols, padding, pad_value)


# --------------------------------------------------------------------------- matplotlib


def figure_to_hwc(figure: Any, *, rgba: bool = False) -> np.ndarray:
    """Render a matplotlib figure; uint8 ``[H, W, 3]`` (``[H, W, 4]`` with ``rgba=True``).

    Uses the figure's own canvas when it is Agg-based (has ``buffer_rgba``); otherwise draws
    through a temporary ``FigureCanvasAgg`` (matplotlib is imported only then) and gives the
    figure its original canvas back. The figure is not closed.
    """
    canvas = getattr(figure, "canvas", None)
    if canvas is not None and hasattr(canvas, "buffer_rgba"):
        canvas.draw()
        pixels = np.array(canvas.buffer_rgba(), dtype=np.uint8)
    else:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        agg: Any = FigureCanvasAgg(figure)  # attaches itself to the figure
        try:
            agg.draw()
            pixels = np.array(agg.buffer_rgba(), dtype=np.uint8)
        finally:
            if canvas is not None:
                figure.set_canvas(canvas)
    if pixels.ndim != 3 or pixels.shape[2] != 4:
        raise ValueError(f"unexpected Agg buffer shape {pixels.shape}")
    return pixels if rgba else np.ascontiguousarray(pixels[:, :, :3])
