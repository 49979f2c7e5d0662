"""The one call the reader makes to storage for a read: the runs under a path, and the
filesystem to read their files through.

On a filesystem that offers an :class:`~.store.ObjectStore` (``object_store(path, options)``),
the path is listed once, recursively, and the files are served by
:class:`~.prefetch.PrefetchedFiles`: fetched concurrently in reading order, bytes in flight
bounded. Runs, their files and their order are exactly what the directory walk finds
(:mod:`.listing`); a listing with nothing in it (a missing path, an empty folder, a path that is
one object on a store that lists only below it) is left to the walk, which tells them apart as
before. Every other filesystem is walked and read as it always was.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .._discover import Run, discover
from .._io import FileSystem
from .listing import runs_from_listing
from .options import current
from .prefetch import PrefetchedFiles

__all__ = ["ListedSweep", "list_sweep", "open_sweep", "reading_listed"]


@dataclass(frozen=True)
class ListedSweep:
    """Runs listed once (by :func:`list_sweep`), to be read elsewhere without listing again:
    each run with its files and, from an object store's listing, their sizes (else None)."""

    runs: tuple[tuple[Run, tuple[int, ...] | None], ...]


_LISTED: ContextVar[ListedSweep | None] = ContextVar("npsummary_listed_sweep", default=None)


def list_sweep(fs: FileSystem, path: str, runs: re.Pattern[str] | None = None) -> ListedSweep:
    """List the runs under ``path`` as :func:`open_sweep` does, fetching nothing.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        OSError: the listing failed after retries, naming ``path``.
    """
    found, files = open_sweep(fs, path, runs, prefetch=lambda run: False)
    sizes: Callable[[str], int] | None = files.size if isinstance(files, PrefetchedFiles) else None
    if isinstance(files, PrefetchedFiles):
        files.close()
    return ListedSweep(
        tuple(
            (run, None if sizes is None else tuple(sizes(file) for file in run.files))
            for run in found
        )
    )


@contextlib.contextmanager
def reading_listed(listed: ListedSweep) -> Iterator[None]:
    """Within: :func:`open_sweep` takes its runs from ``listed`` (with the run filter it is
    given) instead of listing; a partition of a sweep read on a Dask worker uses it."""
    token = _LISTED.set(listed)
    try:
        yield
    finally:
        _LISTED.reset(token)


def open_sweep(
    fs: FileSystem,
    path: str,
    runs: re.Pattern[str] | None = None,
    *,
    prefetch: Callable[[Run], bool] | None = None,
) -> tuple[list[Run], FileSystem]:
    """The runs under ``path`` (as :func:`~npsummary.reader._discover.discover`), and the
    filesystem to read their files through, in their order (runs by name, files by name).
    ``prefetch`` picks the runs whose files will be read whole (default: all); on an object
    store the others' sizes still come from the listing (a live reader reads their tails).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        OSError: the listing failed after retries, naming ``path``.
    """
    opener: Callable[..., Any] | None = getattr(fs, "object_store", None)
    options = current()
    listed = _LISTED.get()
    if listed is not None:
        given = [(run, size) for run, size in listed.runs if runs is None or runs.search(run.name)]
        store = opener(path, options) if opener is not None else None
        if store is None:
            return [run for run, _ in given], fs
        files = [
            (file, size)
            for run, sizes in given
            if sizes is not None
            for file, size in zip(run.files, sizes, strict=True)
        ]
        return [run for run, _ in given], PrefetchedFiles(fs, store, files, options, path)
    store = opener(path, options) if opener is not None else None
    if store is None:
        return discover(fs, path, runs), fs
    objects = store.list_tree()
    if not objects:
        store.close()
        return discover(fs, path, runs), fs
    found = runs_from_listing(path, objects, runs)
    sizes = dict(objects)
    whole = found if prefetch is None else [run for run in found if prefetch(run)]
    files = [(file, sizes[file]) for run in whole for file in run.files]
    return found, PrefetchedFiles(fs, store, files, options, path, sizes)
