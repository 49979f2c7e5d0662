"""Module-level builder calls whose results must equal ``tensorboardX.summary``'s and
``torch.utils.tensorboard.summary``'s (issue 21, item 6): the inputs their own tests use where
npsummary's writer is stricter (a one-threshold PR curve, ``bins='tensorflow'`` or no values given
to ``histogram``), images, boxed images and videos with values outside [0, 1] (tensorboardX wraps
them, torch clips) and torch's ``tensor_proto``.

``gen_builders_golden.py`` runs the calls with each library's summary module;
``test_builders_golden.py`` with :mod:`npsummary.tensorboardx_summary` and
:mod:`npsummary.torch_summary`. A result is recorded as the ``Summary`` values in TensorBoard's
text format, with every encoded image replaced by its decoded pixels, or as the exception types
it is an instance of.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np

from conformance.data import pseudo

_LABELS = (pseudo((40,), 51) > 0).astype(np.int64)
_PREDICTIONS = pseudo((40,), 52, 0.0, 1.0)
_ROWS = (
    [75.0, 64.0, 21.0, 5.0, 0.0],
    [150.0, 105.0, 18.0, 0.0, 0.0],
    [0.0, 45.0, 132.0, 150.0, 150.0],
    [0.0, 11.0, 54.0, 70.0, 75.0],
    [0.3333333, 0.3786982, 0.5384616, 1.0, 0.0],
    [1.0, 0.8533334, 0.28, 0.0666667, 0.0],
)
_BOXES = np.array([[2, 3, 12, 10], [5, 1, 18, 14]])
_BEYOND = pseudo((3, 16, 20), 53, -0.5, 1.5)

# name -> call(summary module); both libraries' builders take these arguments.
CALLS: dict[str, Callable[[Any], Any]] = {
    "histogram bins tensorflow": lambda m: m.histogram("h", np.arange(5.0), "tensorflow"),
    "histogram list bins tensorflow": lambda m: m.histogram("h", [1, 3, 4, 5, 6], "tensorflow"),
    "histogram empty": lambda m: m.histogram("h", np.zeros(0), 10),
    "histogram empty bins tensorflow": lambda m: m.histogram("h", np.ndarray(0), "tensorflow"),
    "histogram fd": lambda m: m.histogram("h", pseudo((300,), 54), "fd"),
    "pr_curve one threshold": lambda m: m.pr_curve("pr", _LABELS, _PREDICTIONS, 1),
    "pr_curve capped at 127": lambda m: m.pr_curve("pr", _LABELS, _PREDICTIONS, 200),
    "pr_curve_raw one threshold": lambda m: m.pr_curve_raw("pr raw", *_ROWS, 1),
    "pr_curve_raw capped at 127": lambda m: m.pr_curve_raw("pr raw", *_ROWS, 500),
    "image beyond [0, 1]": lambda m: m.image("img", _BEYOND, dataformats="CHW"),
    "image int64 levels": lambda m: m.image(
        "img", np.floor(pseudo((1, 5, 6), 55, -1.0, 3.0)).astype(np.int64), dataformats="CHW"
    ),
    "image_boxes beyond [0, 1]": lambda m: m.image_boxes("boxes", _BEYOND, _BOXES),
    "image_boxes float32 unit": lambda m: m.image_boxes(
        "boxes", pseudo((3, 16, 20), 56, 0.0, 1.0).astype(np.float32), _BOXES
    ),
    "video beyond [0, 1]": lambda m: m.video("vid", pseudo((3, 2, 1, 4, 5), 57, -0.5, 1.5)),
    "video float32 unit": lambda m: m.video(
        "vid", pseudo((2, 3, 1, 4, 4), 58, 0.0, 1.0).astype(np.float32)
    ),
    "video uint8 padded": lambda m: m.video(
        "vid", np.floor(pseudo((3, 2, 1, 3, 3), 59, 0.0, 256.0)).astype(np.uint8)
    ),
}

# torch.utils.tensorboard.summary.tensor_proto(tag, tensor): name -> the array given (torch
# receives torch.from_numpy of it).
TENSORS: dict[str, np.ndarray] = {
    "tensor_proto float32": pseudo((2, 3), 60).astype(np.float32),
    "tensor_proto float64": pseudo((4,), 61),
    "tensor_proto float16": pseudo((3,), 62).astype(np.float16),
    "tensor_proto int32": np.array([1, -2, 3], dtype=np.int32),
    "tensor_proto int64": np.array([[2**40, -5]], dtype=np.int64),
    "tensor_proto uint8": np.array([0, 7, 255], dtype=np.uint8),
    "tensor_proto bool": np.array([True, False, True]),
    "tensor_proto complex64": (pseudo((2,), 63) + 1j * pseudo((2,), 64)).astype(np.complex64),
    "tensor_proto scalar": np.array(0.1, dtype=np.float32),
    "tensor_proto empty": np.zeros(0, dtype=np.float32),
}
_EXCEPTIONS = (TypeError, ValueError, NotImplementedError, AssertionError)


def record(call: Callable[[], Any]) -> Any:
    """``call()``'s result as described in the module docstring."""
    try:
        result = call()
    except _EXCEPTIONS as exc:
        return {"raises": sorted(t.__name__ for t in _EXCEPTIONS if isinstance(exc, t))}
    summaries = result if isinstance(result, tuple) else (result,)
    return [_values(summary) for summary in summaries]


def _values(summary: Any) -> list[Any]:
    from google.protobuf import text_format
    from tensorboard.compat.proto.summary_pb2 import Summary

    out: list[Any] = []
    for value in Summary.FromString(summary.SerializeToString()).value:
        if value.HasField("image"):
            image = value.image
            frames = _frames(image.encoded_image_string, image.colorspace)
            value.image.ClearField("encoded_image_string")
            out.append({"value": text_format.MessageToString(value), "frames": frames})
        else:
            out.append({"value": text_format.MessageToString(value)})
    return out


def _frames(encoded: bytes, channels: int) -> list[Any]:
    """Every frame of a PNG or GIF (a video), decoded; a GIF's frames as RGB cut to the
    recorded channel count (a gray video is written as RGB with equal channels)."""
    from PIL import Image, ImageSequence

    if not encoded:
        return []
    with Image.open(io.BytesIO(encoded)) as image:
        if image.format == "PNG":
            return [np.asarray(image).tolist()]
        frames = [np.asarray(frame.convert("RGB")) for frame in ImageSequence.Iterator(image)]
    return [frame[..., : min(channels, 3)].tolist() for frame in frames]
