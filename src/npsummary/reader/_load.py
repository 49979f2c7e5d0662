"""One pass over a logdir into the reader's model: every record of every run, nothing sampled.

Per chunk of records, single-scalar events are decoded in bulk (:mod:`._fastscalar`) and the
rest are parsed with protobuf one by one (:mod:`._values`). Both paths tag each value with its
record's sequence number in the run, so a series keeps file order whichever path decoded it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import proto
from .._format.pngread import MAX_IMAGE_PIXELS
from .._format.record import CorruptRecordError
from ._discover import Run
from ._fastscalar import Checked, FastScalars, match_scalars
from ._framing import ReadStats, RecordBatch, payload_ok, read_batches, segment_records
from ._io import FileSystem, LocalFileSystem
from ._storage.sweep import open_sweep
from ._values import KINDS, convert, decode_media, kind_of

__all__ = ["Options", "RunData", "iter_run_data", "load_runs", "merge_stats", "read_run"]

#: Takes a batch's bulk-decoded scalars, grouped: ``(fast, [(tag, lo, hi), ...])``; True when
#: it filed them (see :meth:`_Collector.batch`).
Straight = Callable[[FastScalars, list[tuple[str, int, int]]], bool]


@dataclass
class _ScalarParts:
    seq: list[np.ndarray] = field(default_factory=list)
    steps: list[np.ndarray] = field(default_factory=list)
    walls: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps, wall times and values in record order: the parts joined."""
        if not self.seq:  # finished: one part each, in file order
            return self.steps[0], self.walls[0], self.values[0]
        if len(self.seq) == 1:
            seq, steps, walls, values = self.seq[0], self.steps[0], self.walls[0], self.values[0]
        else:
            seq, steps, walls, values = (
                np.concatenate(x) for x in (self.seq, self.steps, self.walls, self.values)
            )
        if seq.size > 1 and not (seq[1:] > seq[:-1]).all():
            order = np.argsort(seq, kind="stable")
            steps, walls, values = steps[order], walls[order], values[order]
        return steps, walls, values


