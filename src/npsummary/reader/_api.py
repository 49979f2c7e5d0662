"""The reader's public functions: iterate events, or load a logdir into series."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .. import proto
from .._common.convert import as_list, check_callback, check_flag, check_int, check_tag
from .._format.pngread import MAX_IMAGE_PIXELS
from ._discover import compile_filter
from ._framing import ReadStats, read_batches
from ._io import filesystem_for
from ._load import iter_run_data, load_runs
from ._logdata import Logdata, build
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
from ._storage.sweep import open_sweep
from ._values import KINDS

__all__ = [
    "audio",
    "events",
    "histograms",
    "hparams",
    "images",
    "iter_runs",
    "load",
    "pr_curves",
    "scalars",
    "tensors",
    "text",
]

Pattern = str | re.Pattern[str] | None
PathLike = str | os.PathLike[str]


def events(
    path: PathLike, *, strict: bool = False, stats: ReadStats | None = None
) -> Iterator[Any]:
    """Iterate the ``Event`` messages of an event file, a run directory or a whole logdir.

    Runs are visited by name and each run's files in TensorBoard's order.

    Args:
        path: an event file or a directory.
        strict: raise on the first corrupt record instead of skipping and counting it.
        stats: a :class:`ReadStats` to fill (files, records, corrupt and torn records).

    Yields:
        ``Event`` messages (npsummary's own protobuf classes; same fields as TensorFlow's).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        npsummary._format.record.CorruptRecordError: with ``strict=True``, on a corrupt record.
    """
    path = os.fspath(path)
    fs = filesystem_for(path)
    if stats is not None and not isinstance(stats, ReadStats):
        raise TypeError(f"stats must be a ReadStats or None, got {type(stats).__name__}")
    strict = check_flag(strict, "strict")
    stats = stats if stats is not None else ReadStats()
    found, fs = open_sweep(fs, path)
    for run in found:
        for file in run.files:
            for batch in read_batches(fs, file, stats, strict=strict):
                buf = batch.buf
                for a, b in zip(batch.starts.tolist(), batch.ends.tolist(), strict=True):
                    try:
                        event = proto.Event.FromString(buf[a:b])
                    except Exception:  # DecodeError, or RuntimeError on some backends
                        stats.corrupt(file, a - 12, b - a + 16, "record is not an Event", strict)
                        continue
                    yield event


def check_kinds(kinds: Iterable[str] | None) -> tuple[str, ...]:
    """The kinds to read (all of :data:`KINDS` for None); ``"hparams"`` brings ``"scalars"``.

    Raises:
        TypeError: ``kinds`` is a string or holds a non-string.
        ValueError: an unknown kind.
    """
    if isinstance(kinds, (str, bytes)):
        raise TypeError(f"kinds must be a list of kinds, got {kinds!r:.60}")
    wanted = tuple(
        KINDS
        if kinds is None
        else (check_tag(k, f"kinds[{i}]") for i, k in enumerate(as_list(kinds, "load", "kinds")))
    )
    unknown = sorted(set(wanted) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; expected some of {list(KINDS)}")
    if "hparams" in wanted and "scalars" not in wanted:
        wanted += ("scalars",)  # an hparams session's metrics are scalars
    return wanted


def _request(
    logdir: PathLike,
    kinds: Iterable[str] | None,
    runs: Pattern,
    tags: Pattern,
    strict: bool,
    decode: bool,
    max_image_pixels: int,
    workers: int | None,
) -> dict[str, Any]:
    """The checked arguments of a read, as :func:`._load.iter_run_data`'s keywords."""
    decode = check_flag(decode, "decode")
    strict = check_flag(strict, "strict")
    max_image_pixels = check_int(max_image_pixels, "max_image_pixels", minimum=1)
    workers = check_int(workers, "workers", minimum=1, allow_none=True)
    wanted = check_kinds(kinds)
    path = os.fspath(logdir)
    return {
        "fs": filesystem_for(path),
        "path": path,
        "kinds": wanted,
        "runs": compile_filter(runs, "runs"),
        "tags": compile_filter(tags, "tags"),
        "strict": strict,
        "decode": decode,
        "max_image_pixels": max_image_pixels,
        "workers": workers,
    }


