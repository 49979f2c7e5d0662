"""A logdir still being written, read again and again: each call reads only what is new.

A :class:`Reader` remembers, for every event file, where its last complete record ended. Each
call reads from there (a record a writer was still writing is read once it is complete, never
twice and never lost), reads the files and runs that appeared, and shapes only the series that
grew, so what it returns is what a fresh :func:`~npsummary.reader.load` of the logdir would
return at that moment. A run whose files no longer extend what was read (a file shrank, was
replaced or rewritten, vanished, or a new file sorts before one already read, or a file other
than the run's last grew) is read again from its start, which is the only way to keep the order
a fresh read gives; runs that vanished are dropped.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .._common.convert import check_flag, check_int
from .._format.pngread import MAX_IMAGE_PIXELS
from ._api import PathLike, Pattern, check_kinds
from ._crc import length_crc_ok
from ._discover import Run, compile_filter
from ._fastscalar import FastScalars, match_scalars
from ._framing import (
    CHUNK,
    ReadStats,
    RecordBatch,
    payload_ok,
    read_batches,
    read_range,
    segment_records,
)
from ._io import FileSystem, filesystem_for
from ._load import RunData, _Collector, _ScalarParts
from ._logdata import Logdata, _hparams, _series
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
from ._storage.prefetch import PrefetchedFiles
from ._storage.sweep import open_sweep

__all__ = ["Reader"]

_MAX_PROBLEMS = 100
_GUARD = 4  # the last record's masked CRC: it changes when a file is rewritten in place
_HEAD = struct.Struct("<III")  # a record's length (low, high words) and length CRC
_TAILS = 4096  # grown files read together (each tail at most CHUNK bytes)


@dataclass
class _File:
    path: str
    identity: Hashable
    size: int = 0  # the size the last read went up to
    done: int = 0  # where the last complete record (or skipped corrupt stretch) ends
    guard: bytes = b""  # the _GUARD bytes before ``done``
    records: int = 0
    corrupt_records: int = 0
    corrupt_bytes: int = 0
    bad_values: int = 0
    problems: list[str] = field(default_factory=list)  # every one but the torn tail's

    @property
    def torn(self) -> int:
        return self.size - self.done


def _guard(fs: FileSystem, path: str, end: int) -> bytes:
    return read_range(fs, path, end - _GUARD, _GUARD) if end >= _GUARD else b""


def _guard_in(batch: RecordBatch | None, end: int) -> bytes:
    """The guard bytes before ``end`` from a batch just read, if it holds them (no request)."""
    if batch is None or end < _GUARD:
        return b""
    lo, hi = end - _GUARD - batch.base, end - batch.base
    return batch.buf[lo:hi] if lo >= 0 and hi <= len(batch.buf) else b""


IntArray = npt.NDArray[np.int64]
_NONE = np.zeros(0, np.int64)


class _GrowingScalars:
    """A tag's steps, wall times and values with room to grow: a refresh writes the new values
    after the old ones in place (doubling the room when full), and each series is a view of the
    first ``size``, so a refresh copies what is new, not the whole series. A series handed out
    before keeps its view, whose bytes are never written again. The room costs up to an eighth
    more memory than the series (twice, just after a doubling)."""

    def __init__(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        self.size = steps.size
        # An eighth more room from the start: a series growing by a percent per call is not
        # copied whole again for about a dozen calls (the first ones are what a poller meets).
        room = self.size + max(self.size // 8, 16)
        self.arrays = []
        for array in (steps, walls, values):
            roomy = np.empty(room, array.dtype)
            roomy[: self.size] = array
            self.arrays.append(roomy)

    def append(self, steps: np.ndarray, walls: np.ndarray, values: np.ndarray) -> None:
        need = self.size + steps.size
        if need > self.arrays[0].size:
            room = max(need, 2 * self.size)
            for i, old in enumerate(self.arrays):
                bigger = np.empty(room, old.dtype)
                bigger[: self.size] = old[: self.size]
                self.arrays[i] = bigger
        for array, new in zip(self.arrays, (steps, walls, values), strict=True):
            array[self.size : need] = new
        self.size = need

    def series(self) -> ScalarSeries:
        steps, walls, values = (array[: self.size] for array in self.arrays)
        return ScalarSeries(steps, walls, values)


class _Rewritten(Exception):
    """A file read before was rewritten: its run is read again from the start."""


class _Run:
    """One run's reading state: its collector (sequence numbers, tags' plugins) and files."""

    def __init__(self, name: str, make: Callable[[RunData, ReadStats], _Collector]) -> None:
        self.data = RunData(name)
        self.collector = make(self.data, ReadStats())
        self.files: list[_File] = []
        self.broken = False  # a read of it raised part way: read it again from the start
        # (kind, tag) -> (parts or items read when it was shaped, the series)
        self.series: dict[tuple[str, str], tuple[int, Any]] = {}
        self.scalars: dict[str, _GrowingScalars] = {}  # each scalar tag's arrays, shaped
        self.last_size: int | None = None  # the last file's size, as :meth:`extends` saw it

    def extends(self, fs: FileSystem, paths: tuple[str, ...], identity: Any) -> bool:
        """Whether ``paths`` are the files read so far, the last one perhaps grown, plus new
        ones (whether the last one was rewritten is told by its guard bytes, when read)."""
        if self.broken or paths[: len(self.files)] != tuple(f.path for f in self.files):
            return False
        last = len(self.files) - 1
        size = None
        for i, f in enumerate(self.files):
            size = fs.size(f.path)
            if size < f.size or identity(f.path) != f.identity or (size > f.size and i < last):
                return False
        self.last_size = size
        return True

    def only_grown(self, fs: FileSystem, paths: tuple[str, ...]) -> int | None:
        """The new size of the last file when that is all that changed (after :meth:`extends`,
        whose size of it serves)."""
        if len(paths) != len(self.files) or not self.files or not self.files[-1].size:
            return None
        size = fs.size(paths[-1]) if self.last_size is None else self.last_size
        return size if 0 < size - self.files[-1].size <= CHUNK else None

    def read(self, fs: FileSystem, paths: tuple[str, ...], identity: Any, strict: bool) -> None:
        """Read what is new in ``paths`` (which :meth:`extends` the files read so far).

        Raises:
            _Rewritten: the last file read so far no longer ends as it did (nothing was read).
        """
        for path in paths[len(self.files) :]:
            self.files.append(_File(path, identity(path)))
        for f in self.files:
            if fs.size(f.path) == f.size and f.size:
                continue
            if f.done and _guard(fs, f.path, f.done) != f.guard:
                raise _Rewritten(f.path)
            stats = ReadStats()
            self.collector.stats = stats
            start = f.done
            last: RecordBatch | None = None
            for last in read_batches(fs, f.path, stats, start, strict=strict):
                self.collector.batch(last)
            f.size = start + stats.bytes
            f.done = f.size - stats.torn_bytes
            if f.done > start:
                f.guard = _guard_in(last, f.done) or _guard(fs, f.path, f.done)
            f.records += stats.records
            f.corrupt_records += stats.corrupt_records
            f.corrupt_bytes += stats.corrupt_bytes
            f.bad_values += stats.bad_values
            torn = f"{f.path}: torn tail of "
            f.problems += [p for p in stats.problems if not p.startswith(torn)]

    def append_scalars(self, fast: FastScalars, groups: list[tuple[str, int, int]]) -> bool:
        """File a batch's scalars (``groups``: tags and rows of ``fast``, every tag one the run
        kept before; see :meth:`_Collector.batch`) straight into the series' growing arrays,
        when every tag was shaped and has not grown since: what the collector and
        :meth:`shaped` would do, without the parts between them. False, with nothing filed,
        otherwise."""
        for tag, _, _ in groups:
            if tag not in self.scalars or len(self.data.scalars[tag].seq) != 1:
                return False  # new, or parts not shaped yet: they come first
        for tag, lo, hi in groups:
            grown = self.scalars[tag]
            grown.append(fast.steps[lo:hi], fast.wall_times[lo:hi], fast.values[lo:hi])
            self.series[("scalars", tag)] = (1, grown.series())
        return True

    def shaped(self) -> dict[tuple[str, str], Any]:
        """Every series of the run, shaping again only those that grew since the last call."""
        data = self.data
        for tag in sorted(data.scalars):
            parts = data.scalars[tag]
            known = self.series.get(("scalars", tag))
            if known is not None and known[0] == len(parts.seq):
                continue
            grown = self.scalars.get(tag)
            if grown is None:
                grown = self.scalars[tag] = _GrowingScalars(*data.scalar_arrays(tag))
            elif len(parts.seq) == 2:  # one new part: in record order (see _Collector._fast)
                grown.append(parts.steps[1], parts.walls[1], parts.values[1])
            else:  # parts[0] stands for what was shaped before: every later record follows it
                new = _ScalarParts(
                    parts.seq[1:], parts.steps[1:], parts.walls[1:], parts.values[1:]
                )
                grown.append(*new.arrays())
            # Only the order of the parts matters from now on: one empty stand-in for the old.
            parts.seq, parts.steps, parts.walls, parts.values = [_NONE], [_NONE], [_NONE], [_NONE]
            self.series[("scalars", tag)] = (1, grown.series())
        for kind, tag in sorted(data.items):
            items = data.items[(kind, tag)]
            known = self.series.get((kind, tag))
            if kind != "hparams" and (known is None or known[0] != len(items)):
                self.series[(kind, tag)] = (len(items), _series(kind, data, tag, items))
        return {key: self.series[key][1] for key in sorted(self.series)}


@dataclass
class _Tail:
    """The new bytes of a run's last file, for :func:`_read_tails`."""

    run: _Run
    paths: tuple[str, ...]  # the run's files
    file: _File
    size: int
    at: int = 0  # where they start in the joint buffer
    records: tuple[int, int] = (0, 0)  # their records' range in the joint record arrays
    done: int = 0  # the file offset after their last complete record


