"""What the reader needs from an object store to read a sweep at the store's speed.

A filesystem of the reader (:class:`~npsummary.reader.FileSystem`) that can do better than a
walk and one read at a time offers ``object_store(path, options)``, returning an
:class:`ObjectStore` for the objects under ``path`` (or None where it cannot, and the reader
walks and reads as before).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol

__all__ = ["ObjectStore"]


class ObjectStore(Protocol):
    """The objects under one root URL."""

    def list_tree(self) -> list[tuple[str, int]]:
        """``(URL, size)`` of every object under the root, at any depth, in as few requests as
        the store allows (S3: one ``ListObjectsV2`` without delimiter per 1,000 keys); folder
        marker objects left out; ``[]`` when there is none. A URL is the root's URL, ``/``,
        and the object's path below it (the root's own URL if the root is an object).

        Raises:
            OSError: the listing failed (after retries), naming the root.
        """
        ...

    def fetch(self, url: str) -> Future[bytes]:
        """Start fetching the whole object ``url`` (one of :meth:`list_tree`'s); the future's
        result is its bytes, or the ``OSError`` naming it once every attempt has failed. Many
        fetches may be in flight at once."""
        ...

    def close(self) -> None:
        """Cancel the fetches not yet started and let the store's threads go."""
        ...