def load(
    logdir: PathLike,
    *,
    kinds: Iterable[str] | None = None,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    decode: bool = False,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    workers: int | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Logdata:
    """Read a logdir (or one run directory or event file) into a :class:`Logdata`.

    A record that cannot be used never aborts the read: corrupt framing, a payload that is not
    an ``Event``, and a value whose content does not decode (hparams, a cut-short PNG, a WAV
    with a bad header, an image over ``max_image_pixels`` ...) are skipped and counted in
    ``stats`` (``corrupt_records`` and ``bad_values``), with a line in ``stats.problems`` naming
    the file, run, tag and step. ``strict=True`` raises on the first of them instead.

    Args:
        logdir: the directory given to TensorBoard's ``--logdir``, a run, or an event file.
        kinds: which kinds to read (default: all of :data:`KINDS`); fewer is faster.
        runs: regular expression a run name must contain a match of (``re.search``).
        tags: regular expression a tag must contain a match of.
        strict: raise on a corrupt record or an undecodable value instead of skipping and
            counting it.
        decode: decode images (PNG) into uint8 ``[h, w, c]`` arrays, videos (GIF) into uint8
            ``[T, h, w, 3]`` frames and audio (WAV) into float32 arrays.
        max_image_pixels: with ``decode``, the largest image decoded, in pixels (all frames of
            a GIF together; default :data:`MAX_IMAGE_PIXELS`, 67,108,864). A larger image is
            refused before any pixel is decoded (skipped and counted, or raised when
            ``strict``), so a small hostile file cannot make the read allocate without limit.
        workers: processes that decode runs in parallel; ``1`` reads in the calling thread.
            By default one per CPU for a local logdir of at least 64 MB of event files, else 1.
            The result is the same whichever is used, bit for bit and in the same order. A
            script that reads with workers at top level runs fine without the
            ``if __name__ == "__main__":`` guard; a :class:`FileSystem` registered by the
            caller must be importable by name (not defined in ``__main__``) to be used with
            ``workers`` above 1.
        progress: called as the read goes with a run's name and the records read so far
            (after each chunk of records; with workers, after each run).

    Returns:
        The :class:`Logdata`; its ``stats`` count every corrupt or torn record met.

    Raises:
        FileNotFoundError: ``logdir`` does not exist.
        ValueError: an unknown kind or an invalid regular expression.
        npsummary._format.record.CorruptRecordError: with ``strict=True``, on a corrupt record
            or a value that does not decode, naming the file, run, tag and step.
    """
    request = _request(logdir, kinds, runs, tags, strict, decode, max_image_pixels, workers)
    raw, stats = load_runs(progress=check_callback(progress, "progress"), **request)
    return build(raw, stats)


def iter_runs(
    logdir: PathLike,
    *,
    kinds: Iterable[str] | None = None,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    decode: bool = False,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    workers: int | None = None,
    stats: ReadStats | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[Logdata]:
    """Read a logdir run by run: one :class:`Logdata` per run, in run-name order, so that a
    sweep of any size is read in memory bounded by its largest run (and a few per worker).

    The arguments are :func:`load`'s. Each run's series are those :func:`load` gives for it,
    bit for bit, and its ``stats`` what reading that run met; ``stats``, if given, gathers
    every run's as they are yielded (the same totals and problems as :func:`load`'s). One
    difference: a run's ``hparams`` metrics are looked up in that run alone, not in its
    sub-runs (which are runs of their own here); use :func:`load` for those.

    Yields:
        A :class:`Logdata` whose ``runs`` is ``[name]``.

    Raises:
        FileNotFoundError: ``logdir`` does not exist (when iteration starts).
        ValueError: an unknown kind or an invalid regular expression (at the call).
    """
    if stats is not None and not isinstance(stats, ReadStats):
        raise TypeError(f"stats must be a ReadStats or None, got {type(stats).__name__}")
    request = _request(logdir, kinds, runs, tags, strict, decode, max_image_pixels, workers)
    progress = check_callback(progress, "progress")
    return _runs(request, stats if stats is not None else ReadStats(), progress)


def _runs(
    request: dict[str, Any], stats: ReadStats, progress: Callable[[str, int], None] | None
) -> Iterator[Logdata]:
    for data, part in iter_run_data(stats=stats, progress=progress, **request):
        yield build([data], part)


def _last(series: dict[Any, Any], last_write_wins: bool) -> dict[Any, Any]:
    if not check_flag(last_write_wins, "last_write_wins"):
        return series
    return {key: s.last_write_wins() for key, s in series.items()}


def scalars(
    logdir: PathLike,
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    last_write_wins: bool = False,
    strict: bool = False,
    workers: int | None = None,
) -> dict[tuple[str, str], ScalarSeries]:
    """Every scalar of a logdir: ``{(run, tag): ScalarSeries}`` with ``.steps`` (int64),
    ``.wall_times`` (float64) and ``.values`` (float64) arrays.

    Args:
        logdir: the logdir (or a run directory or an event file).
        runs: regular expression for run names (``re.search``); ``"."`` is the logdir itself.
        tags: regular expression for tags.
        last_write_wins: TensorBoard's view: a record at step ``s`` replaces every earlier
            record at a step ``>= s``. By default duplicate steps are kept in file order.
        strict: raise on a corrupt record instead of skipping and counting it.
        workers: processes decoding runs in parallel (see :func:`load`; ``1``: this thread).

    Returns:
        The series, sorted by run then tag.

    Raises:
        FileNotFoundError: ``logdir`` does not exist.
    """
    data = load(logdir, kinds=("scalars",), runs=runs, tags=tags, strict=strict, workers=workers)
    return _last(data.scalars, last_write_wins)


def histograms(
    logdir: PathLike,
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    last_write_wins: bool = False,
    workers: int | None = None,
) -> dict[tuple[str, str], HistogramSeries]:
    """Every histogram: ``{(run, tag): HistogramSeries}`` (``[k, 3]`` buckets per record;
    ``.percentiles()`` gives the Distributions dashboard's values)."""
    data = load(logdir, kinds=("histograms",), runs=runs, tags=tags, workers=workers)
    return _last(data.histograms, last_write_wins)


def images(
    logdir: PathLike,
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    decode: bool = False,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    workers: int | None = None,
) -> dict[tuple[str, str], ImageSeries]:
    """Every image: ``{(run, tag): ImageSeries}``; PNG bytes, or uint8 arrays with ``decode``
    (images over ``max_image_pixels`` pixels skipped and counted, see :func:`load`)."""
    return load(
        logdir,
        kinds=("images",),
        runs=runs,
        tags=tags,
        decode=decode,
        max_image_pixels=max_image_pixels,
        workers=workers,
    ).images


def audio(
    logdir: PathLike,
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    decode: bool = False,
    workers: int | None = None,
) -> dict[tuple[str, str], AudioSeries]:
    """Every audio clip: ``{(run, tag): AudioSeries}``; WAV bytes, or arrays with ``decode``."""
    return load(
        logdir, kinds=("audio",), runs=runs, tags=tags, decode=decode, workers=workers
    ).audio


def text(
    logdir: PathLike, *, runs: Pattern = None, tags: Pattern = None, workers: int | None = None
) -> dict[tuple[str, str], TextSeries]:
    """Every text summary: ``{(run, tag): TextSeries}``."""
    return load(logdir, kinds=("text",), runs=runs, tags=tags, workers=workers).text


def pr_curves(
    logdir: PathLike, *, runs: Pattern = None, tags: Pattern = None, workers: int | None = None
) -> dict[tuple[str, str], PrCurveSeries]:
    """Every PR curve: ``{(run, tag): PrCurveSeries}``."""
    return load(logdir, kinds=("pr_curves",), runs=runs, tags=tags, workers=workers).pr_curves


def tensors(
    logdir: PathLike,
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    plugin: str | None = None,
    workers: int | None = None,
) -> dict[tuple[str, str], TensorSeries]:
    """Tensors of every plugin this reader does not model, optionally of one ``plugin``."""
    found = load(logdir, kinds=("tensors",), runs=runs, tags=tags, workers=workers).tensors
    if plugin is None:
        return found
    return {key: s for key, s in found.items() if s.plugin_name == plugin}


def hparams(
    logdir: PathLike, *, runs: Pattern = None, workers: int | None = None
) -> dict[str, HParams]:
    """The hparams plugin's sessions: ``{run: HParams}`` with hyperparameters and metrics."""
    return load(logdir, kinds=("hparams", "scalars"), runs=runs, workers=workers).hparams
