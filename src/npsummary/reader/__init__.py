"""Read TensorBoard event files back into NumPy, without TensorFlow and with nothing sampled.

Every writer's format loads into one model: legacy ``simple_value`` scalars and TF2 scalar
tensors alike, legacy ``histo`` and TF2 histogram tensors alike (TF2, TF1 ``tf.compat.v1``,
tensorboardX, ``torch.utils.tensorboard`` and npsummary files). Records are CRC-checked; a torn
tail (a writer still writing, or killed) is tolerated; a corrupt record, or a value whose content
does not decode (a plugin's data, a PNG, GIF or WAV, an image over :data:`MAX_IMAGE_PIXELS`), is
skipped and counted in :class:`ReadStats`, or raised with ``strict=True``. A logdir's runs are
the directories that hold event files (``"."`` for the logdir itself); a run's files are read in
TensorBoard's order.

    >>> from npsummary import reader
    >>> series = reader.scalars("runs")                 # {(run, tag): ScalarSeries}
    >>> s = series[(".", "loss")]; s.steps, s.values    # int64 and float64 arrays
    >>> df = reader.to_pandas("runs")   # needs pandas: pip install pandas
    >>> live = reader.Reader("runs"); live.scalars()   # again later: reads only what is new
    >>> ddf = reader.to_dask("s3://bucket/sweep")    # read on Dask's workers: needs dask

``runs`` and ``tags`` filters are regular expressions matched with ``re.search``.
"""

from __future__ import annotations

from .._format.gifread import decode_gif
from .._format.pngread import MAX_IMAGE_PIXELS
from ._api import (
    audio,
    events,
    histograms,
    hparams,
    images,
    iter_runs,
    load,
    pr_curves,
    scalars,
    tensors,
    text,
)
from ._dask import to_dask
from ._discover import Run
from ._framing import ReadStats
from ._histograms import NORMAL_HISTOGRAM_BPS, compress_histogram, legacy_to_buckets
from ._io import FileSystem, LocalFileSystem, register_filesystem
from ._live import Reader
from ._logdata import Logdata
from ._series import (
    AudioSeries,
    HistogramSeries,
    HParams,
    ImageSeries,
    PrCurveSeries,
    ScalarSeries,
    TensorSeries,
    TextSeries,
)
from ._storage.options import FetchOptions, configure_fetch
from ._tables import iter_batches, to_arrow, to_pandas, to_parquet
from ._values import KINDS

__all__ = [
    "KINDS",
    "MAX_IMAGE_PIXELS",
    "NORMAL_HISTOGRAM_BPS",
    "AudioSeries",
    "FetchOptions",
    "FileSystem",
    "HParams",
    "HistogramSeries",
    "ImageSeries",
    "LocalFileSystem",
    "Logdata",
    "PrCurveSeries",
    "ReadStats",
    "Reader",
    "Run",
    "ScalarSeries",
    "TensorSeries",
    "TextSeries",
    "audio",
    "compress_histogram",
    "configure_fetch",
    "decode_gif",
    "events",
    "histograms",
    "hparams",
    "images",
    "iter_batches",
    "iter_runs",
    "legacy_to_buckets",
    "load",
    "pr_curves",
    "register_filesystem",
    "scalars",
    "tensors",
    "text",
    "to_arrow",
    "to_dask",
    "to_pandas",
    "to_parquet",
]