def _chained(buf: bytes, tails: list[_Tail]) -> tuple[IntArray, IntArray] | None:
    """Payload starts and ends of the joined tails, framed at once, when each is a whole
    number of records (:func:`~._framing.segment_records`); else None (a torn tail,
    corruption: walk them)."""
    records = segment_records(buf, np.array([*(t.at for t in tails), len(buf)], np.int64))
    if records is None:
        return None
    begin, end, first = records
    bounds = first.tolist()
    for i, t in enumerate(tails):
        t.records, t.done = (bounds[i], bounds[i + 1]), t.size
    return begin, end


def _walk_tails(
    buf: bytes, tails: list[_Tail], others: list[_Tail]
) -> tuple[list[_Tail], IntArray, IntArray, npt.NDArray[np.bool_]]:
    """Follow each tail's chain of headers (their length CRCs checked at once after); the
    tails whose bytes are not records up to a torn end go to ``others``. Returns the framed
    tails, the payloads' starts and ends, and whether each record's length CRC checks."""
    starts: list[int] = []
    lengths: list[int] = []
    crcs: list[int] = []
    framed: list[_Tail] = []
    for t in tails:
        end, p, first = t.at + t.size - t.file.done, t.at, len(starts)
        while end - p >= 12:
            length, high, crc = _HEAD.unpack_from(buf, p)
            if high or p + 16 + length > end:  # no header here, or a torn tail
                break
            starts.append(p + 12)
            lengths.append(length)
            crcs.append(crc)
            p += 16 + length
        if end - p >= 12:  # a corrupt header, or a record cut past its header: the general path
            del starts[first:], lengths[first:], crcs[first:]
            others.append(t)
            continue
        t.records, t.done = (first, len(starts)), t.file.done + p - t.at
        framed.append(t)
    sizes = np.array(lengths, np.uint32)
    begin = np.array(starts, np.int64)
    return (
        framed,
        begin,
        begin + sizes.astype(np.int64),
        length_crc_ok(sizes, np.array(crcs, np.uint32)),
    )


