"""Grids of images: batches tiled into one picture, conv filters, feature maps, figures.

``make_grid`` tiles ``[N, H, W, C]`` like torchvision (row-major, ``min(ncols, N)`` columns,
``padding`` pixels around and between tiles, filled with ``pad_value``); with ``padding=0`` and
``ncols=8`` it is tensorboardX's grid. ``kernel_grid`` and ``feature_map_grid`` draw conv
filters and activations as grids of tiles, each min-max normalised to [0, 1] by default
(``normalize='tile'``); a constant tile becomes 0.5 (gray 128) and non-finite values are left
out of the min-max (NaN is drawn as 0, +inf as 255). Their results go through
:func:`npsummary._imaging.pixels.to_uint8`. ``figure_to_hwc`` renders a matplotlib figure through
Agg (matplotlib is imported only then).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._common.convert import check_choice, check_int, check_numeric, is_numeric
from .dataformats import parse_layout, who
from .pixels import as_image_array, to_uint8

__all__ = ["feature_map_grid", "figure_to_hwc", "kernel_grid", "make_grid"]

_NORMALIZE = ("tile", "filter", "layer", "none")


def make_grid(
    nhwc: np.ndarray, ncols: int = 8, padding: int = 2, pad_value: float = 0
) -> np.ndarray:
    """Tile ``[N, H, W, C]`` into one ``[H', W', C]`` image of the same dtype.

    Row-major, ``min(ncols, N)`` columns and ``ceil(N / columns)`` rows; ``padding`` pixels of
    ``pad_value`` around and between tiles (torchvision's ``make_grid``; with ``padding=0`` it is
    tensorboardX's). Empty cells of the last row are ``pad_value`` too.

    Raises:
      TypeError: ``ncols`` or ``padding`` is not an int.
      ValueError: not a non-empty 4-D array, ``ncols < 1``, ``padding < 0``, or ``pad_value``
        does not fit the dtype.
    """
    if nhwc.ndim != 4 or nhwc.shape[0] < 1:
        raise ValueError(
            f"make_grid expects a non-empty [N, H, W, C] array, got shape {nhwc.shape}"
        )
    n, h, w, c = nhwc.shape
    cols = min(check_int(ncols, "ncols", minimum=1), n)
    p = check_int(padding, "padding", minimum=0)
    fill = _pad_fill(pad_value, nhwc.dtype)
    rows = -(-n // cols)
    canvas = np.empty((rows * (h + p) + p, cols * (w + p) + p, c), nhwc.dtype)
    canvas[...] = fill
    for r in range(rows):
        k = min(cols, n - r * cols)
        top = r * (h + p) + p
        # The k tiles of this row, seen as [H, k, W + p, C] inside the canvas.
        band = canvas[top : top + h, p : p + k * (w + p)].reshape(h, k, w + p, c)
        band[:, :, :w] = nhwc[r * cols : r * cols + k].transpose(1, 0, 2, 3)
    return canvas


def _pad_fill(pad_value: object, dtype: np.dtype) -> np.ndarray:
    """``pad_value`` as a 0-d array of ``dtype``, or ValueError if it is not a real number in
    the dtype's range. Checked here rather than left to the cast, which differs across NumPy:
    1.x wraps an out-of-range int (with a DeprecationWarning), 2.x raises OverflowError."""
    try:
        value = np.asarray(pad_value)
    except Exception as exc:
        raise ValueError(f"make_grid: pad_value {pad_value!r} is not a number") from exc
    if value.ndim != 0 or not is_numeric(value.dtype):
        raise ValueError(f"make_grid: pad_value must be a real number, got {pad_value!r}")
    number = value.item()  # a Python int, float or bool: exact comparisons below
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        fits = info.min <= number <= info.max
    elif dtype.kind == "f":
        fits = not math.isfinite(number) or abs(number) <= float(np.finfo(dtype).max)
    else:
        fits = True  # bool: any number is truthy or not
    if not fits:
        raise ValueError(f"make_grid: pad_value {pad_value!r} does not fit {dtype}")
    return value.astype(dtype)


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


def _check_normalize(normalize: Any, allowed: tuple[str, ...], tag: str | None) -> None:
    check_choice(normalize, "normalize", allowed, tag=tag)


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
    oihw = _kernel_as_oihw(as_image_array(weights, tag), layout, tag)
    _check_normalize(normalize, _NORMALIZE, tag or None)
    n_out, n_in, kh, kw = oihw.shape
    if rgb is None:
        rgb = n_in == 3
    if rgb and n_in != 3:
        raise ValueError(f"{who('kernel', tag)}: rgb=True needs 3 input channels, got {n_in}")
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


def _kernel_as_oihw(arr: np.ndarray, layout: object, tag: str) -> np.ndarray:
    """A non-empty numeric 4-D kernel in ``layout`` (a permutation of OIHW), seen as OIHW."""
    if not isinstance(layout, str):  # a ValueError, as it has always been
        raise ValueError(
            f"{who('kernel', tag)}: layout must be a str such as 'HWIO', got {layout!r}"
        )
    fmt = parse_layout(layout, ("OIHW",), kind="kernel", tag=tag, name="layout")
    if arr.ndim != 4:
        raise ValueError(
            f"{who('kernel', tag)}: layout {fmt!r} expects a 4-D array "
            f"[{', '.join({'O': 'out', 'I': 'in', 'H': 'kh', 'W': 'kw'}[c] for c in fmt)}], "
            f"got shape {arr.shape}"
        )
    if arr.size == 0:
        raise ValueError(f"{who('kernel', tag)}: empty kernel, shape {arr.shape}")
    check_numeric(arr, "kernel weights", tag=tag or None)
    oihw: np.ndarray = arr.transpose([fmt.index(c) for c in "OIHW"])
    return oihw


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
    arr = as_image_array(activations, tag)
    fmt = parse_layout(dataformats, ("NCHW", "CHW"), kind="feature map", tag=tag, shape=arr.shape)
    check_numeric(arr, "feature map", tag=tag or None)
    _check_normalize(normalize, ("tile", "layer", "none"), tag or None)
    chw = arr.transpose([fmt.index(c) for c in "NCHW" if c in fmt])
    if chw.ndim == 4:
        sample = check_int(sample, "sample", tag=tag or None)
        if not -chw.shape[0] <= sample < chw.shape[0]:
            raise ValueError(
                f"{who('feature map', tag)}: sample {sample} out of range for batch of "
                f"{chw.shape[0]}"
            )
        chw = chw[sample]
    if chw.size == 0:
        raise ValueError(f"{who('feature map', tag)}: empty feature map, shape {arr.shape}")
    channels = chw.shape[0]
    tiles = _normalize_groups(chw[:, :, :, None], channels, normalize)
    cols = math.ceil(math.sqrt(channels)) if ncols is None else ncols
    return _grid_uint8(tiles, cols, padding, pad_value)


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