@dataclass
class RunData:
    """Everything read from one run, before it is shaped into series."""

    name: str
    scalars: dict[str, _ScalarParts] = field(default_factory=dict)
    # (kind, tag) -> list of (seq, step, wall_time, converted value)
    items: dict[tuple[str, str], list[tuple[int, int, float, Any]]] = field(default_factory=dict)
    plugins: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    def scalar_arrays(self, tag: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.scalars[tag].arrays()

    def finish(self) -> None:
        """Join each tag's parts into its final arrays (and drop the sequence numbers): a run
        read to its end then holds its output arrays and nothing else."""
        for tag, parts in self.scalars.items():
            if parts.seq:
                steps, walls, values = self.scalar_arrays(tag)
                self.scalars[tag] = _ScalarParts([], [steps], [walls], [values])


class _Collector:
    def __init__(
        self,
        run: RunData,
        kinds: frozenset[str],
        tags: re.Pattern[str] | None,
        stats: ReadStats,
        strict: bool,
        decode: bool = False,
        max_image_pixels: int = MAX_IMAGE_PIXELS,
    ) -> None:
        self.run = run
        self.kinds = kinds
        self.tags = tags
        self.stats = stats
        self.strict = strict
        self.decode = decode
        self.max_image_pixels = max_image_pixels
        self.seq = 0
        self._wanted: dict[str, bool] = {}
        self._checked: Checked = {}
        self._metadata_parsed: dict[bytes, Any] = {}  # see _metadata

    def wanted(self, tag: str) -> bool:
        ok = self._wanted.get(tag)
        if ok is None:
            ok = self.tags is None or self.tags.search(tag) is not None
            self._wanted[tag] = ok
        return ok

    def plugin(self, tag: str, metadata: Any | None) -> str:
        known = self.run.plugins.get(tag)
        if known is None:
            if metadata is None:
                known = ("", b"")
            else:
                data = metadata.plugin_data
                known = (data.plugin_name, bytes(data.content))
            self.run.plugins[tag] = known
        return known[0]

    def batch(
        self, batch: RecordBatch, fast: FastScalars | None = None, straight: Straight | None = None
    ) -> None:
        """Decode the (CRC-checked) records of a batch; ``fast``: its scalars, already
        bulk-decoded (with those of other files: see :func:`read_runs`).

        Bulk-decoded scalars and protobuf-parsed records are filed so that a tag's kind still
        comes from its first value in file order: the parsed records are read first, and a tag
        first met in this batch takes the metadata of whichever path saw it first.

        ``straight``: when all the batch adds is ``fast``'s rows (grouped) to tags this run has
        kept scalars of before (see :meth:`_known_groups`), it is offered each group's tag and
        rows; if it takes them (returns True), nothing else is filed."""
        n = batch.starts.size
        if fast is None and n >= 64:
            fast = match_scalars(batch.buf, batch.starts, batch.ends, self._checked)
        if fast is None:
            rest = np.arange(n)
        elif fast.index.size == n:  # every record a bulk-decoded scalar (a live tail, often)
            rest = fast.index[:0]
        else:
            slow = np.ones(n, bool)
            slow[fast.index] = False
            rest = np.flatnonzero(slow)
        events = self._parse(batch, rest)
        if fast is not None and fast.index.size:
            if straight is not None:
                groups = self._known_groups(fast, events)
                if groups is not None and straight(fast, groups):
                    self.seq += n
                    return
            back = self._fast(fast, self._first_seen(events))
            events.update(self._parse(batch, back))
        for i in sorted(events):
            event = events[i]
            if event is not None and event.HasField("summary"):
                step, wall = int(event.step), float(event.wall_time)
                where = batch.base + int(batch.starts[i]) - 12
                for value in event.summary.value:
                    self._value(value, self.seq + i, step, wall, batch.path, where)
        self.seq += n

    def _parse(self, batch: RecordBatch, which: np.ndarray) -> dict[int, Any]:
        out: dict[int, Any] = {}
        if not which.size:
            return out
        buf = batch.buf
        starts, ends = batch.starts[which].tolist(), batch.ends[which].tolist()
        for i, a, b in zip(which.tolist(), starts, ends, strict=True):
            try:
                out[i] = proto.Event.FromString(buf[a:b])
            except Exception:  # DecodeError, or RuntimeError on some backends
                where = batch.base + a - 12
                self.stats.corrupt(
                    batch.path, where, b - a + 16, "record is not an Event", self.strict
                )
        return out

    def _first_seen(self, events: dict[int, Any]) -> dict[str, tuple[int, Any]]:
        """For tags not yet known in the run: index and metadata of their first parsed value."""
        first: dict[str, tuple[int, Any]] = {}
        known = self.run.plugins
        for i in sorted(events):
            event = events[i]
            for value in event.summary.value:
                if value.tag not in known and value.tag not in first:
                    md = value.metadata if value.HasField("metadata") else None
                    first[value.tag] = (i, md)
        return first

    def _fast(self, fast: FastScalars, first_seen: dict[str, tuple[int, Any]]) -> np.ndarray:
        """File the bulk-decoded scalars. Returns the records sent back to the general path:
        groups that turn out not to be scalars of this run (another plugin's float tensors)."""
        columns = [fast.index, fast.steps, fast.wall_times, fast.values]
        if fast.group_counts is not None:  # rows already in group order
            counts = fast.group_counts
        else:
            group = fast.group
            if len(fast.tags) <= 1 << 16:
                group = group.astype(np.uint16)  # a stable sort of 16-bit keys is a radix sort
            order = np.argsort(group, kind="stable")
            counts = np.bincount(group, minlength=len(fast.tags)).tolist()
            columns = [column[order] for column in columns]
        index = columns[0]
        back: list[np.ndarray] = []
        kept: list[tuple[str, int, int]] = []  # (tag, rows lo .. hi of the grouped columns)
        hi = 0
        for count, tag, meta in zip(counts, fast.tags, fast.metadata, strict=True):
            lo, hi = hi, hi + count
            if not count:
                continue  # the group failed its check: its records stay on the general path
            try:
                md = self._metadata(meta)
            except Exception:  # corrupt metadata: the general path counts these records
                back.append(index[lo:hi])
                continue
            earlier = first_seen.get(tag)
            if earlier is not None and earlier[0] < int(index[lo]):
                self.plugin(tag, earlier[1])
            plugin = self.plugin(tag, md)
            if not _scalar_group(meta, plugin):
                back.append(index[lo:hi])
                continue
            if "scalars" in self.kinds and self.wanted(tag):
                kept.append((tag, lo, hi))
        if sum(hi - lo for _, lo, hi in kept) == index.size:
            # Every row is kept: the parts are views of the grouped columns.
            seq = index + self.seq
            for tag, lo, hi in kept:
                self._keep(tag, seq[lo:hi], *(column[lo:hi] for column in columns[1:]))
        else:  # views would hold the rows left out: each part gets its own arrays
            for tag, lo, hi in kept:
                parts = (column[lo:hi].copy() for column in columns[1:])
                self._keep(tag, index[lo:hi] + self.seq, *parts)
        return np.sort(np.concatenate(back)) if back else np.zeros(0, np.int64)

    def _known_groups(
        self, fast: FastScalars, events: dict[int, Any]
    ) -> list[tuple[str, int, int]] | None:
        """When ``fast``'s rows are in group order, every group is of a tag this run has kept
        scalars of before and would be kept again (:meth:`_fast`'s rule), and every value of
        ``events`` (the batch's other records) is of a known tag and passed over (another
        kind, a tag not wanted, metadata only): each group's tag and rows (``lo .. hi - 1``).
        Else None."""
        if fast.group_counts is None:
            return None
        known = self.run.plugins
        groups: list[tuple[str, int, int]] = []
        hi = 0
        for count, tag, meta in zip(fast.group_counts, fast.tags, fast.metadata, strict=True):
            lo, hi = hi, hi + count
            if not count:
                continue
            if tag not in self.run.scalars or not self.wanted(tag):
                return None
            try:
                self._metadata(meta)
            except Exception:  # corrupt metadata: _fast sends these to the general path
                return None
            if not _scalar_group(meta, known[tag][0]):
                return None
            groups.append((tag, lo, hi))
        for event in events.values():
            if event.HasField("summary") and not all(map(self._passed_over, event.summary.value)):
                return None
        return groups

    def _passed_over(self, value: Any) -> bool:
        """Whether :meth:`_value` keeps nothing of ``value``, a value of a tag already known."""
        known = self.run.plugins.get(value.tag)
        return known is not None and self._kept_kind(value, known[0]) is None

    def _kept_kind(self, value: Any, plugin: str) -> str | None:
        """The kind ``value`` (of a tag of ``plugin``) is kept as, or None if it is not."""
        oneof = value.WhichOneof("value")
        kind = kind_of(oneof, plugin)
        if oneof is None and kind != "hparams":
            return None  # metadata only: nothing to read
        if kind not in self.kinds or not self.wanted(value.tag):
            return None
        return kind

    def _metadata(self, meta: bytes | None) -> Any | None:
        """A group's SummaryMetadata (None for legacy values, or without plugin data), parsed
        once per distinct bytes in the run (a live run meets the same few in every refresh).

        Raises:
            Exception: the bytes do not parse (protobuf's DecodeError, or another error on
                some backends); nothing is kept then.
        """
        if meta is None:
            return None
        known = self._metadata_parsed.get(meta, self._metadata_parsed)
        if known is self._metadata_parsed:
            md = proto.SummaryMetadata.FromString(meta)
            known = self._metadata_parsed[meta] = md if md.HasField("plugin_data") else None
        return known

    def _keep(
        self, tag: str, seq: np.ndarray, steps: np.ndarray, walls: np.ndarray, values: np.ndarray
    ) -> None:
        parts = self.run.scalars.setdefault(tag, _ScalarParts())
        parts.seq.append(seq)
        parts.steps.append(steps)
        parts.walls.append(walls)
        parts.values.append(values)

    def _value(self, value: Any, seq: int, step: int, wall: float, path: str, offset: int) -> None:
        tag = value.tag
        plugin = self.plugin(tag, value.metadata if value.HasField("metadata") else None)
        kind = self._kept_kind(value, plugin)
        if kind is None:
            return
        try:
            item = convert(kind, value, value.WhichOneof("value"))
            if self.decode:
                item = decode_media(kind, item, self.max_image_pixels)
        except Exception as exc:  # whatever a plugin's content makes a decoder raise
            self._bad_value(path, offset, kind, tag, step, exc)
            return
        if kind == "scalars":
            parts = self.run.scalars.setdefault(tag, _ScalarParts())
            parts.seq.append(np.array([seq]))
            parts.steps.append(np.array([step], np.int64))
            parts.walls.append(np.array([wall]))
            parts.values.append(np.array([item], np.float64))
        else:
            self.run.items.setdefault((kind, tag), []).append((seq, step, wall, item))

    def _bad_value(
        self, path: str, offset: int, kind: str, tag: str, step: int, exc: Exception
    ) -> None:
        """Count a value whose content does not decode, or raise it when strict."""
        reason = str(exc) or type(exc).__name__
        where = f"run {self.run.name!r}, {kind} tag {tag!r}, step {step}"
        if self.strict:
            raise CorruptRecordError(f"{path}: {where}: {reason}", offset) from exc
        self.stats.bad_values += 1
        self.stats.note(f"{path}: {where} skipped: {reason}")


def _scalar_group(meta: bytes | None, plugin: str) -> bool:
    """Whether a bulk-decoded group (``meta``: its serialized metadata, None for legacy
    values) of a tag of ``plugin`` holds scalars (not another plugin's float tensors)."""
    return kind_of("simple_value" if meta is None else "tensor", plugin) == "scalars"


@dataclass(frozen=True)
class Options:
    """What to read from each run (see :func:`npsummary.reader.load`); picklable, so a worker
    process gets the same options."""

    kinds: frozenset[str] = frozenset(KINDS)
    tags: re.Pattern[str] | None = None
    strict: bool = False
    decode: bool = False
    max_image_pixels: int = MAX_IMAGE_PIXELS


def read_run(
    fs: FileSystem,
    run: Run,
    options: Options,
    progress: Callable[[str, int], None] | None = None,
    records_before: int = 0,
) -> tuple[RunData, ReadStats]:
    """Read one run: its data (finished, see :meth:`RunData.finish`) and what its read met.
    ``progress`` is called after each chunk with the run's name and ``records_before`` plus
    the records of this run read so far."""
    stats = ReadStats()
    data = RunData(run.name)
    o = options
    collector = _Collector(data, o.kinds, o.tags, stats, o.strict, o.decode, o.max_image_pixels)
    for file in run.files:
        for batch in read_batches(fs, file, stats, strict=o.strict):
            collector.batch(batch)
            if progress is not None:
                progress(run.name, records_before + stats.records)
    data.finish()
    return data, stats


_SMALL_FILE = 1 << 20  # files up to this size are read whole, with other runs' files
_TOGETHER = 2 << 20  # bytes of small runs framed and decoded at once (measured best, 1-8 MB)


def read_runs(fs: FileSystem, runs: list[Run], options: Options) -> list[tuple[RunData, ReadStats]]:
    """:func:`read_run` of each of ``runs``, in order (one task of a worker process).

    A sweep's runs are often small (a few hundred KB), and per file the framing, CRC and bulk
    decoding cost dozens of NumPy calls whatever its size. So consecutive runs of small local
    files (``_SMALL_FILE``) are read whole and end to end into one buffer of up to
    ``_TOGETHER`` bytes, framed, CRC-checked and bulk-decoded at once, then filed run by run
    and file by file exactly as :func:`read_run` files them. Only clean files go this way:
    if the buffer is not one chain of valid records with a record starting at every file's
    first byte and none crossing into the next file (a corrupt record, a torn tail, a file
    that changed size), its runs are read again one file at a time by :func:`read_run`,
    which reports what it meets as always."""
    out: list[tuple[RunData, ReadStats]] = []
    group: list[tuple[Run, list[int]]] = []
    held = 0

    def flush() -> None:
        nonlocal held
        if len(group) > 1:
            together = _read_together(fs, group, options)
            if together is not None:
                out.extend(together)
                group.clear()
        for run, _ in group:
            out.append(read_run(fs, run, options))
        group.clear()
        held = 0

    for run in runs:
        sizes = _small_sizes(fs, run)
        if sizes is None:
            flush()
            out.append(read_run(fs, run, options))
        else:
            if held + sum(sizes) > _TOGETHER:
                flush()
            group.append((run, sizes))
            held += sum(sizes)
    flush()
    return out


@dataclass
class PackedRuns:
    """:func:`read_runs`' result as a worker process sends it back: the runs without their
    scalar series, whose arrays travel end to end in three arrays (``lengths``: each series'
    rows, series in run order and each run's tag order). Three large arrays pickle and
    unpickle several times faster than thousands of small ones, and leave the caller fewer
    objects to track."""

    results: list[tuple[RunData, ReadStats]]
    tags: list[list[str]]
    lengths: list[int]
    steps: np.ndarray
    walls: np.ndarray
    values: np.ndarray

    def unpack(self) -> list[tuple[RunData, ReadStats]]:
        """The runs as :func:`read_runs` returned them (their arrays views of the three)."""
        ends = np.cumsum(self.lengths).tolist()
        k = 0
        for (data, _), tags in zip(self.results, self.tags, strict=True):
            for tag in tags:
                a, b = ends[k] - self.lengths[k], ends[k]
                data.scalars[tag] = _ScalarParts(
                    [], [self.steps[a:b]], [self.walls[a:b]], [self.values[a:b]]
                )
                k += 1
        return self.results


def read_runs_packed(fs: FileSystem, runs: list[Run], options: Options) -> PackedRuns:
    """:func:`read_runs`, packed for the trip back from a worker process."""
    results = read_runs(fs, runs, options)
    tags: list[list[str]] = []
    parts: list[_ScalarParts] = []
    for data, _ in results:
        tags.append(list(data.scalars))
        parts.extend(data.scalars.values())
        data.scalars = {}
    columns = [
        np.concatenate(column) if column else np.zeros(0, dtype)
        for column, dtype in (
            ([p.steps[0] for p in parts], np.int64),
            ([p.walls[0] for p in parts], np.float64),
            ([p.values[0] for p in parts], np.float64),
        )
    ]
    lengths = [p.steps[0].size for p in parts]
    return PackedRuns(results, tags, lengths, *columns)


def _small_sizes(fs: FileSystem, run: Run) -> list[int] | None:
    """Sizes of the run's files if it is local and every file is small, else None."""
    if not isinstance(fs, LocalFileSystem):
        return None
    try:
        sizes = [fs.size(file) for file in run.files]
    except OSError:
        return None
    return sizes if all(size <= _SMALL_FILE for size in sizes) else None


def _read_together(
    fs: FileSystem, group: list[tuple[Run, list[int]]], options: Options
) -> list[tuple[RunData, ReadStats]] | None:
    """The runs of ``group`` read from one buffer (see :func:`read_runs`), or None when any
    of its files is not clean."""
    parts: list[bytes] = []
    paths: list[str] = []
    try:
        for run, sizes in group:
            for file, size in zip(run.files, sizes, strict=True):
                with fs.open(file) as f:
                    content = f.read(size)
                if len(content) != size:
                    return None
                parts.append(content)
                paths.append(file)
    except OSError:
        return None
    buf = b"".join(parts)
    offsets = np.cumsum([0, *map(len, parts)])
    del parts
    records = segment_records(buf, offsets)  # each file's records, each starting in its file
    if records is None:
        return None
    starts, payload_ends, first = records
    if not payload_ok(buf, starts, payload_ends).all():
        return None
    checked: Checked = {}
    pieces = match_scalars(buf, starts, payload_ends, checked).pieces(first.tolist())
    out: list[tuple[RunData, ReadStats]] = []
    k = 0
    o = options
    for run, _ in group:
        stats = ReadStats()
        data = RunData(run.name)
        collector = _Collector(data, o.kinds, o.tags, stats, o.strict, o.decode, o.max_image_pixels)
        collector._checked = checked
        for file in run.files:
            a, b = int(first[k]), int(first[k + 1])
            stats.files += 1
            stats.bytes += int(offsets[k + 1] - offsets[k])
            stats.records += b - a
            if b > a:
                batch = RecordBatch(file, buf, starts[a:b], payload_ends[a:b], -int(offsets[k]))
                collector.batch(batch, pieces[k])
            k += 1
        data.finish()
        out.append((data, stats))
    return out


def merge_stats(total: ReadStats, part: ReadStats) -> None:
    """Add what one run's read met to ``total``, as if both had been one read."""
    total.files += part.files
    total.bytes += part.bytes
    total.records += part.records
    total.corrupt_records += part.corrupt_records
    total.corrupt_bytes += part.corrupt_bytes
    total.torn_tails += part.torn_tails
    total.torn_bytes += part.torn_bytes
    total.bad_values += part.bad_values
    for line in part.problems:
        total.note(line)


def iter_run_data(
    fs: FileSystem,
    path: str,
    *,
    kinds: Iterable[str] = KINDS,
    runs: re.Pattern[str] | None = None,
    tags: re.Pattern[str] | None = None,
    strict: bool = False,
    decode: bool = False,
    max_image_pixels: int = MAX_IMAGE_PIXELS,
    stats: ReadStats | None = None,
    progress: Callable[[str, int], None] | None = None,
    workers: int | None = None,
) -> Iterator[tuple[RunData, ReadStats]]:
    """Read every run under ``path``, yielding each (with what its own read met) as soon as it
    and every run before it are read: runs in name order, each equal to what a serial read
    gives, bit for bit.

    ``stats`` gets each run's counts and problems as it is yielded (in the same order and with
    the same lines as one serial read). ``workers`` is the number of processes
    (:func:`._parallel.worker_count`; 1 reads in this thread). ``progress`` is called with a
    run's name and the records read so far: after each chunk when serial, after each group of
    runs with workers. Only a bounded number of runs is in flight, so memory holds the runs
    the caller keeps plus a few per worker."""
    from ._parallel import ordered_map, split, worker_count

    options = Options(frozenset(kinds), tags, strict, decode, max_image_pixels)
    total = stats if stats is not None else ReadStats()
    found, fs = open_sweep(fs, path, runs)
    count = worker_count(workers, fs, found)
    groups = split(found, max(count, 1))
    if count <= 1:
        batches: Iterable[list[tuple[RunData, ReadStats]]] = (
            read_runs(fs, group, options) for group in groups
        )
    else:
        batches = (
            packed.unpack() for packed in ordered_map(read_runs_packed, fs, groups, options, count)
        )
    for results in batches:
        for data, part in results:
            merge_stats(total, part)
            if progress is not None:
                progress(data.name, total.records)
            yield data, part


def load_runs(
    fs: FileSystem, path: str, *, stats: ReadStats | None = None, **options: Any
) -> tuple[list[RunData], ReadStats]:
    """Read every run under ``path`` (see :func:`npsummary.reader.load`) into a list; the
    arguments are :func:`iter_run_data`'s."""
    stats = stats if stats is not None else ReadStats()
    return [data for data, _ in iter_run_data(fs, path, stats=stats, **options)], stats