def _read_tails(fs: FileSystem, tails: list[_Tail], checked: Any) -> list[_Tail]:
    """Read the tails of many runs' last files at once: their bytes joined in one buffer,
    framed, CRC-checked and bulk-decoded in one pass each, then filed run by run. Tails that
    are anything but whole records and at most one torn tail (corruption, a file that changed
    while read) are returned, untouched, for the general path."""
    parts: list[bytes] = []
    ready: list[_Tail] = []
    others: list[_Tail] = []
    at = 0
    for t in tails:
        f = t.file
        start = f.done - len(f.guard)
        data = read_range(fs, f.path, start, t.size - start)
        if len(data) != t.size - start or data[: len(f.guard)] != f.guard:
            others.append(t)
            continue
        t.at = at
        parts.append(data[len(f.guard) :])
        at += t.size - f.done
        ready.append(t)
    buf = b"".join(parts)
    chained = _chained(buf, ready)
    if chained is not None:
        framed, begin, stop = ready, *chained
        ok = payload_ok(buf, begin, stop)
    else:
        framed, begin, stop, ok = _walk_tails(buf, ready, others)
        ok &= payload_ok(buf, begin, stop) if begin.size else ok
    good: list[_Tail] = []
    for t in framed:
        if ok[t.records[0] : t.records[1]].all():
            good.append(t)
        else:
            others.append(t)
    if len(good) != len(framed):  # keep only the good tails' records, renumbered
        keep = np.concatenate([np.arange(*t.records) for t in good] or [np.zeros(0, np.int64)])
        begin, stop = begin[keep], stop[keep]
        n = 0
        for t in good:
            count = t.records[1] - t.records[0]
            t.records, n = (n, n + count), n + count
    fast = match_scalars(buf, begin, stop, checked) if begin.size else None
    subsets: list[FastScalars | None] = [None] * len(good)
    if fast is not None:
        subsets[:] = fast.pieces([*(t.records[0] for t in good), begin.size])
    for t, subset in zip(good, subsets, strict=True):
        lo, hi = t.records
        f, run = t.file, t.run
        if hi > lo:
            stats = ReadStats()
            run.collector.stats = stats
            batch = RecordBatch(f.path, buf, begin[lo:hi], stop[lo:hi], f.done - t.at)
            try:
                run.collector.batch(batch, subset, run.append_scalars)
            except BaseException:  # strict: a bad value
                run.broken = True
                raise
            f.bad_values += stats.bad_values
            f.corrupt_records += stats.corrupt_records
            f.corrupt_bytes += stats.corrupt_bytes
            f.problems += stats.problems
        if t.done > f.done:
            f.guard = buf[t.done - f.done + t.at - _GUARD : t.done - f.done + t.at]
        f.records += hi - lo
        f.size, f.done = t.size, t.done
    return others


