"""One pass over a logdir into the reader's model: every record of every run, nothing sampled.

Per chunk of records, single-scalar events are decoded in bulk (:mod:`._fastscalar`) and the
rest are parsed with protobuf one by one (:mod:`._values`). Both paths tag each value with its
record's sequence number in the run, so a series keeps file order whichever path decoded it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import proto
from ._discover import Run, discover
from ._fastscalar import match_scalars
from ._framing import ReadStats, RecordBatch, read_batches
from ._io import FileSystem
from ._values import KINDS, convert, kind_of

__all__ = ["RunData", "load_runs"]


@dataclass
class _ScalarParts:
    seq: list[np.ndarray] = field(default_factory=list)
    steps: list[np.ndarray] = field(default_factory=list)
    walls: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)


@dataclass
class RunData:
    """Everything read from one run, before it is shaped into series."""

    name: str
    scalars: dict[str, _ScalarParts] = field(default_factory=dict)
    # (kind, tag) -> list of (seq, step, wall_time, converted value)
    items: dict[tuple[str, str], list[tuple[int, int, float, Any]]] = field(default_factory=dict)
    plugins: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    def scalar_arrays(self, tag: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = self.scalars[tag]
        seq = np.concatenate(parts.seq)
        steps = np.concatenate(parts.steps)
        walls = np.concatenate(parts.walls)
        values = np.concatenate(parts.values)
        if seq.size > 1 and not (seq[1:] > seq[:-1]).all():
            order = np.argsort(seq, kind="stable")
            steps, walls, values = steps[order], walls[order], values[order]
        return steps, walls, values


class _Collector:
    def __init__(
        self,
        run: RunData,
        kinds: frozenset[str],
        tags: re.Pattern[str] | None,
        stats: ReadStats,
        strict: bool,
    ) -> None:
        self.run = run
        self.kinds = kinds
        self.tags = tags
        self.stats = stats
        self.strict = strict
        self.seq = 0
        self._wanted: dict[str, bool] = {}

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

    def batch(self, batch: RecordBatch) -> None:
        slow = np.ones(batch.starts.size, bool)
        if batch.starts.size >= 64:
            slow = self._fast(batch, slow)
        buf = batch.buf
        rest = np.flatnonzero(slow)
        for i, a, b in zip(
            rest.tolist(), batch.starts[rest].tolist(), batch.ends[rest].tolist(), strict=True
        ):
            self._record(buf[a:b], self.seq + i, batch.path, a)
        self.seq += batch.starts.size

    def _fast(self, batch: RecordBatch, slow: np.ndarray) -> np.ndarray:
        fast = match_scalars(batch.buf, batch.starts, batch.ends)
        if not fast.index.size:
            return slow
        order = np.argsort(fast.group, kind="stable")
        bounds = np.searchsorted(fast.group[order], np.arange(len(fast.tags) + 1))
        for g, (tag, meta) in enumerate(zip(fast.tags, fast.metadata, strict=True)):
            sel = order[bounds[g] : bounds[g + 1]]
            if not sel.size:
                continue  # the group failed its check: its records stay on the general path
            md = None if meta is None else proto.SummaryMetadata.FromString(meta)
            if md is not None and not md.HasField("plugin_data"):
                md = None
            plugin = self.plugin(tag, md)
            if kind_of("simple_value" if meta is None else "tensor", plugin) != "scalars":
                continue  # a float tensor of another plugin: the general path files it
            slow[fast.index[sel]] = False
            if "scalars" not in self.kinds or not self.wanted(tag):
                continue
            parts = self.run.scalars.setdefault(tag, _ScalarParts())
            parts.seq.append(fast.index[sel] + self.seq)
            parts.steps.append(fast.steps[sel])
            parts.walls.append(fast.wall_times[sel])
            parts.values.append(fast.values[sel].astype(np.float64))
        return slow

    def _record(self, payload: bytes, seq: int, path: str, offset: int) -> None:
        try:
            event = proto.Event.FromString(payload)
        except Exception:
            self.stats.corrupt(
                path, offset - 12, len(payload) + 16, "record is not an Event", self.strict
            )
            return
        if not event.HasField("summary"):
            return
        for value in event.summary.value:
            self._value(value, seq, int(event.step), float(event.wall_time), path)

    def _value(self, value: Any, seq: int, step: int, wall: float, path: str) -> None:
        tag = value.tag
        oneof = value.WhichOneof("value")
        plugin = self.plugin(tag, value.metadata if value.HasField("metadata") else None)
        kind = kind_of(oneof, plugin)
        if oneof is None and kind != "hparams":
            return  # metadata only: nothing to read
        if kind not in self.kinds or not self.wanted(tag):
            return
        try:
            item = convert(kind, value, oneof)
        except (ValueError, TypeError, OverflowError) as exc:
            self.stats.bad_values += 1
            self.stats.note(f"{path}: {kind} value {tag!r} at step {step} skipped: {exc}")
            return
        if kind == "scalars":
            parts = self.run.scalars.setdefault(tag, _ScalarParts())
            parts.seq.append(np.array([seq]))
            parts.steps.append(np.array([step], np.int64))
            parts.walls.append(np.array([wall]))
            parts.values.append(np.array([item], np.float64))
        else:
            self.run.items.setdefault((kind, tag), []).append((seq, step, wall, item))


def load_runs(
    fs: FileSystem,
    path: str,
    *,
    kinds: Iterable[str] = KINDS,
    runs: re.Pattern[str] | None = None,
    tags: re.Pattern[str] | None = None,
    strict: bool = False,
    stats: ReadStats | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[list[RunData], ReadStats]:
    """Read every run under ``path`` (see :func:`npsummary.reader.load`); ``progress`` is
    called after each chunk with the run's name and the records read so far."""
    kinds = frozenset(kinds)
    stats = stats if stats is not None else ReadStats()
    out: list[RunData] = []
    found: list[Run] = discover(fs, path, runs)
    for run in found:
        data = RunData(run.name)
        collector = _Collector(data, kinds, tags, stats, strict)
        for file in run.files:
            for batch in read_batches(fs, file, stats, strict=strict):
                collector.batch(batch)
                if progress is not None:
                    progress(run.name, stats.records)
        out.append(data)
    return out, stats
