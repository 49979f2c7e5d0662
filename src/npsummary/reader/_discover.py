"""Runs and event files, found and ordered as TensorBoard finds and orders them.

A run is any directory (the logdir itself or a descendant) that directly holds at least one file
whose name contains ``tfevents``; its name is the path relative to the logdir, ``"."`` for the
logdir itself, with ``/`` separators. Runs are listed by name. The files of a run are read in
lexicographic order of their names, as both TensorBoard loaders read them; ``*.profile-empty``
files (profiler markers) hold no summaries and are left out, as TensorBoard's Python loader does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._io import FileSystem

__all__ = ["Run", "compile_filter", "discover"]

_MAX_DEPTH = 64


@dataclass(frozen=True)
class Run:
    """One run: its name and its event files in reading order."""

    name: str
    files: tuple[str, ...]


def is_event_file(name: str) -> bool:
    return "tfevents" in name and not name.endswith(".profile-empty")


def compile_filter(pattern: str | re.Pattern[str] | None, what: str) -> re.Pattern[str] | None:
    """A compiled regex (matched with ``search``), or None for "everything"."""
    if pattern is None or isinstance(pattern, re.Pattern):
        return pattern
    if not isinstance(pattern, str):
        raise TypeError(f"{what} must be a regular expression string, got {type(pattern).__name__}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{what}: invalid regular expression {pattern!r}: {exc}") from None


def discover(fs: FileSystem, path: str, runs: re.Pattern[str] | None = None) -> list[Run]:
    """The runs under ``path`` (a logdir, a run directory or one event file), sorted by name.

    Raises:
        FileNotFoundError: ``path`` does not exist.
    """
    if not fs.isdir(path):
        fs.size(path)  # raises FileNotFoundError for a missing path
        return [Run(".", (path,))] if runs is None or runs.search(".") else []
    found: list[Run] = []
    stack: list[tuple[str, str, int]] = [(path, ".", 0)]
    while stack:
        directory, name, depth = stack.pop()
        try:
            entries = sorted(fs.listdir(directory))
        except (PermissionError, NotADirectoryError, FileNotFoundError):
            continue
        files: list[str] = []
        for entry in entries:
            full = fs.join(directory, entry)
            if fs.isdir(full):
                if depth < _MAX_DEPTH:
                    stack.append((full, entry if name == "." else f"{name}/{entry}", depth + 1))
            elif is_event_file(entry):
                files.append(full)
        if files and (runs is None or runs.search(name)):
            found.append(Run(name, tuple(files)))
    found.sort(key=lambda run: run.name)
    return found
