"""``tf.summary.experimental`` without TensorFlow: the per-thread default step, summary scopes
and raw ``Summary`` protos."""

from __future__ import annotations

from ._frontends.tf2.api import get_step, set_step, summary_scope, write_raw_pb

__all__ = ["get_step", "set_step", "summary_scope", "write_raw_pb"]
