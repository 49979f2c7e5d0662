"""Text (docs/FORMAT.md §4.4): a DT_STRING tensor of any shape holding UTF-8 bytes, with
``text`` plugin metadata and empty content. TF2, TF1 (``tf.compat.v1.summary.text``),
tensorboardX and torch all write this form. TensorBoard renders a 0-d tensor as Markdown and
1-d or 2-d tensors as a table.
"""

from __future__ import annotations

import numpy as np

from .metadata import PLUGIN_TEXT, metadata_bytes
from .tensor import string_array, tensor_bytes, tensor_value

__all__ = ["string_array", "text_value"]


def text_value(tag: str, strings: np.ndarray, *, description: str | None = None) -> bytes:
    """Serialized text value of an object array of bytes (see :func:`string_array`)."""
    md = metadata_bytes(PLUGIN_TEXT, description=description)
    return tensor_value(tag, tensor_bytes(strings), md)
