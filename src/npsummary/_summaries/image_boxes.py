"""An image with bounding boxes in ``Summary.Image``, as torch's ``add_image_with_boxes`` writes.

The image is ``CHW`` by default (or ``HWC``, ``HW``, any permutation named by
``dataformats``); gray is repeated to RGB as torch does. Values follow torch: uint8 is kept,
anything else is multiplied by 255 in float32, clipped to [0, 255] and truncated; NaN is drawn
as 0 and reported. tensorboardX's form (its flavour of the writer) multiplies in the input's
precision and wraps instead of clipping
(:func:`npsummary._imaging.pixels.tensorboardx_to_uint8`). Boxes are drawn by
:mod:`npsummary._imaging.boxes`, then the image is resized by ``rescale``. Like torch,
``Summary.Image`` records the height and width *before* rescaling and ``colorspace`` is the
channel count (3, or 4 for RGBA).

Format notes: docs/FORMAT.md §4.3.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._common.convert import as_native_array, as_numeric_array, check_numeric, to_positive_float
from .._format.png import encode_png
from .._imaging.boxes import draw_boxes, resize_lanczos
from .._imaging.dataformats import parse_layout

__all__ = ["image_boxes_value"]

_LAYOUTS = ("CHW", "HW")


def _hwc(tag: str, data: Any, dataformats: Any) -> np.ndarray:
    array = as_native_array(data, tag, "img_tensor")
    layout = parse_layout(dataformats, _LAYOUTS, kind="image", tag=tag, shape=array.shape)
    check_numeric(array, "img_tensor", tag=tag)
    if layout.find("C") < 0:
        array = array.transpose([layout.index(axis) for axis in "HW"])[..., None]
    else:
        array = array.transpose([layout.index(axis) for axis in "HWC"])
    if array.shape[2] not in (1, 3, 4) or 0 in array.shape:
        raise ValueError(
            f"{tag!r}: the image must be non-empty with C = 1, 3 or 4, got {array.shape} (HWC)"
        )
    return np.asarray(array)


def _pixels(array: np.ndarray, report_nan: Callable[[int], None], wrap: bool) -> np.ndarray:
    from .._imaging.pixels import to_uint8

    pixels, nan_count = to_uint8(array, floor=True, wrap=wrap)
    if nan_count:
        report_nan(nan_count)
    if pixels.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    return np.ascontiguousarray(pixels)


#: Largest image ``rescale`` may produce (64 Mi pixels, 8192 x 8192): far beyond what
#: TensorBoard shows, and the bound on the memory a rescale can ask for.
MAX_RESCALED_PIXELS = 1 << 26


def _boxes(tag: str, data: Any) -> np.ndarray:
    boxes = as_numeric_array(data, tag, "box_tensor")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(
            f"{tag!r}: box_tensor must be [N, 4] (xmin, ymin, xmax, ymax), got {boxes.shape}"
        )
    if not np.all(np.isfinite(boxes)):
        raise ValueError(f"{tag!r}: box_tensor contains NaN or infinity")
    return boxes


def _labels(tag: str, labels: Any, count: int) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = [labels]
    if not isinstance(labels, (list, tuple)) or not all(isinstance(x, str) for x in labels):
        raise TypeError(f"{tag!r}: labels must be a list of str, got {labels!r}")
    if len(labels) != count:
        raise ValueError(f"{tag!r}: {len(labels)} labels for {count} boxes; give one per box")
    return list(labels)


def image_boxes_value(
    tag: str,
    img: Any,
    boxes: Any,
    rescale: Any,
    dataformats: Any,
    labels: Any,
    report_nan: Callable[[str, int], None],
    *,
    tensorboardx: bool = False,
) -> bytes:
    """Serialized ``Summary.Value{tag, image}`` with the boxes drawn (see the module docstring);
    ``tensorboardx``: pixels converted as tensorboardX does (wrapping, not clipping).

    Raises:
      TypeError: non-numeric data, labels that are not strings, a non-numeric rescale.
      ValueError: a bad layout or shape, boxes not ``[N, 4]`` or not finite, a label count
        different from the box count, or a rescale that leaves no pixel.
    """
    from .. import proto

    if isinstance(rescale, (bool, np.bool_)):
        raise TypeError(f"{tag!r}: rescale must be a number, got {rescale!r}")
    rescale = to_positive_float(rescale, tag, "rescale")
    box_array = _boxes(tag, boxes)
    names = _labels(tag, labels, len(box_array))
    pixels = _pixels(
        _hwc(tag, img, dataformats), lambda count: report_nan(tag, count), tensorboardx
    )
    height, width, channels = pixels.shape
    scaled_height, scaled_width = height * rescale, width * rescale
    if (
        not (1 <= scaled_height < (1 << 15) + 1 and 1 <= scaled_width < (1 << 15) + 1)
        or scaled_height * scaled_width > MAX_RESCALED_PIXELS
    ):
        raise ValueError(
            f"{tag!r}: rescale {rescale} gives a {scaled_width:.4g}x{scaled_height:.4g} image; "
            f"the result must be 1 to 32768 pixels a side and at most {MAX_RESCALED_PIXELS} "
            "pixels"
        )
    new_height, new_width = int(scaled_height), int(scaled_width)
    drawn = resize_lanczos(draw_boxes(pixels, box_array, names), new_height, new_width)
    value = proto.SummaryValue(tag=tag)
    image = value.image
    image.height, image.width, image.colorspace = height, width, channels
    image.encoded_image_string = encode_png(drawn)
    return bytes(value.SerializeToString())
