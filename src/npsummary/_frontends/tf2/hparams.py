"""The HParams API's writing half (``hp.hparams``, ``hp.hparams_config``, ``hp.KerasCallback``):
TensorBoard's ``summary_v2`` functions, built by :mod:`npsummary._summaries.hparams` and written
through ``tf.summary``'s default writer (:func:`~npsummary._frontends.tf2.api.write_raw_pb`).

No rank rule of its own (see :mod:`npsummary.hparams`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..._summaries.hparams import HParam, Metric, hparams_config_pb, hparams_pb, session_end_pb
from .api import write_raw_pb

__all__ = ["hparams", "hparams_config", "keras_callback_class"]


def hparams(
    hparams: Mapping[Any, Any], trial_id: str | None = None, start_time_secs: float | None = None
) -> bool:
    """Write the hyperparameter values of one trial (session) at step 0.

    Args:
      hparams: name (or :class:`HParam`) -> value: ``bool``, ``int``, ``float``, ``str`` or a
        NumPy scalar of those.
      trial_id: the session group name; default: a hash of the values, so trials with equal
        values are grouped.
      start_time_secs: the session's start, in seconds since the epoch; default: now.

    Returns:
      Whether it was written (False without a default writer or when recording is off).

    Raises:
      TypeError: a value of another type, or a ``trial_id`` that is no str.
      ValueError: two keys with the same name.
    """
    pb = hparams_pb(hparams, trial_id=trial_id, start_time_secs=start_time_secs)
    return write_raw_pb(pb.SerializeToString(), step=0)


def hparams_config(
    hparams: Iterable[HParam], metrics: Iterable[Metric], time_created_secs: float | None = None
) -> bool:
    """Write the experiment's configuration (usually into the top-level logdir): the
    hyperparameters with their domains and the metrics TensorBoard shows for every session.

    Returns:
      Whether it was written (False without a default writer or when recording is off).
    """
    pb = hparams_config_pb(hparams, metrics, time_created_secs=time_created_secs)
    return write_raw_pb(pb.SerializeToString(), step=0)


_KERAS_CALLBACK: Any = None


def keras_callback_class() -> Any:
    """``KerasCallback``, defined on first use: it subclasses Keras's Callback, so Keras is
    imported only by a user who asks for it."""
    global _KERAS_CALLBACK
    if _KERAS_CALLBACK is not None:
        return _KERAS_CALLBACK
    import os

    import keras  # type: ignore[import-not-found, unused-ignore]

    from .writer import create_file_writer

    class KerasCallback(keras.callbacks.Callback):  # type: ignore[misc, unused-ignore]
        """The HParams API's Keras callback (``hp.KerasCallback``): writes the session's
        hyperparameters when training begins and its end (status SUCCESS) when it ends.

        Args:
          writer: a writer from :func:`npsummary.create_file_writer`, or a logdir to create one.
          hparams: name (or :class:`npsummary.hparams.HParam`) -> value, as for
            :func:`npsummary.hparams.hparams`.
          trial_id: the session group name; default: a hash of the values.

        Like TensorBoard's, one callback serves one ``fit`` call.
        """

        def __init__(self, writer: Any, hparams: Mapping[Any, Any], trial_id: str | None = None):
            super().__init__()
            self._hparams = dict(hparams)
            self._trial_id = trial_id
            hparams_pb(self._hparams, trial_id=trial_id)  # fail now on bad values
            if writer is None:
                raise TypeError("writer must be a `SummaryWriter` or `str`, not None")
            if isinstance(writer, (str, os.PathLike)):
                # Every process, as TensorBoard's callback (npsummary.hparams: no rank rule).
                writer = create_file_writer(writer, rank=0)
            self._writer: Any = writer

        def _get_writer(self) -> Any:
            if self._writer is None:
                raise RuntimeError(
                    "hparams Keras callback cannot be reused across training sessions"
                )
            return self._writer

        def on_train_begin(self, logs: Any = None) -> None:
            with self._get_writer().as_default():
                hparams(self._hparams, trial_id=self._trial_id)

        def on_train_end(self, logs: Any = None) -> None:
            with self._get_writer().as_default():
                pb = session_end_pb()
                write_raw_pb(pb.SerializeToString(), step=0)
            self._writer = None

    _KERAS_CALLBACK = KerasCallback
    return KerasCallback
