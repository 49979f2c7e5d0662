"""``SummaryWriter``: the tensorboardX / ``torch.utils.tensorboard`` API on NumPy.

Call signatures follow tensorboardX 2.6 and torch, so existing training scripts switch by changing
one import. Differences, each a fix for a well-known complaint:

* Data reaches the file within ``flush_secs`` (default 2 s, not 120 s), and :meth:`flush` writes
  and fsyncs everything logged before it returns.
* Scalars are written in TensorFlow 2's format (a float32 tensor with ``scalars`` plugin metadata),
  which both TensorBoard loaders read.
* ``add_scalars`` writes one sub-run per key, as the anchors do, but all files share one background
  thread: each key costs one open file, not a thread, a queue and three descriptors.
* ``global_step=None`` uses the step given to :meth:`SummaryWriter.set_step` (0 until then).
* Bad input raises ``TypeError``/``ValueError`` naming the tag; nothing partial is written and the
  writer stays usable.
"""

from __future__ import annotations

import os
import time
from datetime import datetime
from types import TracebackType
from typing import Any, TypeVar

import numpy as np

from ._convert import (
    INT64_MAX,
    INT64_MIN,
    as_array,
    check_tag,
    tagged,
    to_float,
    to_float32_range,
    to_step,
    to_walltime,
)
from ._format.wire import encode_event
from ._histsummary import (
    NonFiniteGuard,
    check_policy,
    legacy_value,
    raw_histogram_value,
    tensorboardx_histogram,
    tf2_value,
)
from ._sink import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink, FileSink, hostname
from ._summary import ScalarEncoder, summary_bytes

__all__ = ["ClosingContext", "EventWriter", "SummaryWriter", "WriterHandle", "safe_run_name"]


_MAX_RUN_NAME_BYTES = 200  # file systems allow 255 bytes per path component


def safe_run_name(name: str) -> str:
    """Turn a tag into one path component that cannot leave its parent directory.

    Separators and NUL become ``_``; ``.``/``..``/empty are replaced; a name longer than 200
    UTF-8 bytes is shortened and given a hash of the full name, so it stays unique and valid.
    """
    cleaned = name.replace("/", "_").replace("\\", "_").replace("\x00", "_")
    if cleaned in ("", ".", ".."):
        cleaned = cleaned.replace(".", "_") or "_"
    encoded = cleaned.encode("utf-8")
    if len(encoded) > _MAX_RUN_NAME_BYTES:
        import hashlib

        digest = hashlib.sha1(encoded).hexdigest()[:16]
        head = encoded[: _MAX_RUN_NAME_BYTES - 17].decode("utf-8", errors="ignore")
        cleaned = f"{head}~{digest}"
    return cleaned


class EventWriter:
    """Stamps serialized summaries with step and wall time and hands them to a sink.

    The shared core of :class:`SummaryWriter`, the ``tf.summary`` writers and ``v1.FileWriter``.
    """

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.scalars = ScalarEncoder()
        self.children: dict[str, EventWriter] = {}
        self.check_nonfinite = NonFiniteGuard()

    def write_values(self, values: list[bytes], step: int, walltime: float) -> None:
        self.sink.write(encode_event(walltime, step, summary_bytes(values)))

    def write_scalar(
        self,
        tag: str,
        value: float,
        step: int,
        walltime: float,
        description: str | None = None,
        display_name: str | None = None,
    ) -> None:
        self.sink.write(self.scalars.event(tag, value, step, walltime, description, display_name))

    def write_event(self, event: Any) -> None:
        self.sink.write(bytes(event.SerializeToString()))


def _default_logdir(comment: str) -> str:
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", f"{stamp}_{hostname()}{comment}")


def _fast_step(step: Any, tag: str) -> int:
    if type(step) is int and INT64_MIN <= step <= INT64_MAX:
        return step
    return to_step(step, tag)


_HandleT = TypeVar("_HandleT", bound="ClosingContext")


_MAX_PADDING = 1024


def _check_grid_options(tag: str, ncols: Any, padding: Any, *, ncols_optional: bool = True) -> None:
    """Grid options are validated up front: a huge padding would allocate a huge canvas."""
    for name, value, low in (("ncols", ncols, 1), ("padding", padding, 0)):
        if value is None and name == "ncols" and ncols_optional:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{tag!r}: {name} must be an int, got {value!r}")
        if value < low:
            raise ValueError(f"{tag!r}: {name} must be >= {low}, got {value}")
    if padding > _MAX_PADDING:
        raise ValueError(f"{tag!r}: padding must be <= {_MAX_PADDING} pixels, got {padding}")


