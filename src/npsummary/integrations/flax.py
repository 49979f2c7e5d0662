"""``flax.metrics.tensorboard.SummaryWriter`` without TensorFlow.

Change one line::

    # from flax.metrics.tensorboard import SummaryWriter
    from npsummary.integrations.flax import SummaryWriter

The class has Flax's constructor and methods (``scalar``, ``image``, ``audio``, ``histogram``,
``text``, ``write``, ``hparams``, ``flush``, ``close``) and writes the files Flax writes through
``tf.summary`` (TF2 tensor summaries): the same tags, steps and values. It needs neither Flax
nor TensorFlow; JAX arrays are accepted wherever Flax takes arrays.

Differences: the event file name ends in ``.v2`` like TensorFlow's but carries npsummary's
host/pid part; ``auto_flush=True`` flushes after each call as Flax does (through npsummary's
writer, whose background thread also flushes every 2 s rather than TensorFlow's 120 s).

Every process writes, as Flax's writer does through TensorFlow: no rank rule (``RANK``,
``SLURM_PROCID``, ``jax.process_index()``, ... are not read); create the writer on
``jax.process_index() == 0`` only where processes would log the same values, as Flax's examples
do. ``log_dir`` may be a path or any URL npsummary writes (``file://``, ``memory://``,
``s3://``, ...); nothing is created outside it. After :meth:`close`, every method but ``close``
raises ``AttributeError``, as Flax's does.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

import npsummary
from npsummary import hparams as hp

from ._private import default_writer_without_flush, every_process_writer

__all__ = ["SummaryWriter"]

# hparams value types Flax passes through unchanged; anything else becomes str(value).
_HPARAM_TYPES = (bool, int, float, str, np.bool_, np.integer, np.floating, np.character)


def _flatten_dict(
    values: Mapping[str, Any], parent_key: str = "", sep: str = "."
) -> dict[str, Any]:
    """Flax's flattening of nested hparams: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    items: list[tuple[str, Any]] = []
    for key, value in values.items():
        new_key = parent_key + sep + key if parent_key else key
        if isinstance(value, dict):
            items.extend(_flatten_dict(value, new_key, sep=sep).items())
            continue
        if not isinstance(value, _HPARAM_TYPES):
            value = str(value)
        items.append((new_key, value))
    return dict(items)


class SummaryWriter:
    """Saves data in event files for TensorBoard (``flax.metrics.tensorboard.SummaryWriter``).

    Args:
      log_dir: directory for the event file (created with its parents).
      auto_flush: flush after every call (default), else only on :meth:`flush`, :meth:`close`
        and by the background thread.
    """

    def __init__(self, log_dir: str | os.PathLike[str], auto_flush: bool = True) -> None:
        log_dir = os.fspath(log_dir)
        self._event_writer = every_process_writer(log_dir)
        self._auto_flush = auto_flush
        self._closed = False

    @contextlib.contextmanager
    def _as_default(self) -> Iterator[None]:
        if self._auto_flush:
            with self._event_writer.as_default():
                yield
        else:
            with default_writer_without_flush(self._event_writer):
                yield

    def close(self) -> None:
        """Close the writer. Final."""
        if not self._closed:
            self._event_writer.close()
            self._closed = True
            del self._event_writer

    def flush(self) -> None:
        self._event_writer.flush()

    def scalar(self, tag: str, value: Any, step: int) -> None:
        """Save a scalar (any number, or a size-1 array), as float32."""
        with self._as_default():
            npsummary.scalar(name=tag, data=value, step=step)

    def image(self, tag: str, image: Any, step: int, max_outputs: int = 3) -> None:
        """Save images given as ``[H,W]``, ``[H,W,1]``, ``[H,W,3]``, ``[K,H,W]``,
        ``[K,H,W,1]`` or ``[K,H,W,3]``; uint8, or floats in ``[0, 1)``. One channel is
        repeated to three, as Flax does."""
        image = np.array(image)
        if image.ndim == 2:
            image = image[np.newaxis, :, :, np.newaxis]
        elif image.ndim == 3:
            # [k, h, w] or [h, w, c]
            if image.shape[-1] in (1, 3):
                image = image[np.newaxis, :, :, :]
            else:
                image = image[:, :, :, np.newaxis]
        if image.ndim >= 1 and image.shape[-1] == 1:
            image = np.repeat(image, 3, axis=-1)
        with self._as_default():
            npsummary.image(name=tag, data=image, step=step, max_outputs=max_outputs)

    def audio(
        self, tag: str, audiodata: Any, step: int, sample_rate: int = 44100, max_outputs: int = 3
    ) -> None:
        """Save audio ``[clips, frames, channels]``, clipped to ``[-1, 1]``, as WAV."""
        audio = np.clip(np.array(audiodata), -1, 1).astype(np.float32)
        with self._as_default():
            npsummary.audio(
                name=tag,
                data=audio,
                sample_rate=sample_rate,
                step=step,
                max_outputs=max_outputs,
                encoding="wav",
            )

    def histogram(self, tag: str, values: Any, step: int, bins: int | None = None) -> None:
        """Save a histogram of the (flattened) values with ``bins`` buckets (default 30)."""
        values = np.reshape(np.array(values), -1)
        with self._as_default():
            npsummary.histogram(name=tag, data=values, step=step, buckets=bins)

    def text(self, tag: str, textdata: str | bytes, step: int) -> None:
        """Save a text summary (rendered as Markdown by TensorBoard)."""
        if not isinstance(textdata, (str, bytes)):
            raise ValueError("`textdata` should be of the type `str` or `bytes`.")
        with self._as_default():
            npsummary.text(name=tag, data=textdata, step=step)

    def write(self, tag: str, tensor: Any, step: int, metadata: Any = None) -> None:
        """Save an arbitrary tensor summary, with optional ``SummaryMetadata`` (a proto or its
        serialized bytes)."""
        with self._as_default():
            npsummary.write(tag=tag, tensor=tensor, step=step, metadata=metadata)

    def hparams(self, hparams: Mapping[str, Any]) -> None:
        """Save hyperparameters (nested dicts are flattened with "."; values of other types
        than bool, int, float and str become strings) for the HParams dashboard."""
        with self._as_default():
            hp.hparams(hparams=_flatten_dict(hparams))
