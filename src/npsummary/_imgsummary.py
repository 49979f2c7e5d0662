"""From pixel arrays to image ``Summary.Value`` bytes: conversions, PNG encoding, proto building.

Images are always written in TensorFlow 2's format: a DT_STRING tensor ``[width, height, png…]``
with ``images`` plugin metadata, which both TensorBoard loaders read natively. The value rules
(uint8 kept, floats in [0, 1] scaled with rounding and clipping, other integers clipped, NaN
drawn as 0) are those of :mod:`npsummary._image`; ``tf_image_value`` instead applies
``tf.image.convert_image_dtype`` exactly, as ``tf.summary.image`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._convert import as_array
from ._format.png import encode_png
from ._image import tf2_convert_image_dtype, to_uint8
from ._summary import image_value

__all__ = ["pixels_value", "tf_image_value"]

#: Called as ``report(tag, nan_count)`` when NaN pixels were drawn as 0.
NanReport = Callable[[str, int], None]


def pixels_value(
    tag: str, hwc: np.ndarray, report_nan: NanReport, *, description: str | None = None
) -> bytes:
    """One ``[H, W, C]`` image (any supported dtype) as a serialized image value."""
    pixels, nan_count = to_uint8(hwc, tag=tag)
    if nan_count:
        report_nan(tag, nan_count)
    height, width = pixels.shape[:2]
    return image_value(tag, width, height, [encode_png(pixels)], description=description)


def tf_image_value(
    tag: str, data: Any, max_outputs: Any, *, description: str | None = None
) -> bytes:
    """``tf.summary.image``: ``data`` is ``[k, h, w, c]``; the first ``max_outputs`` images are
    converted with ``convert_image_dtype`` and PNG-encoded; width and height come from the
    full shape."""
    array = as_array(data, tag)
    if array.ndim != 4 or array.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(
            f"{tag!r}: tf.summary.image expects [k, h, w, c] with c in {{1, 2, 3, 4}}, got "
            f"shape {array.shape}"
        )
    if isinstance(max_outputs, bool) or not isinstance(max_outputs, (int, np.integer)):
        raise TypeError(f"{tag!r}: max_outputs must be an int, got {max_outputs!r}")
    if max_outputs < 0:
        raise ValueError(f"{tag!r}: max_outputs must be >= 0, got {max_outputs}")
    _, height, width, _ = array.shape
    if height < 1 or width < 1:
        pngs: list[bytes] = []
    else:
        pngs = [
            encode_png(tf2_convert_image_dtype(image, tag=tag))
            for image in array[: int(max_outputs)]
        ]
    return image_value(tag, width, height, pngs, description=description)
