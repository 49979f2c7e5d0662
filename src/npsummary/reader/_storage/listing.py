"""Runs from a recursive listing, found and ordered as :func:`~npsummary.reader._discover.discover`
finds and orders them by walking directories (pure: no storage here).

A run is a folder that directly holds an object whose name makes it an event file; its name is
its path below the root (``"."`` for the root); runs are sorted by name and each run's files by
name. Folders deeper than the walk's limit, folder marker objects (keys ending in ``/``) and keys
with an empty path component (``a//b``, which no walk reaches) are passed over.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .._discover import MAX_DEPTH, Run, is_event_file

__all__ = ["runs_from_listing"]


def runs_from_listing(
    root: str, objects: Iterable[tuple[str, int]], runs: re.Pattern[str] | None = None
) -> list[Run]:
    """The runs under ``root`` (a URL) among ``objects`` (``(URL, size)`` pairs), sorted by
    name; ``root`` itself as the one file of run ``"."`` if it is among them (a path naming one
    event file)."""
    base = root.rstrip("/") or root
    prefix = base + "/"
    folders: dict[str, list[str]] = {}
    for url, _ in objects:
        if url in (root, base):
            return [Run(".", (root,))] if runs is None or runs.search(".") else []
        if not url.startswith(prefix):
            continue
        folder, _, name = url[len(prefix) :].rpartition("/")
        parts = folder.split("/") if folder else []
        if not name or "" in parts or len(parts) > MAX_DEPTH:
            continue
        if is_event_file(name):
            folders.setdefault(folder or ".", []).append(url)
    found = [
        Run(name, tuple(sorted(files)))
        for name, files in folders.items()
        if runs is None or runs.search(name)
    ]
    found.sort(key=lambda run: run.name)
    return found
