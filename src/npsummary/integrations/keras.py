"""Keras 3's ``TensorBoard`` callback without TensorFlow, on any Keras backend.

Change one line::

    # from keras.callbacks import TensorBoard
    from npsummary.integrations.keras import TensorBoard

    model.fit(x, y, validation_split=0.25, callbacks=[TensorBoard("logs", histogram_freq=1)])

:class:`TensorBoard` *is* ``keras.callbacks.TensorBoard`` (a subclass): every argument, every
decision about what to log when (``update_freq``, ``histogram_freq``, ``write_images``,
``write_steps_per_second``, ``embeddings_freq``, the ``train``/``validation`` runs, the
``epoch_*`` and ``evaluation_*_vs_iterations`` tags) is Keras's own code. Only the summary
module Keras writes through (its ``summary`` property, ``tensorflow.summary`` in Keras) is
replaced by npsummary's ``tf.summary`` API, plus the two methods that use TensorFlow or
TensorBoard directly: the model summary (``write_graph``, the Keras model as JSON for the graph
dashboard's conceptual graph) and the projector config for ``embeddings_freq``. A new Keras
release keeps working as long as it writes through ``self.summary``.

:class:`KerasCallback` is the HParams API's Keras callback (``hp.KerasCallback``, also
``npsummary.hparams.KerasCallback``).

Differences from Keras under TensorFlow: tensors of any backend are converted with
``keras.ops.convert_to_numpy``; the profiler's own files are written as Keras writes them, but
not the trace summary ``batch_<n>`` (``tf.summary.trace_export``); ``tf.summary`` calls in the
model's own code write nothing (Keras makes its TensorFlow writer the default during ``fit``;
npsummary creates none); the event files' names carry npsummary's host/pid part.

Every process writes, as Keras does through TensorFlow: no rank rule (``RANK``,
``SLURM_PROCID``, ... are not read). In a job whose processes would log the same values, give
the callback to one process only, as with Keras on TensorFlow. Every file goes into ``log_dir``
through npsummary's storage, for a path and for every URL logdir (``file://``, ``memory://``,
``s3://``, ``gs://``, ...): the event files, ``projector_config.pbtxt`` and the
``embeddings_freq`` weights ``train/keras_embedding.ckpt-<epoch>.weights.h5`` (made in memory for
a URL); nothing is created outside it. Keras's profiler writes through the backend's own
profiler, which knows local paths (JAX raises for a URL it cannot write).
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Mapping
from typing import Any

import keras  # type: ignore[import-not-found, unused-ignore]

import npsummary
from npsummary import hparams as hp

from ._private import every_process_writer, local_logdir, write_run_file

__all__ = ["KerasCallback", "TensorBoard", "keras_model_summary"]

# The HParams API's Keras callback lives with the HParams API (one class, two names).
KerasCallback = hp.KerasCallback

_EMBEDDING_TENSOR = "layer_with_weights-0/embeddings/.ATTRIBUTES/VARIABLE_VALUE"


def _numpy(data: Any) -> Any:
    """A backend tensor or Keras variable as NumPy; other data unchanged."""
    if isinstance(data, (int, float, str, bytes)) or data is None:
        return data
    if isinstance(data, keras.Variable) or keras.ops.is_tensor(data):
        return keras.ops.convert_to_numpy(data)
    return data


class _Summary:
    """The ``tf.summary`` functions Keras's callback calls, writing through npsummary."""

    create_file_writer = staticmethod(every_process_writer)
    record_if = staticmethod(npsummary.record_if)
    experimental = npsummary.experimental

    @staticmethod
    def scalar(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
        return npsummary.scalar(name, _numpy(data), _numpy(step), description)

    @staticmethod
    def histogram(
        name: str,
        data: Any,
        step: Any = None,
        buckets: int | None = None,
        description: str | None = None,
    ) -> bool:
        return npsummary.histogram(name, _numpy(data), _numpy(step), buckets, description)

    @staticmethod
    def image(
        name: str,
        data: Any,
        step: Any = None,
        max_outputs: int = 3,
        description: str | None = None,
    ) -> bool:
        return npsummary.image(name, _numpy(data), _numpy(step), max_outputs, description)

    @staticmethod
    def text(name: str, data: Any, step: Any = None, description: str | None = None) -> bool:
        return npsummary.text(name, _numpy(data), _numpy(step), description)

    @staticmethod
    def write(
        tag: str, tensor: Any, step: Any = None, metadata: Any = None, name: str | None = None
    ) -> bool:
        return npsummary.write(tag, _numpy(tensor), _numpy(step), metadata, name)

    # No TensorFlow graph or trace exists to write; Keras's callback calls these only for
    # tf.function train steps (TensorFlow backend) and profiling.
    @staticmethod
    def graph(graph_data: Any) -> bool:
        return False

    @staticmethod
    def trace_on(graph: bool = True, profiler: bool = False, profiler_outdir: Any = None) -> None:
        return None

    @staticmethod
    def trace_export(name: str, step: Any = None, profiler_outdir: Any = None) -> bool:
        return False

    @staticmethod
    def trace_off() -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(npsummary, name)


SUMMARY = _Summary()


def keras_model_summary(name: str, data: Any, step: Any = None) -> bool:
    """Write a Keras model's JSON config for TensorBoard's conceptual graph (Keras's
    ``keras_model_summary``): a string tensor under plugin ``graph_keras_model``. A model that
    cannot be serialized is skipped with a warning; returns whether it was written."""
    from npsummary import proto

    metadata = proto.SummaryMetadata()
    metadata.plugin_data.plugin_name = "graph_keras_model"
    metadata.plugin_data.content = b"1"
    try:
        json_string = data.to_json()
    except Exception as exc:  # as Keras: a model that cannot serialize must not stop training
        warnings.warn(f"Model failed to serialize as JSON. Ignoring... {exc}", stacklevel=2)
        return False
    with npsummary.experimental.summary_scope(name, "graph_keras_model", [data, step]) as (
        tag,
        _,
    ):
        return npsummary.write(tag=tag, tensor=json_string, step=step, metadata=metadata)


def _quoted(text: str) -> str:
    """A string field as protobuf's text format prints it."""
    from google.protobuf import text_encoding

    escaped: str = text_encoding.CEscape(text.encode("utf-8"), as_utf8=False)
    return '"' + escaped + '"'


class TensorBoard(keras.callbacks.TensorBoard):  # type: ignore[misc, unused-ignore]
    """``keras.callbacks.TensorBoard`` writing through npsummary: same arguments, same files.

    See ``keras.callbacks.TensorBoard`` for the arguments; ``profile_batch`` works where Keras
    profiles without TensorFlow (the JAX backend on Python >= 3.12).
    """

    @property
    def summary(self) -> Any:
        return SUMMARY

    def _write_keras_model_summary(self) -> None:
        """The Keras model as JSON into the train run at step 0 (Functional and Sequential
        models, as Keras does)."""
        with self._train_writer.as_default():
            if self.model.__class__.__name__ in ("Functional", "Sequential"):
                keras_model_summary("keras", self.model, step=0)

    def _configure_embeddings(self) -> None:
        """``projector_config.pbtxt`` in the logdir, with Keras's contents."""
        metadata = self.embeddings_metadata
        remaining = dict(metadata) if isinstance(metadata, Mapping) else None
        blocks = []
        for layer in self.model.layers:
            if isinstance(layer, keras.layers.Embedding):
                lines = [f"  tensor_name: {_quoted(_EMBEDDING_TENSOR)}"]
                path = None
                if isinstance(metadata, str):
                    path = metadata
                elif remaining is not None and layer.name in remaining:
                    path = remaining.pop(layer.name)
                if path is not None:
                    lines.append(f"  metadata_path: {_quoted(str(path))}")
                blocks.append("embeddings {\n" + "\n".join(lines) + "\n}\n")
        if remaining:
            raise ValueError(
                "Unrecognized `Embedding` layer names passed to "
                "`keras.callbacks.TensorBoard` `embeddings_metadata` "
                f"argument: {remaining.keys()}"
            )
        data = "".join(blocks).encode("utf-8")
        write_run_file(self._log_write_dir, "projector_config.pbtxt", data)

    def _log_embeddings(self, epoch: int) -> None:
        """The model's weights as ``train/keras_embedding.ckpt-<epoch>.weights.h5``, as Keras
        saves them, into the logdir's storage (Keras needs TensorFlow's gfile for a URL)."""
        name = f"keras_embedding.ckpt-{epoch}.weights.h5"
        local = local_logdir(self._log_write_dir)
        if local is not None:
            self.model.save_weights(os.path.join(local, "train", name))
        else:
            write_run_file(self._log_write_dir, f"train/{name}", _weights_h5(self.model))


def _weights_h5(model: Any) -> bytes:
    """The ``.weights.h5`` file ``model.save_weights`` writes, made in memory: for a URL Keras
    would write it to a local temporary file first, and npsummary creates none outside the
    logdir."""
    try:
        from keras.src.saving import saving_lib  # type: ignore[import-not-found, unused-ignore]

        buffer = io.BytesIO()
        store = saving_lib.H5IOStore(buffer, mode="w")
        saving_lib._save_state(
            model, weights_store=store, assets_store=None, inner_path="", visited_saveables=set()
        )
        store.close()
    except (ImportError, AttributeError, TypeError) as exc:  # a Keras without these internals
        raise RuntimeError(
            f"embeddings_freq on a URL logdir needs Keras's in-memory weights file "
            f"(keras.src.saving.saving_lib.H5IOStore), which Keras {keras.__version__} lacks: "
            f"{exc}; log to a local directory instead"
        ) from exc
    return buffer.getvalue()
