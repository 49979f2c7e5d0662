"""Runs and event files, found and ordered as TensorBoard finds and orders them.

A run is any directory (the logdir itself or a descendant) that directly holds at least one file
whose name contains ``tfevents``; its name is the path relative to the logdir, ``"."`` for the
logdir itself, with ``/`` separators. Runs are listed by name. The files of a run are read in
lexicographic order of their names, as both TensorBoard loaders read them; ``*.profile-empty``
files (profiler markers) hold no summaries and are left out, as TensorBoard's Python loader does.

The walk follows links to directories but visits each real directory once (a filesystem that
has an ``identity(path)`` method, such as the local one, says which paths are the same
directory), breadth first and real directories before links at each depth, so a directory
reached both directly and through a link keeps its real name, and links to an ancestor
(``a -> .``, ``b -> .``) cost one visit each instead of a walk of 2**depth paths. Only regular
files are event files when the filesystem can tell (``isfile(path)``): a FIFO named like an
event file would block the read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from ._io import FileSystem

__all__ = ["MAX_DEPTH", "Run", "compile_filter", "discover", "is_event_file"]

MAX_DEPTH = 64


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
    identity: Callable[[str], Hashable] = getattr(fs, "identity", lambda p: p)
    entries: Callable[[str], list[tuple[str, bool, bool, bool]]] = getattr(
        fs, "entries", lambda directory: _entries(fs, directory)
    )
    found: list[Run] = []
    seen: set[Hashable] = set()
    level: list[tuple[bool, str, str]] = [(False, ".", path)]  # (through a link, name, path)
    for depth in range(MAX_DEPTH + 1):
        below: list[tuple[bool, str, str]] = []
        for _, name, directory in sorted(level):
            try:
                key = identity(directory)
                if key in seen:
                    continue
                seen.add(key)
                listed = sorted(entries(directory))
            except OSError:  # unreadable, vanished, or a link loop (ELOOP)
                continue
            files: list[str] = []
            for entry, isdir, islink, isfile in listed:
                if isdir:
                    child = entry if name == "." else f"{name}/{entry}"
                    below.append((islink, child, fs.join(directory, entry)))
                elif is_event_file(entry) and isfile:
                    files.append(fs.join(directory, entry))
            if files and (runs is None or runs.search(name)):
                found.append(Run(name, tuple(files)))
        if not below or depth == MAX_DEPTH:
            break
        level = below
    found.sort(key=lambda run: run.name)
    return found


def _entries(fs: FileSystem, directory: str) -> list[tuple[str, bool, bool, bool]]:
    """``(name, isdir, islink, isfile)`` of each entry, for a filesystem without ``entries``:
    one call per question (``islink`` False and ``isfile`` True where it has no such method;
    only what ``isdir`` denies is asked ``isfile``, and only event files)."""
    islink: Callable[[str], bool] = getattr(fs, "islink", lambda p: False)
    isfile: Callable[[str], bool] = getattr(fs, "isfile", lambda p: True)
    out = []
    for entry in fs.listdir(directory):
        full = fs.join(directory, entry)
        if fs.isdir(full):
            out.append((entry, True, islink(full), False))
        else:
            out.append((entry, False, False, is_event_file(entry) and isfile(full)))
    return out