class Reader:
    """A logdir read as it grows: every call returns everything, reading only what is new.

    Args:
        logdir: the logdir (or a run directory or an event file), a path or a URL.
        kinds: which kinds to read (default: all of :data:`~npsummary.reader.KINDS`).
        runs, tags, strict, decode, max_image_pixels: as for :func:`~npsummary.reader.load`.

    Each of :meth:`scalars`, :meth:`histograms`, :meth:`images`, :meth:`audio`, :meth:`text`,
    :meth:`pr_curves`, :meth:`tensors`, :meth:`hparams` and :meth:`load` first reads what was
    appended since the last call (:meth:`refresh`), then returns what the function of the same
    name in :mod:`npsummary.reader` would return for the logdir now; series that did not grow
    are the same objects as last time. A run whose files changed otherwise than by growing is
    read again (see the module docstring). Not for use from several threads at once.

        >>> live = reader.Reader("runs")
        >>> live.scalars()[("train", "loss")].values[-1]     # ... training goes on ...
        >>> live.scalars()[("train", "loss")].values[-1]     # reads only the new records

    Raises:
        TypeError, ValueError: bad arguments, as :func:`~npsummary.reader.load`.
    """

    def __init__(
        self,
        logdir: PathLike,
        *,
        kinds: Iterable[str] | None = None,
        runs: Pattern = None,
        tags: Pattern = None,
        strict: bool = False,
        decode: bool = False,
        max_image_pixels: int = MAX_IMAGE_PIXELS,
    ) -> None:
        self._path = os.fspath(logdir)
        self._kinds = frozenset(check_kinds(kinds))
        self._runs_re = compile_filter(runs, "runs")
        tags_re = compile_filter(tags, "tags")
        self._strict = check_flag(strict, "strict")
        decode = check_flag(decode, "decode")
        pixels = check_int(max_image_pixels, "max_image_pixels", minimum=1)
        strict = self._strict
        kinds_ = self._kinds

        def make(data: RunData, stats: ReadStats) -> _Collector:
            return _Collector(data, kinds_, tags_re, stats, strict, decode, pixels)

        self._make = make
        self._state: dict[str, _Run] = {}
        self._checked: Any = {}  # the bulk decoder's checked groups, shared by every run

    def refresh(self) -> None:
        """Read what was appended since the last call, and the runs and files that appeared.

        Raises:
            FileNotFoundError: the logdir does not exist (any more).
            npsummary._format.record.CorruptRecordError: with ``strict=True``; the run that
                raised is read again from its start by the next call.
        """
        # A filesystem per call: remote ones cache listings and sizes, which must be fresh.
        # On an object store, one listing of the whole sweep gives every size, and the runs
        # not read yet are fetched ahead, concurrently (what reader.load does).
        found, fs = open_sweep(
            filesystem_for(self._path),
            self._path,
            self._runs_re,
            prefetch=lambda run: run.name not in self._state,
        )
        try:
            self._refresh(found, fs)
        finally:
            if isinstance(fs, PrefetchedFiles):
                fs.close()  # its fetches left ahead (a read that raised) and threads

    def _refresh(self, found: list[Run], fs: FileSystem) -> None:
        identity: Callable[[str], Hashable] = getattr(fs, "identity", lambda p: None)
        state: dict[str, _Run] = {}
        grown: list[_Tail] = []
        try:
            for run in found:
                known = self._state.pop(run.name, None)  # one that raises is read afresh
                if known is None or not known.extends(fs, run.files, identity):
                    known = _Run(run.name, self._make)
                size = known.only_grown(fs, run.files)
                if size is not None:
                    grown.append(_Tail(known, run.files, known.files[-1], size))
                else:
                    self._read(known, fs, run.files, identity)
                state[run.name] = known
            for i in range(0, len(grown), _TAILS):
                for t in _read_tails(fs, grown[i : i + _TAILS], self._checked):
                    try:
                        state[t.run.data.name] = self._read(t.run, fs, t.paths, identity)
                    except BaseException:
                        t.run.broken = True
                        raise
        except BaseException:
            merged = {**self._state, **state}
            self._state = {name: merged[name] for name in sorted(merged)}
            raise
        self._state = state

    def _read(self, run: _Run, fs: FileSystem, paths: tuple[str, ...], identity: Any) -> _Run:
        """``run`` with what is new in ``paths`` read, or the run read again from its start."""
        try:
            run.read(fs, paths, identity, self._strict)
            return run
        except _Rewritten:
            run = _Run(run.data.name, self._make)
            run.read(fs, paths, identity, self._strict)
            return run

    @property
    def runs(self) -> list[str]:
        """The runs found by the last call, sorted."""
        return list(self._state)

    @property
    def stats(self) -> ReadStats:
        """The counts a fresh read of the logdir would report now (files, bytes and records
        read, corrupt records and undecodable values skipped, the torn tails as they stand)."""
        out = ReadStats()
        for run in self._state.values():
            for f in run.files:
                out.files += 1
                out.bytes += f.size
                out.records += f.records
                out.corrupt_records += f.corrupt_records
                out.corrupt_bytes += f.corrupt_bytes
                out.bad_values += f.bad_values
                out.problems += f.problems
                if f.torn:
                    out.torn_tails += 1
                    out.torn_bytes += f.torn
                    out.problems.append(f"{f.path}: torn tail of {f.torn} bytes at byte {f.done}")
        del out.problems[_MAX_PROBLEMS:]
        return out

    def _kind(self, kind: str) -> dict[tuple[str, str], Any]:
        if kind not in self._kinds:
            raise ValueError(
                f"this Reader does not read {kind}: it was made with kinds={sorted(self._kinds)}"
            )
        self.refresh()
        return {
            (name, tag): series
            for name, run in self._state.items()
            for (k, tag), series in run.shaped().items()
            if k == kind
        }

    def load(self) -> Logdata:
        """Everything of the Reader's kinds, as :func:`~npsummary.reader.load` returns it."""
        self.refresh()
        data = Logdata(runs=list(self._state), stats=self.stats)
        for name, run in self._state.items():
            for (kind, tag), series in run.shaped().items():
                getattr(data, kind)[(name, tag)] = series
        data.hparams = _hparams([run.data for run in self._state.values()], data.scalars)
        return data

    def scalars(self, *, last_write_wins: bool = False) -> dict[tuple[str, str], ScalarSeries]:
        """As :func:`~npsummary.reader.scalars`, reading only what is new."""
        found = self._kind("scalars")
        if check_flag(last_write_wins, "last_write_wins"):
            return {key: s.last_write_wins() for key, s in found.items()}
        return found

    def histograms(
        self, *, last_write_wins: bool = False
    ) -> dict[tuple[str, str], HistogramSeries]:
        """As :func:`~npsummary.reader.histograms`, reading only what is new."""
        found = self._kind("histograms")
        if check_flag(last_write_wins, "last_write_wins"):
            return {key: s.last_write_wins() for key, s in found.items()}
        return found

    def images(self) -> dict[tuple[str, str], ImageSeries]:
        """As :func:`~npsummary.reader.images` (decoded if the Reader was made with ``decode``)."""
        return self._kind("images")

    def audio(self) -> dict[tuple[str, str], AudioSeries]:
        """As :func:`~npsummary.reader.audio`."""
        return self._kind("audio")

    def text(self) -> dict[tuple[str, str], TextSeries]:
        """As :func:`~npsummary.reader.text`."""
        return self._kind("text")

    def pr_curves(self) -> dict[tuple[str, str], PrCurveSeries]:
        """As :func:`~npsummary.reader.pr_curves`."""
        return self._kind("pr_curves")

    def tensors(self, *, plugin: str | None = None) -> dict[tuple[str, str], TensorSeries]:
        """As :func:`~npsummary.reader.tensors`."""
        found = self._kind("tensors")
        if plugin is None:
            return found
        return {key: s for key, s in found.items() if s.plugin_name == plugin}

    def hparams(self) -> dict[str, HParams]:
        """As :func:`~npsummary.reader.hparams`."""
        if "hparams" not in self._kinds:
            self._kind("hparams")  # raises
        return self.load().hparams
