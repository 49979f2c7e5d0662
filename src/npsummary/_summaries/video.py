"""Videos as animated GIFs in ``Summary.Image``, as tensorboardX's ``add_video`` writes them.

The input is ``[N, T, C, H, W]``, as :func:`npsummary._imaging.layout.to_ntchw` brings any
permutation named by ``dataformats`` there (in the front end). As in
tensorboardX and torch, the N clips are tiled into one grid per frame: N is padded with black
clips to a power of two, the grid has ``2 ** ((bit_length(N) - 1) // 2)`` rows, and each frame
becomes one GIF frame. Pixel values follow each library exactly: uint8 is divided by 255 in
float32 and multiplied back (so their float rounding is reproduced); torch multiplies floats by
255 in float32, clips and truncates; tensorboardX (its flavour of the writer) multiplies in the
input's precision (float64 once N was padded) and truncates without clipping, so values outside
[0, 1] wrap around. NaN is drawn as 0 and reported. C is 1 (gray), 3 (RGB) or 4 (RGBA, alpha
dropped: GIF has only on/off transparency); ``colorspace`` records C as they do.

The GIF is encoded by :mod:`npsummary._format.gif` (no moviepy); each frame lasts
``int(100 / fps)`` hundredths of a second, what Pillow stores for moviepy's ``1000 / fps`` ms.

Format notes: docs/FORMAT.md §4.3.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._format.gif import encode_gif

__all__ = ["prepare_video", "video_value"]


def _to_uint8(
    video: np.ndarray, padded: bool, report_nan: Callable[[int], None], tensorboardx: bool
) -> np.ndarray:
    # Both libraries first turn uint8 into float32(x) / 255, and padding N concatenates float64
    # zeros. torch then casts to float32, multiplies by 255 and clips; tensorboardX multiplies
    # in the precision it has (float64 once padded) and casts without clipping.
    if video.dtype == np.uint8:
        levels = np.float32(np.arange(256, dtype=np.float32) / np.float32(255.0))
        wide = padded and tensorboardx
        scaled = levels.astype(np.float64) * 255.0 if wide else levels * np.float32(255.0)
        lut = np.clip(scaled, 0, 255).astype(np.uint8)
        return np.asarray(lut[video])
    from .._imaging.pixels import to_uint8

    values = video.astype(np.float64) if padded and tensorboardx else video
    pixels, count = to_uint8(values, floor=True, wrap=tensorboardx)
    if count:
        report_nan(count)
    return pixels


def prepare_video(
    video: np.ndarray, report_nan: Callable[[int], None], *, tensorboardx: bool = False
) -> np.ndarray:
    """uint8 frames ``[T, rows * H, cols * W, C]`` from ``[N, T, C, H, W]``, in tensorboardX's
    and torch's grid, values converted as torch (or, with ``tensorboardx``, as tensorboardX)
    converts them."""
    n, t, c, h, w = video.shape
    padded_n = n if n & (n - 1) == 0 else 1 << n.bit_length()
    pixels = _to_uint8(video, padded_n != n, report_nan, tensorboardx)
    if padded_n != n:
        pad = np.zeros((padded_n - n, t, c, h, w), dtype=np.uint8)
        pixels = np.concatenate((pixels, pad), axis=0)
    rows = 2 ** ((n.bit_length() - 1) // 2)
    cols = padded_n // rows
    grid = pixels.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return np.ascontiguousarray(grid.reshape(t, rows * h, cols * w, c))


def video_value(
    tag: str,
    video: np.ndarray,
    fps: float,
    report_nan: Callable[[str, int], None],
    *,
    tensorboardx: bool = False,
) -> bytes:
    """Serialized ``Summary.Value{tag, image: Summary.Image{GIF}}`` of a checked ``[N, T, C, H,
    W]`` video (:func:`~npsummary._imaging.layout.to_ntchw`) at ``fps`` (> 0) frames per
    second; ``tensorboardx``: pixel values converted as tensorboardX converts them (see the
    module docstring).

    Raises:
      ValueError: a GIF frame of more than 65535 pixels a side.
    """
    from .. import proto

    frames = prepare_video(video, lambda count: report_nan(tag, count), tensorboardx=tensorboardx)
    _t, height, width, channels = frames.shape
    rgb = frames[..., :3] if channels >= 3 else np.repeat(frames, 3, axis=3)
    if height > 0xFFFF or width > 0xFFFF:
        raise ValueError(
            f"{tag!r}: a GIF frame is at most 65535 pixels a side, got {width}x{height}"
        )
    # A GIF stores a frame's delay in 16 bits: a slower rate shows each frame for the longest.
    gif = encode_gif(rgb, int(min(100 / fps, 0xFFFF)))
    value = proto.SummaryValue(tag=tag)
    image = value.image
    image.height, image.width, image.colorspace = height, width, channels
    image.encoded_image_string = gif
    return bytes(value.SerializeToString())
