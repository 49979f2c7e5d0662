"""TensorBoard's HParams API (``tensorboard.plugins.hparams.api``) without TensorFlow.

The same names and the same files as ``from tensorboard.plugins.hparams import api as hp``,
writing through npsummary's default writer::

    from npsummary import hparams as hp
    import npsummary

    HP_LR = hp.HParam("lr", hp.RealInterval(1e-4, 1e-1))
    with npsummary.create_file_writer("logs").as_default():
        hp.hparams_config(hparams=[HP_LR], metrics=[hp.Metric("loss", group="validation")])
    with npsummary.create_file_writer("logs/trial-0").as_default():
        hp.hparams({HP_LR: 0.01}, trial_id="trial-0")
        npsummary.scalar("loss", 0.25, step=1)

Semantics follow ``tensorboard/plugins/hparams/summary_v2.py`` (TensorBoard 2.21):

* :func:`hparams` writes one ``_hparams_/session_start_info`` summary at step 0: the values
  (``bool``, ``int``, ``float``, ``str`` or NumPy scalars; keys are names or :class:`HParam`),
  the group name (``trial_id``, else the SHA-256 of the values as sorted compact JSON) and the
  start time. :func:`hparams_config` writes one ``_hparams_/experiment`` summary declaring the
  hyperparameters, their domains and the metrics. Each returns whether it wrote (TensorFlow
  returns the same as a tensor).
* :func:`hparams_pb` and :func:`hparams_config_pb` return the ``Summary`` protos
  (``npsummary.proto`` classes, wire-compatible with TensorBoard's) without writing.
* Integer hyperparameters are stored as ``DATA_TYPE_FLOAT64``, as TensorBoard does.
* :class:`~npsummary.integrations.keras.KerasCallback` (Keras 3, imported when first used;
  also ``hp.KerasCallback``) writes the session start when
  training begins and a ``_hparams_/session_end_info`` (status SUCCESS) when it ends.
* No rank rule of its own: :func:`hparams` and :func:`hparams_config` write through the default
  writer the caller made (``npsummary.create_file_writer`` writes on rank 0 only unless told
  otherwise); ``KerasCallback`` given a logdir creates a writer on every process, as
  TensorBoard's does with ``tf.summary.create_file_writer``.
"""

from __future__ import annotations

from typing import Any

from ._frontends.tf2.hparams import hparams, hparams_config
from ._frontends.tf2.hparams import keras_callback_class as _keras_callback_class
from ._summaries import metadata as _metadata
from ._summaries.hparams import EXPERIMENT_TAG as EXPERIMENT_TAG
from ._summaries.hparams import SESSION_END_INFO_TAG as SESSION_END_INFO_TAG
from ._summaries.hparams import SESSION_START_INFO_TAG as SESSION_START_INFO_TAG
from ._summaries.hparams import (
    Discrete,
    Domain,
    HParam,
    IntInterval,
    Metric,
    RealInterval,
    hparams_config_pb,
    hparams_pb,
    session_end_pb,
)

# Module attributes outside __all__, kept from the first release (the tags imported above too).
PLUGIN_NAME = _metadata.PLUGIN_HPARAMS

__all__ = [
    "Discrete",
    "Domain",
    "HParam",
    "IntInterval",
    "Metric",
    "RealInterval",
    "hparams",
    "hparams_config",
    "hparams_config_pb",
    "hparams_pb",
    "session_end_pb",
]

# The names are this module's, as TensorBoard's are its api module's: reprs, help() and pickles
# say npsummary.hparams, never the private modules that define them.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name


def __getattr__(name: str) -> Any:
    # Not in __all__: it imports Keras, so `import *` must not reach it.
    if name == "KerasCallback":
        callback: Any = _keras_callback_class()
        callback.__module__ = __name__
        return callback
    raise AttributeError(f"module 'npsummary.hparams' has no attribute {name!r}")
