"""How the reader fetches from an object store: requests and bytes in flight, attempts.

One process-wide setting, read when a read starts (:func:`npsummary.reader.configure_fetch`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..._common.convert import check_int

__all__ = ["FetchOptions", "configure_fetch", "current", "replace"]


@dataclass(frozen=True)
class FetchOptions:
    """How reads fetch from an object store: what :func:`configure_fetch` returns (the options
    in force before its call), frozen. ``configure_fetch`` sets ``concurrency``,
    ``max_bytes_in_flight`` and ``attempts``; the others keep their defaults.

    Attributes:
        concurrency: requests in flight at most.
        max_bytes_in_flight: bytes fetched and not yet read, at most (one object may pass it: an
            object is always admitted when nothing else is held).
        attempts: tries of one request before its error is raised (throttling, 5xx, a dropped
            connection are tried again; a missing object or a refusal are not).
        backoff: seconds before the second try, doubled for each later one (with jitter).
        max_backoff: the longest wait between two tries, in seconds.
        whole_object_max: objects up to this size are fetched whole, concurrently; larger ones
            are streamed in ranged reads when the reader reaches them.
    """

    concurrency: int = 32
    max_bytes_in_flight: int = 128 << 20
    attempts: int = 5
    backoff: float = 0.1
    max_backoff: float = 5.0
    whole_object_max: int = 8 << 20


_CURRENT = FetchOptions()


def current() -> FetchOptions:
    """The options a read starting now uses."""
    return _CURRENT


def configure_fetch(
    *,
    concurrency: int | None = None,
    max_bytes_in_flight: int | None = None,
    attempts: int | None = None,
) -> FetchOptions:
    """Set how the reader fetches a logdir from an object store (``s3://``, ``gs://``, any async
    fsspec filesystem), for every read that starts afterwards; arguments left out keep their
    value.

    Args:
        concurrency: requests in flight at most (default 32).
        max_bytes_in_flight: bytes fetched ahead of the decoder at most (default 128 MiB).
        attempts: tries of one request on throttling (S3's ``SlowDown``), a 5xx answer or a
            dropped connection, with exponential backoff, before its error naming the object
            is raised (default 5).

    Returns:
        The options in force before the call (pass their fields back to restore them).
    """
    global _CURRENT
    previous = _CURRENT
    changes: dict[str, int] = {}
    for name, value in (
        ("concurrency", concurrency),
        ("max_bytes_in_flight", max_bytes_in_flight),
        ("attempts", attempts),
    ):
        if value is not None:
            changes[name] = check_int(value, name, minimum=1)
    _CURRENT = dataclasses.replace(previous, **changes)
    return previous


def replace(options: FetchOptions) -> FetchOptions:
    """Put ``options`` in force (tests and benchmarks); returns the previous ones."""
    global _CURRENT
    previous, _CURRENT = _CURRENT, options
    return previous
