"""Bounding boxes drawn on an image with NumPy, as torch's ``add_image_with_boxes`` draws them.

Each box ``(xmin, ymin, xmax, ymax)`` (pixels, rounded to the nearest integer) is outlined in
red, two pixels wide, covering exactly the pixels Pillow's ``ImageDraw.line(width=2)`` covers
for torch: rows ``ymin - 1 .. ymax + 1`` and columns ``xmin .. xmax``, minus the inside rows
``ymin + 1 .. ymax - 1`` and columns ``xmin + 2 .. xmax - 2`` (a zero-width box is a bar three
pixels wide, as Pillow draws it). Boxes are clipped to the image.

Labels: torch fills a red rectangle at the box's bottom-left corner and writes the label in
black with Pillow's default font. Text needs a font, so when Pillow is installed the text is
drawn with that same font; without Pillow only the red label rectangle is drawn, sized as 5
pixels per character by 8 pixels, Pillow's default-font metrics for typical text.

``rescale`` resizes the finished image with a Lanczos-3 filter (antialiased when shrinking,
as Pillow's ``LANCZOS``); the result matches Pillow's to within rounding, not bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["draw_boxes", "resize_lanczos"]

_RED = (255, 0, 0, 255)
_CHAR_WIDTH, _TEXT_HEIGHT = 5, 8


def _outline(image: np.ndarray, box: tuple[int, int, int, int], color: np.ndarray) -> None:
    left, top, right, bottom = box
    height, width = image.shape[:2]

    def fill(r0: int, r1: int, c0: int, c1: int) -> None:
        r0, r1, c0, c1 = max(r0, 0), min(r1, height), max(c0, 0), min(c1, width)
        if r0 < r1 and c0 < c1:
            image[r0:r1, c0:c1] = color

    if left == right:  # Pillow draws a zero-width box as one 3-pixel-wide vertical bar
        if top == bottom:
            fill(top, top + 1, left, left + 1)
        else:
            fill(top, bottom + 1, left - 1, left + 2)
        return
    fill(top - 1, top + 1, left, right + 1)  # top edge
    fill(bottom, bottom + 2, left, right + 1)  # bottom edge
    fill(top - 1, bottom + 2, left, left + 2)  # left edge
    fill(top - 1, bottom + 2, right - 1, right + 1)  # right edge


def _text_metrics(label: str) -> tuple[int, int, Any]:
    try:
        from PIL import ImageFont
    except ImportError:
        return _CHAR_WIDTH * len(label), _TEXT_HEIGHT, None
    font = ImageFont.load_default()
    left, top, right, bottom = font.getbbox(label)
    return int(right - left), int(bottom - top), font


def _label(image: np.ndarray, left: int, bottom: int, label: str, color: np.ndarray) -> np.ndarray:
    text_width, text_height, font = _text_metrics(label)
    margin = math.ceil(0.05 * text_height)
    height, width = image.shape[:2]
    r0, r1 = max(bottom - text_height - 2 * margin, 0), min(bottom + 1, height)
    c0, c1 = max(left, 0), min(left + text_width + 1, width)
    if r0 < r1 and c0 < c1:
        image[r0:r1, c0:c1] = color
    if font is None:
        return image
    from PIL import Image, ImageDraw

    canvas = Image.fromarray(image)
    ImageDraw.Draw(canvas).text(
        (left + margin, bottom - text_height - margin), label, fill="black", font=font
    )
    return np.array(canvas)


def draw_boxes(image: np.ndarray, boxes: np.ndarray, labels: list[str] | None) -> np.ndarray:
    """A copy of uint8 ``image`` ``[H, W, 3 or 4]`` with ``boxes`` ``[N, 4]`` (xyxy) drawn."""
    out = image.copy()
    color = np.array(_RED[: image.shape[2]], dtype=np.uint8)
    for index, row in enumerate(boxes):
        left, top, right, bottom = (int(np.rint(v)) for v in row)
        _outline(out, (left, top, right, bottom), color)
        if labels is not None and labels[index]:
            out = _label(out, left, bottom, labels[index], color)
    return np.asarray(out)


def _lanczos(x: np.ndarray) -> np.ndarray:
    result = np.sinc(x) * np.sinc(x / 3.0)
    result[np.abs(x) >= 3.0] = 0.0
    return np.asarray(result)


def _taps(source: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Lanczos-3 taps for resampling ``source`` samples to ``size``: the source index and the
    weight of each of an output sample's taps, ``[size, taps]`` each (Pillow's kernel)."""
    scale = source / size
    support = 3.0 * max(scale, 1.0)
    centers = (np.arange(size) + 0.5) * scale
    first = np.maximum(np.floor(centers - support + 0.5).astype(np.int64), 0)
    taps = math.ceil(support) * 2 + 1
    index = first[:, None] + np.arange(taps)[None, :]
    weights = _lanczos((index + 0.5 - centers[:, None]) / max(scale, 1.0))
    last = np.minimum(np.floor(centers + support + 0.5).astype(np.int64), source)
    weights[index >= last[:, None]] = 0.0
    weights /= weights.sum(axis=1, keepdims=True)
    return np.minimum(index, source - 1), weights


# Float64 elements one block of the resampling holds at a time (32 MB): memory stays bounded by
# the uint8 output however large the rescale, instead of several float64 copies of it.
_BLOCK_ELEMENTS = 1 << 22


def resize_lanczos(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """``image`` ``[H, W, C]`` uint8 resized to ``[height, width, C]`` (Lanczos-3).

    Horizontal pass first, rounded to uint8 in between, as Pillow does; each pass runs over
    blocks of rows, accumulating its taps in float64 in the same order as a single pass would.
    """
    if image.shape[:2] == (height, width):
        return image
    source_height, _, channels = image.shape
    columns, column_weights = _taps(image.shape[1], width)
    middle = np.empty((source_height, width, channels), np.uint8)
    step = max(1, _BLOCK_ELEMENTS // max(width * channels, 1))
    for start in range(0, source_height, step):
        stop = min(start + step, source_height)
        rows = image[start:stop].astype(np.float64)
        acc = np.zeros((stop - start, width, channels))
        for tap in range(column_weights.shape[1]):
            acc += rows[:, columns[:, tap], :] * column_weights[None, :, tap, None]
        middle[start:stop] = np.clip(np.rint(acc), 0, 255)
    sources, row_weights = _taps(source_height, height)
    out = np.empty((height, width, channels), np.uint8)
    for start in range(0, height, step):
        stop = min(start + step, height)
        acc = np.zeros((stop - start, width, channels))
        for tap in range(row_weights.shape[1]):
            acc += middle[sources[start:stop, tap]] * row_weights[start:stop, tap, None, None]
        out[start:stop] = np.clip(np.rint(acc), 0, 255)
    return out
