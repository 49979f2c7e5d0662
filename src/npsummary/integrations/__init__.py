"""TensorBoard logging for libraries that otherwise need TensorFlow to write it.

Each module stands in for one library's TensorFlow-backed writer, with the same API and the
same event files, and imports its framework (never TensorFlow) only when it is itself imported:

* :mod:`npsummary.integrations.keras` — ``TensorBoard``, Keras 3's callback on any backend, and
  ``KerasCallback`` of the HParams API.
* :mod:`npsummary.integrations.flax` — ``SummaryWriter`` of ``flax.metrics.tensorboard``.
* :mod:`npsummary.integrations.clu` — CLU's ``metric_writers`` (``SummaryWriter``,
  ``create_default_writer`` and the rest of the package).
* :mod:`npsummary.integrations.optuna` — ``TensorBoardCallback`` of optuna-integration.

The HParams API itself is :mod:`npsummary.hparams`. ``import npsummary`` imports none of these.
"""
