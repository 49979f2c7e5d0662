"""``add_image`` / ``add_images`` calls whose pixels must equal tensorboardX's and torch's.

Both libraries multiply every image that is not uint8 by 255 before writing it (an int64 0/1
mask is black and white) and write one channel as RGB. torch multiplies in float32 and clips;
tensorboardX multiplies in the input's precision and does not clip, so values outside [0, 1]
wrap there (the calls in ``TBX_WRAPS``); each flavour of npsummary's writer writes its library's
pixels. ``gen_image_golden.py`` runs the calls with both libraries; ``test_image_golden.py`` with
npsummary's two flavours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.data import pseudo

# tag -> (method, data, dataformats)
CALLS: dict[str, tuple[str, np.ndarray, str]] = {
    "mask_int64_chw": ("add_image", (pseudo((1, 6, 5), 31) > 0).astype(np.int64), "CHW"),
    "mask_int64_hw": ("add_image", (pseudo((6, 5), 32) > 0).astype(np.int64), "HW"),
    "bool_hw": ("add_image", pseudo((4, 7), 33) > 0.2, "HW"),
    "int32_levels": (
        "add_image",
        np.floor(pseudo((3, 4, 4), 34, -1.0, 3.0)).astype(np.int32),
        "CHW",
    ),
    "float64_unit": ("add_image", pseudo((3, 5, 4), 35, 0.0, 1.0), "CHW"),
    "float32_unit_gray": ("add_image", pseudo((5, 4, 1), 36, 0.0, 1.0).astype(np.float32), "HWC"),
    "float16_unit": ("add_image", pseudo((4, 4, 3), 37, 0.0, 1.0).astype(np.float16), "HWC"),
    "float64_beyond": ("add_image", pseudo((3, 4, 5), 38, -0.5, 1.5), "CHW"),
    "uint8_gray_hw": ("add_image", np.floor(pseudo((5, 6), 39, 0.0, 256.0)).astype(np.uint8), "HW"),
    "batch_gray_float": ("add_images", pseudo((3, 1, 4, 5), 40, 0.0, 1.0), "NCHW"),
    "batch_mask_int64": ("add_images", (pseudo((2, 1, 3, 3), 41) > 0).astype(np.int64), "NCHW"),
    "batch_rgb_float32": (
        "add_images",
        pseudo((5, 4, 3, 3), 42, 0.0, 1.0).astype(np.float32),
        "NHWC",
    ),
}
# tensorboardX's (x * 255).astype(uint8) wraps values beyond [0, 255] and rounds float16
# products in float16: here the two libraries' pixels differ.
TBX_WRAPS = frozenset({"int32_levels", "float64_beyond", "float16_unit"})


def run(writer: Any) -> None:
    """Log every call through ``writer``, step 0."""
    for tag, (method, data, dataformats) in CALLS.items():
        getattr(writer, method)(tag, data, 0, dataformats=dataformats)
    writer.flush()


def read_pixels(logdir: str) -> dict[str, dict[str, Any]]:
    """tag -> the Summary.Image fields and its decoded pixels (Pillow) as nested lists."""
    import io
    import os

    from PIL import Image
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    out: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(logdir)):
        if "tfevents" not in name:
            continue
        for record in RawEventFileLoader(os.path.join(logdir, name)).Load():
            for value in Event.FromString(record).summary.value:
                if value.HasField("image"):
                    image = value.image
                    with Image.open(io.BytesIO(image.encoded_image_string)) as png:
                        mode, pixels = png.mode, np.asarray(png).tolist()
                    out[value.tag] = {
                        "height": image.height,
                        "width": image.width,
                        "colorspace": image.colorspace,
                        "mode": mode,
                        "pixels": pixels,
                    }
    return out
