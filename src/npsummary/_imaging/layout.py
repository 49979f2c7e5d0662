"""Image layouts: one image as ``[H, W, C]``, a batch as ``[N, H, W, C]``, a video as
``[N, T, C, H, W]``.

``dataformats`` (parsed by :func:`npsummary._imaging.dataformats.parse_layout`) names the
array's axes in order. Per rank the letters must be a permutation of ``HW`` (2-D), ``HWC`` (3-D)
or ``NCHW`` (4-D), so ``'WH'`` is a transposed gray image and ``'CWH'`` a transposed CHW one.
``to_nhwc`` also takes a permutation of ``NHW``: a batch of gray images. One channel stays gray:
it is never expanded to RGB (tensorboardX triples it). A 4-D layout given to ``to_hwc`` becomes
one image through ``make_grid(ncols=8, padding=0)``, which is exactly tensorboardX's grid.
``to_ntchw`` takes a permutation of NTCHW, or of TCHW for one clip (``add_video``).
Layout functions return views and keep the dtype; values are converted separately
(:mod:`npsummary._imaging.pixels`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._common.compat_errors import DataformatsError
from .._common.convert import as_numeric_array
from .dataformats import parse_layout, who
from .grid import make_grid
from .pixels import CHANNELS, as_image_array

__all__ = ["to_hwc", "to_nhwc", "to_ntchw"]

_LAYOUTS = ("HW", "HWC", "NCHW")
_BATCH_LAYOUTS = ("NHW", "NCHW")


def _layout_error(kind: str, tag: str, fmt: str, shape: tuple[int, ...]) -> str:
    need = f"a {len(fmt)}-D array"
    if "C" in fmt:
        need += " with C in {1, 2, 3, 4}"
    msg = f"{who(kind, tag)}: dataformats {fmt!r} expects {need}, got shape {shape}"
    if len(shape) == len(fmt) and "C" in fmt:
        for alt in ("CHW", "HWC", "NCHW", "NHWC"):
            if len(alt) == len(fmt) and alt != fmt and shape[alt.index("C")] in CHANNELS:
                return msg + f"; if the channels are on another axis, pass dataformats={alt!r}"
    return msg


def _transpose(arr: np.ndarray, fmt: str, target: str, kind: str, tag: str) -> np.ndarray:
    """Transpose ``arr`` (the parsed layout ``fmt``) to ``target`` order, checking rank and C."""
    if arr.ndim != len(fmt) or ("C" in fmt and arr.shape[fmt.index("C")] not in CHANNELS):
        raise DataformatsError(_layout_error(kind, tag, fmt, arr.shape))
    out: np.ndarray = arr.transpose([fmt.index(ch) for ch in target if ch in fmt])
    return out


def to_hwc(image: Any, dataformats: str = "CHW", *, tag: str = "") -> np.ndarray:
    """One image as ``[H, W, C]`` (a view when possible), keeping its dtype.

    ``HW`` gives ``[H, W, 1]``. A 4-D layout (a permutation of NCHW) is tiled with
    ``make_grid(ncols=8, padding=0)`` as tensorboardX's ``add_image`` does.

    Raises:
      ValueError: the layout is invalid, or the array's rank or channel count does not match it;
        the message names the shape received and the layout expected.
    """
    arr = as_image_array(image, tag)
    fmt = parse_layout(dataformats, _LAYOUTS, kind="image", tag=tag)
    if len(fmt) == 4:
        batch = _to_nhwc(arr, fmt, "image", tag)
        if batch.shape[0] == 0:
            raise ValueError(f"{who('image', tag)}: empty batch, shape {arr.shape}")
        return make_grid(batch, ncols=8, padding=0)
    hwc = _transpose(arr, fmt, "HWC", "image", tag)
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
    fmt = parse_layout(dataformats, _BATCH_LAYOUTS, kind="images", tag=tag)
    return _to_nhwc(as_image_array(images, tag), fmt, "images", tag)


def _to_nhwc(arr: np.ndarray, fmt: str, kind: str, tag: str) -> np.ndarray:
    nhwc = _transpose(arr, fmt, "NHWC", kind, tag)
    if nhwc.ndim == 3:
        nhwc = nhwc[:, :, :, None]
    if nhwc.shape[1] < 1 or nhwc.shape[2] < 1:
        raise ValueError(f"{who(kind, tag)}: H and W must be >= 1, got shape {arr.shape}")
    return nhwc


_VIDEO = "NTCHW"


def to_ntchw(video: Any, dataformats: Any, *, tag: str) -> np.ndarray:
    """A video (``add_video``'s ``vid_tensor``) as a non-empty ``[N, T, C, H, W]`` array with C
    in {1, 3, 4}, keeping its dtype; ``dataformats`` is a permutation of NTCHW, or of TCHW for
    one clip (then N is 1).

    Raises:
      TypeError: non-numeric data, or ``dataformats`` not a str.
      ValueError: a bad layout, another rank, another C, or an empty video.
    """
    layout = parse_layout(dataformats, (_VIDEO, "TCHW"), kind="video", tag=tag)
    array = as_numeric_array(video, tag, "vid_tensor")
    if len(layout) == 4:
        layout = "N" + layout  # one clip
        array = array[None]
    if array.ndim != 5:
        raise ValueError(f"{tag!r}: a video must be 5-D ({dataformats}), got shape {array.shape}")
    ntchw = array.transpose([layout.index(axis) for axis in _VIDEO])
    if ntchw.shape[2] not in (1, 3, 4):
        raise ValueError(f"{tag!r}: C must be 1, 3 or 4, got shape {ntchw.shape} (NTCHW)")
    if 0 in ntchw.shape:
        raise ValueError(f"{tag!r}: empty video, shape {ntchw.shape} (NTCHW)")
    return np.asarray(ntchw)