class ClosingContext:
    """``with obj:`` closes ``obj`` on exit."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _HandleT) -> _HandleT:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class WriterHandle(ClosingContext):
    """Owner of an :class:`EventWriter` that can be flushed and closed, and used in ``with``."""

    _writer: EventWriter | None

    def flush(self) -> None:
        """Write and fsync everything logged so far (sub-runs included) before returning."""
        if self._writer is not None:
            self._writer.sink.flush()

    def close(self) -> None:
        """Flush and close the event files. Idempotent."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.sink.close()


class SummaryWriter(WriterHandle):
    """Writes summaries for TensorBoard into an event file in ``logdir``.

    Args:
      logdir: run directory, or an :class:`EventSink` (e.g. ``MemorySink()``) to write elsewhere.
        Default ``runs/<Mon DD_HH-MM-SS>_<hostname><comment>``. ``log_dir`` is an alias (torch).
      comment: appended to the default logdir; ignored when ``logdir`` is given.
      purge_step: when resuming a crashed run, hides events with ``step >= purge_step`` that an
        earlier writer left behind (writes ``SessionLog.START`` at that step).
      max_queue: pending events that make the background thread write before ``flush_secs``.
      flush_secs: longest time an event waits in memory before it is written (default 2 s).
      filename_suffix: appended to the event file name.

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
        *,
        log_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if logdir is None:
            logdir = log_dir
        elif log_dir is not None:
            raise TypeError("pass logdir or log_dir, not both")
        if logdir is None:
            logdir = _default_logdir(comment)
        if isinstance(max_queue, bool) or not isinstance(max_queue, int) or max_queue < 0:
            raise ValueError(f"max_queue must be a non-negative int, got {max_queue!r}")
        try:
            flush_secs = float(flush_secs)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"flush_secs must be a number, got {flush_secs!r}") from exc
        if not flush_secs > 0:
            raise ValueError(f"flush_secs must be positive, got {flush_secs!r}")
        if isinstance(logdir, EventSink) and not isinstance(logdir, (str, os.PathLike)):
            self._sink_given: EventSink | None = logdir
            self._logdir = ""
        else:
            self._sink_given = None
            self._logdir = os.fspath(logdir)
        self._options = (filename_suffix, flush_secs, max_queue)
        self._writer: EventWriter | None = None
        self._step = 0
        self._purge_step = None if purge_step is None else to_step(purge_step, "purge_step")
        self._open()

    # -- plumbing -------------------------------------------------------------------------------

    def _open(self) -> EventWriter:
        if self._sink_given is not None:
            sink: EventSink = self._sink_given
        else:
            suffix, flush_secs, max_queue = self._options
            sink = FileSink(self._logdir, suffix, flush_secs=flush_secs, max_queue=max_queue)
        writer = EventWriter(sink)
        if self._purge_step is not None:
            from . import proto

            event = proto.Event(step=self._purge_step, wall_time=time.time())
            event.session_log.status = proto.SESSION_LOG_START
            # TensorBoard's Python loader takes the first START of a run as the session's
            # beginning and purges (steps >= START.step) only on a later one. The crashed
            # writer usually wrote none, so write two: the second purges in every case.
            writer.write_event(event)
            writer.write_event(event)
            self._purge_step = None
        self._writer = writer
        return writer

    def _get_writer(self) -> EventWriter:
        # After close(), tensorboardX and torch start a new file on the next add_*; so do we.
        return self._writer or self._open()

    def get_logdir(self) -> str:
        """Return the run directory ("" when writing to a custom sink)."""
        return self._logdir

    @property
    def sink(self) -> EventSink:
        """The sink receiving this writer's events."""
        return self._get_writer().sink

    def set_step(self, step: int) -> None:
        """Set the step used by ``add_*`` calls that pass ``global_step=None``."""
        self._step = to_step(step, "set_step")

    def _resolve(self, tag: Any, global_step: Any, walltime: Any) -> tuple[str, int, float]:
        tag = tag if type(tag) is str and tag.isascii() else check_tag(tag)
        step = self._step if global_step is None else _fast_step(global_step, tag)
        wall = time.time() if walltime is None else to_walltime(walltime, tag)
        return tag, step, wall

    # -- scalars --------------------------------------------------------------------------------

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        display_name: str | None = None,
        summary_description: str | None = None,
    ) -> None:
        """Log one scalar.

        ``scalar_value`` may be a Python or NumPy number, a 0-d or size-1 array, or any object
        with ``__array__`` or ``__float__`` (a torch or JAX scalar). It is stored as float32.
        """
        tag, step, wall = self._resolve(tag, global_step, walltime)
        value = scalar_value if type(scalar_value) is float else to_float(scalar_value, tag)
        if display_name is not None:
            display_name = check_tag(display_name, "display_name")
        if summary_description is not None:
            summary_description = check_tag(summary_description, "summary_description")
        self._get_writer().write_scalar(
            tag, to_float32_range(value), step, wall, summary_description, display_name
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several scalars as one chart: each key becomes the sub-run ``<main_tag>_<key>``.

        Values are validated before anything is written, so a bad value writes nothing.
        """
        main_tag, step, wall = self._resolve(main_tag, global_step, walltime)
        if not isinstance(tag_scalar_dict, dict):
            raise TypeError(
                f"{main_tag!r}: tag_scalar_dict must be a dict of name -> value, "
                f"got {type(tag_scalar_dict).__name__}"
            )
        values = []
        for key, value in tag_scalar_dict.items():
            key = check_tag(key, f"{main_tag!r}: key of tag_scalar_dict")
            values.append((key, to_float32_range(to_float(value, f"{main_tag}/{key}"))))
        writer = self._get_writer()
        for key, value in values:
            run = safe_run_name(f"{main_tag}_{key}")
            child = writer.children.get(run)
            if child is None:
                child = writer.children[run] = EventWriter(writer.sink.child(run))
            child.write_scalar(main_tag, value, step, wall)

    # -- histograms and distributions ------------------------------------------------------------

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
        *,
        nonfinite: str = "warn",
    ) -> None:
        """Log a histogram of ``values`` (any shape, any real dtype).

        ``bins='tensorflow'`` (default) uses TF1's 1551 exponential buckets exactly as TF's C++
        op does, with empty runs collapsed; an int gives that many equal-width bins, a sequence
        gives explicit edges, and NumPy's rule names (``'auto'``, ``'fd'``, …) are accepted,
        capped at 10,000 bins. ``max_bins`` groups adjacent bins as tensorboardX does.
        NaN and ±Inf are left out (see ``nonfinite``: ``'warn'``, ``'raise'`` or ``'ignore'``).
        """
        tag, step, wall = self._resolve(tag, global_step, walltime)
        check_policy(nonfinite, tag)
        histogram = tensorboardx_histogram(tag, values, bins, max_bins)
        writer = self._get_writer()
        writer.check_nonfinite(tag, histogram.nonfinite, nonfinite)
        writer.write_values([legacy_value(tag, histogram)], step, wall)

    def add_histogram_raw(
        self,
        tag: str,
        min: Any,
        max: Any,
        num: Any,
        sum: Any,
        sum_squares: Any,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram from precomputed fields; ``bucket_limits`` are right edges.

        Raises ``ValueError`` unless the limits are non-decreasing, the counts finite and
        non-negative, and both have the same non-zero length.
        """
        tag, step, wall = self._resolve(tag, global_step, walltime)
        value = raw_histogram_value(
            tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts
        )
        self._get_writer().write_values([value], step, wall)

    def add_distribution(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        buckets: int | None = None,
        *,
        description: str | None = None,
        nonfinite: str = "warn",
    ) -> None:
        """Log ``values`` for TensorBoard's Distributions tab.

        TensorBoard has no separate distribution format: it computes the nine percentile bands
        of that tab from histogram data. This writes ``tf.summary.histogram``'s format
        (``buckets`` equal-width buckets, default 30), shown in both tabs.
        """
        tag, step, wall = self._resolve(tag, global_step, walltime)
        check_policy(nonfinite, tag)
        value, counts = tf2_value(tag, values, buckets, description)
        writer = self._get_writer()
        writer.check_nonfinite(tag, counts, nonfinite)
        writer.write_values([value], step, wall)

    def add_variable_summaries(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        *,
        nonfinite: str = "warn",
    ) -> None:
        """The classic ``variable_summaries`` helper in one call and one pass over the data.

        Writes the scalars ``{tag}/mean``, ``{tag}/stddev`` (population), ``{tag}/max`` and
        ``{tag}/min`` and the TF1-bucket histogram ``{tag}/histogram``, in one event.
        """
        from ._histogram import variable_stats

        tag, step, wall = self._resolve(tag, global_step, walltime)
        check_policy(nonfinite, tag)
        stats = tagged(tag, variable_stats, as_array(values, tag))
        writer = self._get_writer()
        writer.check_nonfinite(tag, stats.histogram.nonfinite, nonfinite)
        encode = writer.scalars.encode
        values_out = [
            encode(f"{tag}/mean", to_float32_range(stats.mean)),
            encode(f"{tag}/stddev", to_float32_range(stats.stddev)),
            encode(f"{tag}/max", to_float32_range(stats.max)),
            encode(f"{tag}/min", to_float32_range(stats.min)),
            legacy_value(f"{tag}/histogram", stats.histogram),
        ]
        writer.write_values(values_out, step, wall)

    # -- images -----------------------------------------------------------------------------------

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
        *,
        description: str | None = None,
    ) -> None:
        """Log one image.

        ``dataformats`` names the axes: ``'CHW'`` (default, torch), ``'HWC'``, ``'HW'``, or any
        permutation; a 4-D layout such as ``'NCHW'`` is tiled into one grid image. C is 1
        (gray, kept gray), 2 (gray + alpha), 3 (RGB) or 4 (RGBA). uint8 is stored as is; floats
        are read as [0, 1] and scaled by 255 with rounding and clipping (never wrapping); other
        integers are clipped to [0, 255]; bool is 0/255; NaN is drawn as 0 with a warning.
        """
        from ._image import to_hwc

        tag, step, wall = self._resolve(tag, global_step, walltime)
        hwc = to_hwc(as_array(img_tensor, tag), dataformats, tag=tag)
        self._write_pixels(tag, hwc, step, wall, description)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
        *,
        ncols: int = 8,
        padding: int = 0,
        description: str | None = None,
    ) -> None:
        """Log a batch of images (``'NCHW'`` by default, or ``'NHWC'``, ``'NHW'``, …) tiled
        into one grid, ``ncols`` images per row, as tensorboardX does. A list of same-shaped
        images is stacked first. Value rules as :meth:`add_image`."""
        from ._image import make_grid, to_nhwc

        tag, step, wall = self._resolve(tag, global_step, walltime)
        images = img_tensor
        if isinstance(images, (list, tuple)):
            images = [as_array(image, tag) for image in images]
        _check_grid_options(tag, ncols, padding, ncols_optional=False)
        batch = images if isinstance(images, list) else as_array(images, tag)
        nhwc = tagged(tag, lambda: to_nhwc(batch, dataformats, tag=tag))
        if nhwc.shape[0] == 0:
            raise ValueError(f"{tag!r}: add_images got an empty batch, shape {nhwc.shape}")
        grid = make_grid(nhwc, ncols=ncols, padding=padding)
        self._write_pixels(tag, grid, step, wall, description)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of figures, tiled) rendered through its Agg
        canvas buffer. matplotlib is imported only here; ``close=True`` closes the figures."""
        from ._image import figure_to_hwc, make_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        figures = list(figure) if isinstance(figure, (list, tuple)) else [figure]
        if not figures:
            raise ValueError(f"{tag!r}: add_figure got an empty list of figures")
        for f in figures:
            if not hasattr(f, "canvas") or not hasattr(f, "savefig"):
                raise TypeError(
                    f"{tag!r}: add_figure expects a matplotlib Figure (or a list of them), "
                    f"got {type(f).__name__}"
                )
        rendered = [figure_to_hwc(f) for f in figures]
        if close:
            import matplotlib.pyplot as plt

            for f in figures:
                plt.close(f)
        if len(rendered) == 1:
            pixels = rendered[0]
        else:
            if len({r.shape for r in rendered}) != 1:
                raise ValueError(
                    f"{tag!r}: figures in one add_figure call must have the same size, got "
                    f"{sorted({r.shape for r in rendered})}"
                )
            pixels = make_grid(np.stack(rendered), ncols=8, padding=0)
        self._write_pixels(tag, pixels, step, wall, None)

    def add_filters(
        self,
        tag: str,
        weights: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        layout: str = "HWIO",
        *,
        normalize: str = "tile",
        ncols: int | None = None,
        padding: int = 1,
    ) -> None:
        """Log a conv layer's kernel as one grid image, each tile normalised to [0, 1].

        ``layout`` is ``'HWIO'`` (TF/Keras ``[kh, kw, in, out]``) or ``'OIHW'`` (torch). A layer
        with 3 input channels is drawn as one RGB tile per filter; otherwise each (out, in)
        slice is a gray tile, one row per output filter. ``normalize``: ``'tile'``,
        ``'filter'``, ``'layer'`` or ``'none'``.
        """
        from ._image import kernel_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        _check_grid_options(tag, ncols, padding)
        grid = kernel_grid(
            as_array(weights, tag),
            layout,
            normalize=normalize,
            ncols=ncols,
            padding=padding,
            tag=tag,
        )
        self._write_pixels(tag, grid, step, wall, None)

    def add_feature_maps(
        self,
        tag: str,
        activations: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
        *,
        sample: int = 0,
        normalize: str = "tile",
        ncols: int | None = None,
        padding: int = 1,
    ) -> None:
        """Log one sample's activations (what a conv layer sees) as a grid of gray tiles, one
        per channel, each min-max normalised. ``dataformats``: ``'NCHW'`` (torch), ``'NHWC'``
        (TF) or ``'CHW'``/``'HWC'`` for a single sample."""
        from ._image import feature_map_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        _check_grid_options(tag, ncols, padding)
        if isinstance(sample, bool) or not isinstance(sample, (int, np.integer)):
            raise TypeError(f"{tag!r}: sample must be an int, got {sample!r}")
        grid = feature_map_grid(
            as_array(activations, tag),
            dataformats,
            sample=sample,
            normalize=normalize,
            ncols=ncols,
            padding=padding,
            tag=tag,
        )
        self._write_pixels(tag, grid, step, wall, None)

    def _write_pixels(
        self, tag: str, hwc: Any, step: int, wall: float, description: str | None
    ) -> None:
        from ._imgsummary import pixels_value

        writer = self._get_writer()
        value = pixels_value(tag, hwc, writer.check_nonfinite.nan_pixels, description=description)
        writer.write_values([value], step, wall)

    # -- text and audio ---------------------------------------------------------------------------

    def add_text(
        self,
        tag: str,
        text_string: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log Markdown text under ``{tag}/text_summary``, as tensorboardX and torch do."""
        from ._audio import string_array, text_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        if not isinstance(text_string, (str, bytes)):
            raise TypeError(f"{tag!r}: text_string must be a str, got {type(text_string).__name__}")
        strings = string_array([text_string], tag)
        self._get_writer().write_values([text_value(f"{tag}/text_summary", strings)], step, wall)

    def add_audio(
        self,
        tag: str,
        snd_tensor: Any,
        global_step: int | None = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """Log one audio clip: shape ``(L,)`` or ``(1, L)`` (mono) or ``(L, C)``, values in
        [-1, 1] (clipped), stored as 16-bit PCM WAV in TF2's audio format."""
        from ._audio import audio_clips, audio_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        sound = as_array(snd_tensor, tag)
        if sound.ndim == 1 or (sound.ndim == 2 and sound.shape[0] == 1):
            sound = sound.reshape(-1, 1)
        if sound.ndim != 2:
            raise ValueError(
                f"{tag!r}: audio must have shape (L,), (1, L) or (L, C), got {sound.shape}"
            )
        if isinstance(sample_rate, bool) or not isinstance(sample_rate, (int, np.integer)):
            raise TypeError(f"{tag!r}: sample_rate must be an int, got {sample_rate!r}")
        if sample_rate <= 0:
            raise ValueError(f"{tag!r}: sample_rate must be positive, got {sample_rate}")
        clips = audio_clips(sound[None], 1, tag)
        self._get_writer().write_values([audio_value(tag, clips, int(sample_rate))], step, wall)

    # -- lifecycle ------------------------------------------------------------------------------
    # flush(), close() (idempotent; a later add_* starts a new file, as in tensorboardX and
    # torch) and the context manager come from WriterHandle.
