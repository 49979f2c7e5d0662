"""The ``SummaryWriter`` class behind :mod:`npsummary.writer` (its docstring lists the differences
from tensorboardX and torch): the constructor and the scalar/histogram/text/audio methods; the
other methods come from the mixins in this package."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..._common.convert import (
    as_native_array,
    check_int,
    check_text,
    to_float32_range,
)
from ..._core.event_writer import SinkOptions
from ..._sinks.base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink
from .attributes import COMET_DISABLED, AttributeMethods, check_tbx_options
from .images import ImageMethods
from .plugins import PluginMethods
from .scalars import ScalarMethods

if TYPE_CHECKING:
    from ..._common.types import ArrayLike, GlobalStepLike, NonFinitePolicy, ScalarLike
    from ..._core.ranks import Ranks

__all__ = ["SummaryWriter"]


class SummaryWriter(ScalarMethods, AttributeMethods, ImageMethods, PluginMethods):
    """Writes summaries for TensorBoard into an event file in ``logdir``.

    Args:
      logdir: run directory, or an :class:`EventSink` (e.g. ``MemorySink()``) to write elsewhere.
        Default ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``. A URL that fsspec knows
        (``s3://bucket/run``, ``gs://…``, ``memory://…``; ``pip install s3fs``, ``gcsfs``
        or ``adlfs``, which bring fsspec) writes the run there as segment files.
      comment: appended to the default logdir; ignored when ``logdir`` is given.
      purge_step: when resuming a crashed run, hides events with ``step >= purge_step`` that an
        earlier writer left behind (writes ``SessionLog.START`` at that step).
      max_queue: pending events that make the background thread write before ``flush_secs``.
      flush_secs: longest time an event waits in memory before it is written (default 2 s).
      filename_suffix: appended to the event file name.
      write_to_disk: False gives a writer that checks every call and writes nothing.
      log_dir: torch's name for ``logdir`` (give one or the other).
      comet_config: tensorboardX's Comet settings; only a disabled config is accepted.
      rank: this process's global rank; default: detected (``torch.distributed`` if
        initialised, else ``RANK``, ``SLURM_PROCID``, ``OMPI_COMM_WORLD_RANK``, ``PMI_RANK``,
        ``JAX_PROCESS_INDEX``, else jax if imported, else 0).
      ranks: which ranks write. Default: rank 0 only, to ``logdir``; other ranks get a writer
        that accepts every call and writes nothing. ``"all"``: every rank writes the sub-run
        ``<logdir>/rank_<k>``; a list such as ``[0, 3]``: those ranks write their sub-runs.
      kwargs: tensorboardX forwards these to nothing; npsummary refuses them.

    Raises:
      TypeError, ValueError: an argument of the wrong type or value (the same rules as
        ``create_file_writer`` and ``v1.FileWriter``).

    Example::

        with SummaryWriter("runs/exp1") as writer:
            for step in range(100):
                writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(
        self,
        logdir: str | os.PathLike[str] | EventSink | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = DEFAULT_MAX_QUEUE,
        flush_secs: float = DEFAULT_FLUSH_SECS,
        filename_suffix: str = "",
        write_to_disk: bool = True,
        log_dir: str | os.PathLike[str] | None = None,
        comet_config: dict[str, Any] | None = COMET_DISABLED,
        rank: int | None = None,
        ranks: Ranks = None,
        **kwargs: Any,
    ) -> None:
        to_disk = check_tbx_options(write_to_disk, comet_config, kwargs)
        options = SinkOptions.checked(
            max_queue=max_queue, flush_secs=flush_secs, filename_suffix=filename_suffix
        )
        run = self._rank_run(rank, ranks)
        self._setup(logdir, log_dir, comment, purge_step, options, run, to_disk)

    # -- histograms and distributions ------------------------------------------------------------

    def add_histogram(
        self,
        tag: str,
        values: ArrayLike,
        global_step: GlobalStepLike = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
        *,
        nonfinite: NonFinitePolicy = "warn",
        process_group: Any = None,
    ) -> None:
        """Log a histogram of ``values`` (any shape, any real dtype).

        Args:
          tag: the histogram's name.
          values: the data.
          global_step, walltime: as :meth:`add_scalar`.
          bins: ``'tensorflow'`` (default) stands for :attr:`default_bins`, the exponential
            edges ``±1e-12 * 1.1**k``, with the buckets tensorboardX and torch write (empty
            buckets between the first and last non-empty one kept; ``npsummary.v1.histogram``
            writes TF1's collapsed form); an int gives that many equal-width bins, a
            sequence gives explicit edges, and NumPy's rule names (``'auto'``, ``'fd'``, …,
            following the installed NumPy) are accepted, capped at 10,000 bins with a
            :class:`~npsummary.BinCountCappedWarning`.
          max_bins: group adjacent bins to at most this many, as tensorboardX does.
          nonfinite: NaN and ±Inf are left out; ``'warn'`` (once per tag), ``'raise'`` or
            ``'ignore'``.
          process_group: a ``torch.distributed`` process group: log the histogram of the
            values of every rank of the group (each rank passes its own). A ``DTensor`` is
            merged over its own mesh without it. Both are collective calls: every rank of the
            group makes them, in the same order, whether its writer writes or not (see
            docs/guide/sharded-histograms.md). Rules needing global quantiles (``'auto'``,
            ``'fd'``, ``'doane'``, ``'scott'``, ``'stone'``) are refused there.

        Raises:
          TypeError, ValueError: bad input (or non-finite data under ``'raise'``), naming the
            tag; nothing is written.
        """
        from ..._summaries.histogram import legacy_histogram_value, tensorboardx_histogram
        from ..._summaries.nonfinite import check_policy

        tag, step, wall = self._resolve(tag, global_step, walltime)
        policy = check_policy(nonfinite, tag)
        histogram = tensorboardx_histogram(tag, values, bins, max_bins, process_group)
        writer = self._get_writer()
        writer.check_nonfinite(tag, histogram.nonfinite, policy)
        writer.write_values([legacy_histogram_value(tag, histogram)], step, wall)

    def add_histogram_raw(
        self,
        tag: str,
        min: ScalarLike,
        max: ScalarLike,
        num: ScalarLike,
        sum: ScalarLike,
        sum_squares: ScalarLike,
        bucket_limits: ArrayLike,
        bucket_counts: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram from precomputed fields.

        Args:
          tag: the histogram's name.
          min, max, num, sum, sum_squares: the statistics of the data.
          bucket_limits: right edges of the buckets, non-decreasing.
          bucket_counts: finite, non-negative counts, as many as ``bucket_limits``.
          global_step, walltime: as :meth:`add_scalar`.

        Raises:
          TypeError, ValueError: fields of the wrong kind, or lengths, order or counts that
            TensorBoard cannot read, naming the tag.
        """
        from ..._summaries.histogram import raw_histogram_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        value = raw_histogram_value(
            tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts
        )
        self._get_writer().write_values([value], step, wall)

    def add_distribution(
        self,
        tag: str,
        values: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        buckets: int | None = None,
        *,
        description: str | None = None,
        nonfinite: NonFinitePolicy = "warn",
        process_group: Any = None,
    ) -> None:
        """Log ``values`` for TensorBoard's Distributions tab.

        TensorBoard has no separate distribution format: it computes the nine percentile bands
        of that tab from histogram data. This writes ``tf.summary.histogram``'s format, shown in
        both tabs.

        Args:
          tag: the distribution's name.
          values: the data.
          global_step, walltime: as :meth:`add_scalar`.
          buckets: equal-width buckets (default 30).
          description: Markdown shown in TensorBoard.
          nonfinite, process_group: as :meth:`add_histogram`.

        Raises:
          TypeError, ValueError: bad input, naming the tag.
        """
        from ..._summaries.histogram import tf2_histogram_value
        from ..._summaries.nonfinite import check_policy

        tag, step, wall = self._resolve(tag, global_step, walltime)
        policy = check_policy(nonfinite, tag)
        note = check_text(description, "description", tag=tag)
        value, counts = tf2_histogram_value(tag, values, buckets, note, process_group)
        writer = self._get_writer()
        writer.check_nonfinite(tag, counts, policy)
        writer.write_values([value], step, wall)

    def add_variable_summaries(
        self,
        tag: str,
        values: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        *,
        nonfinite: NonFinitePolicy = "warn",
    ) -> None:
        """The classic ``variable_summaries`` helper in one call and one pass over the data.

        Writes the scalars ``{tag}/mean``, ``{tag}/stddev`` (population), ``{tag}/max`` and
        ``{tag}/min`` and the TF1-bucket histogram ``{tag}/histogram``, in one event.

        Args:
          tag: the prefix of the five tags.
          values: the data.
          global_step, walltime: as :meth:`add_scalar`.
          nonfinite: as :meth:`add_histogram`.

        Raises:
          TypeError, ValueError: bad input, naming the tag.
        """
        from ..._summaries.histogram import variable_summaries
        from ..._summaries.nonfinite import check_policy

        tag, step, wall = self._resolve(tag, global_step, walltime)
        policy = check_policy(nonfinite, tag)
        stats, histogram = variable_summaries(tag, values)
        writer = self._get_writer()
        writer.check_nonfinite(tag, stats.histogram.nonfinite, policy)
        encode = writer.simple_scalars.encode
        values_out = [
            encode(f"{tag}/{name}", to_float32_range(number))
            for name, number in (
                ("mean", stats.mean),
                ("stddev", stats.stddev),
                ("max", stats.max),
                ("min", stats.min),
            )
        ]
        values_out.append(histogram)
        writer.write_values(values_out, step, wall)

    # -- text and audio ---------------------------------------------------------------------------

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
    ) -> None:
        """Log Markdown text under ``{tag}/text_summary``, as tensorboardX and torch do.

        Args:
          tag: the text's name.
          text_string: the text (str or UTF-8 bytes).
          global_step, walltime: as :meth:`add_scalar`.

        Raises:
          TypeError, ValueError: not text, or text UTF-8 cannot encode, naming the tag.
        """
        from ..._summaries.text import string_array, text_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        if not isinstance(text_string, (str, bytes)):
            raise TypeError(f"{tag!r}: text_string must be a str, got {type(text_string).__name__}")
        strings = string_array([text_string], tag)
        self._get_writer().write_values([text_value(f"{tag}/text_summary", strings)], step, wall)

    def add_audio(
        self,
        tag: str,
        snd_tensor: ArrayLike,
        global_step: GlobalStepLike = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """Log one audio clip, stored as 16-bit PCM WAV in a ``Summary.Audio`` under the tag, as
        tensorboardX and torch write it: the same bytes, samples converted as torch does
        (``trunc(x * 32767)``) or, in :class:`TensorboardXSummaryWriter`, as tensorboardX's
        soundfile does (the top 16 bits of ``rint(x * 2**31)``).

        Args:
          tag: the clip's name.
          snd_tensor: shape ``(L,)`` or ``(1, L)`` (mono) or ``(L, C)`` with one or two
            channels, channels last; values in [-1, 1] (clipped). Other shapes raise
            :class:`ValueError` (also an ``AssertionError``, as the libraries raise).
          global_step, walltime: as :meth:`add_scalar`.
          sample_rate: in Hz, a positive int.

        Raises:
          TypeError, ValueError: bad input, naming the tag.
        """
        from ..._common.compat_errors import AudioShapeError
        from ..._summaries.audio import audio_clips, legacy_audio_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        sound = as_native_array(snd_tensor, tag)
        if sound.ndim > 2:
            sound = sound.squeeze()  # torch squeezes: (1, 1, L) is a mono clip
        if sound.ndim == 1 or (sound.ndim == 2 and sound.shape[0] == 1):
            sound = sound.reshape(-1, 1)
        if sound.ndim != 2 or sound.shape[1] > 2:
            # (2, L) would otherwise be read as L channels of 2 frames each: a file no player
            # plays. tensorboardX and torch assert the same shapes.
            raise AudioShapeError(
                f"{tag!r}: audio must have shape (L,), (1, L) or (L, C) with C = 1 or 2 channels "
                f"last, got {sound.shape}; a channels-first clip (C, L), as torchaudio returns "
                "it, is logged as clip.T"
            )
        rate = check_int(sample_rate, "sample_rate", tag=tag, minimum=1, maximum=0xFFFFFFFF)
        (clip,) = audio_clips(sound[None], 1, tag)
        conversion = "soundfile" if self.flavour == "tensorboardX" else "torch"
        value = legacy_audio_value(tag, clip, rate, conversion=conversion)
        self._get_writer().write_values([value], step, wall)

    # -- lifecycle ------------------------------------------------------------------------------
    # flush(), close() (idempotent; a later add_* starts a new file, as in tensorboardX and
    # torch) and the context manager come from WriterHandle.
