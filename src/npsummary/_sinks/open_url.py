"""The sink for a logdir given as a URL: any URL that fsspec knows (``s3://``, ``gs://``,
``az://``, ``memory://``, chained ``a::b://``) is a logdir, and ``s3://`` also where only boto3 is
installed (:func:`~npsummary._sinks.location.open_location`). ``file://`` URLs keep one appended
file (:class:`~npsummary.FileSink`); every other one is written as segments
(:class:`~npsummary.SegmentSink`), since object stores cannot append."""

from __future__ import annotations

from .._common.urls import local_path
from .base import DEFAULT_FLUSH_SECS, DEFAULT_MAX_QUEUE, EventSink
from .file import FileSink
from .segments import SegmentSink

__all__ = ["open_url_sink"]


def open_url_sink(
    url: str,
    filename_suffix: str = "",
    *,
    flush_secs: float = DEFAULT_FLUSH_SECS,
    max_queue: int = DEFAULT_MAX_QUEUE,
) -> EventSink:
    """The sink for a logdir given as a URL: one appended file for ``file://``, segments else
    (``max_queue`` applies to the file only: segments are cut by size and time)."""
    local = local_path(url)
    if local is not None:
        return FileSink(local, filename_suffix, flush_secs=flush_secs, max_queue=max_queue)
    return SegmentSink(url, filename_suffix, flush_secs=flush_secs)
