"""The reader's result types: one per kind of summary, columns of NumPy arrays.

Every series has ``steps`` (int64) and ``wall_times`` (float64, seconds since the epoch) with
one entry per logged record, in file order; duplicate steps are kept.
:meth:`last_write_wins` gives the view TensorBoard's default (Rust) loader shows: a record at
step ``s`` replaces every earlier record at a step ``>= s``, so the steps left are strictly
increasing and each holds its last write.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ._histograms import NORMAL_HISTOGRAM_BPS, compress_histogram

__all__ = [
    "AudioSeries",
    "HParams",
    "HistogramSeries",
    "ImageSeries",
    "PrCurveSeries",
    "ScalarSeries",
    "TensorSeries",
    "TextSeries",
    "last_write_wins_index",
]

IntArray = npt.NDArray[np.int64]
F64Array = npt.NDArray[np.float64]
_S = TypeVar("_S", bound="_Series")


def last_write_wins_index(steps: IntArray) -> IntArray:
    """Indices of the records TensorBoard's reservoir keeps: those that no later record at a
    step less than or equal to theirs replaces."""
    if steps.size == 0:
        return np.zeros(0, np.int64)
    later_min = np.minimum.accumulate(steps[::-1])[::-1]
    keep = np.ones(steps.size, bool)
    keep[:-1] = steps[:-1] < later_min[1:]
    return np.flatnonzero(keep)


@dataclass(frozen=True)
class _Series:
    steps: IntArray
    wall_times: F64Array

    def __len__(self) -> int:
        return int(self.steps.size)

    def _take(self: _S, idx: IntArray) -> _S:
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray) and value.shape[:1] == self.steps.shape:
                changes[f.name] = value[idx]
            elif isinstance(value, list):
                changes[f.name] = [value[i] for i in idx.tolist()]
        return dataclasses.replace(self, **changes)

    def last_write_wins(self: _S) -> _S:
        """The series as TensorBoard shows it (see the module docstring)."""
        idx = last_write_wins_index(self.steps)
        return self if idx.size == self.steps.size else self._take(idx)


@dataclass(frozen=True)
class ScalarSeries(_Series):
    """Scalars of one (run, tag): ``values`` in float64 (float32 values are exact in it)."""

    values: F64Array


@dataclass(frozen=True)
class HistogramSeries(_Series):
    """Histograms of one (run, tag): per record a float64 ``[k, 3]`` array of
    ``(left, right, count)`` rows, legacy histograms migrated as TensorBoard migrates them."""

    buckets: list[F64Array]

    def percentiles(self, bps: tuple[int, ...] = NORMAL_HISTOGRAM_BPS) -> F64Array:
        """``[n, len(bps)]`` distribution values, computed as TensorBoard's compressor does."""
        out = np.empty((len(self.buckets), len(bps)))
        for i, b in enumerate(self.buckets):
            out[i] = [value for _, value in compress_histogram(b, bps)]
        return out


@dataclass(frozen=True)
class ImageSeries(_Series):
    """Images of one (run, tag): per record the images and the logged size.

    Images are PNG or GIF (video) bytes. With ``decode=True`` a PNG becomes a ``[h, w, c]``
    uint8 array and a GIF its frames, ``[T, h, w, 3]`` uint8 (``[T, h, w, 4]`` RGBA when the
    GIF uses transparency; npsummary and tensorboardX videos never do); other formats stay
    bytes. Frame delays are in the bytes: :func:`npsummary.reader.decode_gif` returns them.
    """

    widths: IntArray
    heights: IntArray
    images: list[list[Any]]


@dataclass(frozen=True)
class AudioSeries(_Series):
    """Audio of one (run, tag): per record the clips (WAV bytes, or ``[frames, channels]``
    float32 arrays with ``decode=True``), their labels, and the sample rate (NaN if unknown)."""

    sample_rates: F64Array
    clips: list[list[Any]]
    labels: list[list[str]]


@dataclass(frozen=True)
class TextSeries(_Series):
    """Text of one (run, tag): per record an array of ``str`` of the logged shape (NumPy's
    fixed-width ``str`` dtype, or ``object`` holding ``str`` when fixed width would take over
    four times the text's size; ``.tolist()`` gives the same either way)."""

    texts: list[npt.NDArray[Any]]


@dataclass(frozen=True)
class PrCurveSeries(_Series):
    """PR curves of one (run, tag): per record a float64 ``[6, num_thresholds]`` array with rows
    true positives, false positives, true negatives, false negatives, precision, recall."""

    data: list[F64Array]

    @property
    def precision(self) -> list[F64Array]:
        return [d[4] for d in self.data]

    @property
    def recall(self) -> list[F64Array]:
        return [d[5] for d in self.data]

    @property
    def thresholds(self) -> list[F64Array]:
        """Threshold of each column, ``i / (num_thresholds - 1)`` as TensorBoard serves them."""
        return [np.arange(d.shape[1]) / max(d.shape[1] - 1, 1) for d in self.data]


@dataclass(frozen=True)
class TensorSeries(_Series):
    """Raw tensors of one (run, tag) of any other plugin, with the plugin's name and content."""

    plugin_name: str
    plugin_content: bytes
    tensors: list[npt.NDArray[Any]]


@dataclass(frozen=True)
class HParams:
    """The hparams plugin's view of one run (a session).

    Attributes:
        hparams: hyperparameter values (bool, float or str) of the session.
        metrics: the last value of each metric tag named by the experiment config, looked up in
            this run and its sub-runs (``"train/loss"`` for a tag ``loss`` in sub-run
            ``train``); empty without a config.
        group_name: the session group (TF's ``trial_id``), or ``""``.
        start_time_secs: session start, or NaN.
        status: ``"STATUS_UNKNOWN"``, ``"STATUS_SUCCESS"``, ``"STATUS_FAILURE"`` or
            ``"STATUS_RUNNING"`` (from the session end record), or ``""`` if none.
        end_time_secs: session end, or NaN.
    """

    hparams: dict[str, bool | float | str]
    metrics: dict[str, float]
    group_name: str = ""
    start_time_secs: float = float("nan")
    status: str = ""
    end_time_secs: float = float("nan")
