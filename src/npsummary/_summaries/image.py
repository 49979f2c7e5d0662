"""Images, in both formats TensorBoard reads (docs/FORMAT.md §4.3). Pixels are PNG-encoded
by :mod:`npsummary._format.png`.

* TF2 (``tf.summary.image``): a DT_STRING tensor ``[width, height, png…]`` with ``images``
  plugin metadata.
* Legacy ``Summary.Image`` (TF1, tensorboardX, torch): height, width, colorspace (channels) and
  the encoded PNG; no metadata. TF1 writes one value per image, tagged ``<tag>/image/<i>``
  (``<tag>/image`` when ``max_outputs`` is 1).

Value rules: :func:`pixels_value` (``SummaryWriter``, legacy form) applies
:func:`npsummary._imaging.pixels.to_uint8` with torch's conversion (uint8 kept, every other dtype
multiplied by 255 in float32, clipped and truncated, NaN drawn as 0) or tensorboardX's (the same
product in the input's precision, wrapping instead of clipping) and, with ``rgb=True``, their
expansion of one channel to RGB;
:func:`tf_image_value` applies ``tf.image.convert_image_dtype`` exactly; :func:`tf1_image_values`
TF1's per-image float normalisation.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._format.png import encode_png
from .._format.wire import encode_value
from .metadata import DT_STRING, PLUGIN_IMAGES, metadata_bytes
from .tensor import tensor_value

__all__ = ["legacy_image_value", "pixels_value", "tf1_image_values", "tf_image_value"]

#: Called as ``report(tag, nan_count)`` when NaN pixels were drawn as 0.
NanReport = Callable[[str, int], None]
_IMAGE_FIELD = 4


def image_value(
    tag: str, width: int, height: int, pngs: list[bytes], *, description: str | None = None
) -> bytes:
    """Serialized TF2 image value: a DT_STRING ``[2 + n]`` tensor ``[width, height, png…]``."""
    from .. import proto

    tensor = proto.TensorProto(dtype=DT_STRING)
    tensor.tensor_shape.dim.add().size = 2 + len(pngs)
    tensor.string_val.extend([str(width).encode(), str(height).encode(), *pngs])
    md = metadata_bytes(PLUGIN_IMAGES, description=description)
    return tensor_value(tag, tensor.SerializeToString(), md)


def legacy_image_value(tag: str, pixels: np.ndarray, description: str | None = None) -> bytes:
    """Serialized ``Summary.Value{tag, image}`` of one ``[H, W, C]`` uint8 image; a
    ``description`` (npsummary's option) goes into metadata holding only that string."""
    from .. import proto

    height, width, channels = pixels.shape
    image = proto.SummaryImage(height=height, width=width, colorspace=channels)
    image.encoded_image_string = encode_png(np.ascontiguousarray(pixels))
    md = None
    if description:
        md = proto.SummaryMetadata(summary_description=description).SerializeToString()
    return encode_value(tag, _IMAGE_FIELD, image.SerializeToString(), md)


def pixels_value(
    tag: str,
    hwc: np.ndarray,
    report_nan: NanReport,
    *,
    description: str | None = None,
    rgb: bool = False,
    wrap: bool = False,
) -> bytes:
    """One ``[H, W, C]`` image (any supported dtype) as a serialized ``Summary.Image`` value,
    as torch writes it (``float32(x) * 255`` clipped and truncated) or, with ``wrap``, as
    tensorboardX writes it (``(x * 255.0).astype(uint8)``, wrapping; see
    :func:`npsummary._imaging.pixels.to_uint8`); with ``rgb``, one channel repeated into three
    (their ``convert_to_HWC`` and ``make_grid`` do)."""
    from .._imaging.pixels import to_uint8

    pixels, nan_count = to_uint8(hwc, tag=tag, floor=True, wrap=wrap)
    if nan_count:
        report_nan(tag, nan_count)
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if rgb and pixels.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    return legacy_image_value(tag, pixels, description)


def tf_image_value(
    tag: str, images: np.ndarray, max_outputs: int, *, description: str | None = None
) -> bytes:
    """``tf.summary.image`` of a checked ``[k, h, w, c]`` batch: the first ``max_outputs``
    images are converted with ``convert_image_dtype`` and PNG-encoded; width and height come
    from the full shape."""
    from .._imaging.pixels import tf2_convert_image_dtype

    _, height, width, _ = images.shape
    if height < 1 or width < 1:
        pngs: list[bytes] = []
    else:
        pngs = [
            encode_png(tf2_convert_image_dtype(image, tag=tag)) for image in images[:max_outputs]
        ]
    return image_value(tag, width, height, pngs, description=description)


def tf1_image_values(tag: str, images: np.ndarray, max_outputs: int) -> list[bytes]:
    """``tf.compat.v1.summary.image`` of a checked ``[k, h, w, c]`` batch (uint8 or float, at
    least 1x1): one legacy value per image; uint8 is stored as is, floats are normalised per
    image as TF1 does."""
    from .._imaging.pixels import tf1_normalize_image

    values = []
    for i in range(min(max_outputs, images.shape[0])):
        pixels = images[i] if images.dtype == np.uint8 else tf1_normalize_image(images[i], tag=tag)
        tagged = f"{tag}/image/{i}" if max_outputs > 1 else f"{tag}/image"
        values.append(legacy_image_value(tagged, pixels))
    return values
