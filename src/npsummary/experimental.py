"""``tf.summary.experimental`` without TensorFlow: the per-thread default step."""

from __future__ import annotations

from ._tf2 import get_step, set_step

__all__ = ["get_step", "set_step"]
