"""Long tables of a logdir: pandas DataFrames, Arrow tables and Parquet files.

pandas and pyarrow are optional (``pip install pandas pyarrow``) and imported only when one
of these functions is called. Scalars give the columns ``run, tag, step, value, wall_time``
(tbparse's names, so notebooks can switch); the other kinds give ``run, tag, step, wall_time``
and a ``value`` column of objects (``[k, 3]`` buckets, lists of image bytes, ...); hparams give
one row per session and hyperparameter or metric: ``run, tag, value``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, BinaryIO

import numpy as np

from .._common.convert import check_choice, check_int
from ._api import PathLike, Pattern, iter_runs, load
from ._atomic import write_atomically
from ._framing import ReadStats
from ._load import merge_stats
from ._logdata import Logdata
from ._values import KINDS

__all__ = [
    "arrow_table",
    "columns",
    "iter_batches",
    "iter_tables",
    "read_table",
    "to_arrow",
    "to_pandas",
    "to_parquet",
    "write_parquet",
    "write_parquet_batches",
]


def _require(module: str) -> Any:
    import importlib

    package = module.split(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name not in (package, module):
            raise ImportError(f"{package} is installed but does not import: {exc}") from exc
        raise ImportError(f"this needs {package}: pip install {package}") from None
    except ImportError as exc:
        # Installed but unusable, e.g. pyarrow 25 beside NumPy 1.x: say why, not "install it".
        raise ImportError(f"{package} is installed but does not import: {exc}") from exc


def _payload(kind: str, series: Any) -> list[Any]:
    field = {
        "histograms": "buckets",
        "images": "images",
        "audio": "clips",
        "text": "texts",
        "pr_curves": "data",
        "tensors": "tensors",
    }[kind]
    values: list[Any] = getattr(series, field)
    return values


def columns(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """The table of ``kind`` as a dict of equal-length columns (NumPy arrays or lists)."""
    return read_table(logdir, kind, runs=runs, tags=tags, workers=workers)[0]


def read_table(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    workers: int | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[dict[str, Any], ReadStats]:
    """:func:`columns`, with what the read met (corrupt records skipped, ...)."""
    check_choice(kind, "kind", tuple(KINDS))
    data = load(
        logdir,
        kinds=(kind,),
        runs=runs,
        tags=tags,
        strict=strict,
        workers=workers,
        progress=progress,
    )
    return _columns(data, kind), data.stats


def iter_tables(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    workers: int | None = None,
    stats: ReadStats | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """The columns of :func:`read_table`, one run at a time (runs without rows left out); their
    concatenation is :func:`read_table`'s table. ``stats`` gathers what the read meets. hparams
    rows need every run's metrics at once: that kind is read whole and yielded as one table."""
    check_choice(kind, "kind", tuple(KINDS))
    stats = stats if stats is not None else ReadStats()
    if kind == "hparams":
        data = load(logdir, kinds=(kind,), runs=runs, tags=tags, strict=strict, workers=workers)
        merge_stats(stats, data.stats)
        return iter([_columns(data, kind)])
    found = iter_runs(
        logdir,
        kinds=(kind,),
        runs=runs,
        tags=tags,
        strict=strict,
        workers=workers,
        stats=stats,
        progress=progress,
    )
    return (cols for cols in (_columns(run, kind) for run in found) if len(cols["run"]))


def _columns(data: Any, kind: str) -> dict[str, Any]:
    if kind == "hparams":
        rows = [
            (run, name, value)
            for run, hp in data.hparams.items()
            for name, value in [*hp.hparams.items(), *hp.metrics.items()]
        ]
        return {
            "run": [r[0] for r in rows],
            "tag": [r[1] for r in rows],
            "value": [r[2] for r in rows],
        }
    found: dict[tuple[str, str], Any] = getattr(data, kind)
    counts = [len(s) for s in found.values()]
    run_col = np.repeat(np.array([k[0] for k in found], dtype=object), counts)
    tag_col = np.repeat(np.array([k[1] for k in found], dtype=object), counts)
    steps = np.concatenate([s.steps for s in found.values()]) if found else np.zeros(0, np.int64)
    walls = np.concatenate([s.wall_times for s in found.values()]) if found else np.zeros(0)
    if kind == "scalars":
        values: Any = np.concatenate([s.values for s in found.values()]) if found else np.zeros(0)
    else:
        values = [v for s in found.values() for v in _payload(kind, s)]
    return {"run": run_col, "tag": tag_col, "step": steps, "value": values, "wall_time": walls}


def _concatenate(parts: list[Any]) -> Any:
    """One column from its parts (all arrays, or lists), emptying ``parts`` as it goes."""
    out: Any
    if parts and isinstance(parts[0], np.ndarray):
        out = np.concatenate(parts)
    else:
        out = [v for part in parts for v in part]
    parts.clear()
    return out


class _Column:
    """A numeric column built from many small parts without holding them: each part is copied
    into chunks of ``_CHUNK_BYTES`` as it comes (the part can then be freed), and :meth:`join`
    copies the chunks into one array, freeing each once copied. Chunks that large are mapped
    memory of their own, which the C library returns to the system when freed; a list of a
    sweep's small per-run arrays would stay in the heap after the join, doubling the peak."""

    _CHUNK_BYTES = 64 << 20  # above glibc's largest dynamic mmap threshold (32 MiB)

    def __init__(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)
        self.chunk_rows = self._CHUNK_BYTES // self.dtype.itemsize
        self.chunks: list[np.ndarray] = []
        self.filled = self.chunk_rows  # rows used in the last chunk (none yet: "full")

    def extend(self, part: np.ndarray) -> None:
        at = 0
        while at < part.size:
            if self.filled == self.chunk_rows:
                self.chunks.append(np.empty(self.chunk_rows, self.dtype))
                self.filled = 0
            take = min(part.size - at, self.chunk_rows - self.filled)
            self.chunks[-1][self.filled : self.filled + take] = part[at : at + take]
            self.filled += take
            at += take

    def join(self) -> np.ndarray:
        """The column (the chunks are emptied)."""
        if not self.chunks:
            return np.zeros(0, self.dtype)
        total = (len(self.chunks) - 1) * self.chunk_rows + self.filled
        out = np.empty(total, self.dtype)
        at = 0
        self.chunks.reverse()
        while self.chunks:
            chunk = self.chunks.pop()
            rows = min(self.chunk_rows, total - at)
            out[at : at + rows] = chunk[:rows]
            at += rows
            del chunk
        return out


def to_pandas(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    workers: int | None = None,
) -> Any:
    """A long pandas DataFrame of ``kind`` (columns in the module docstring).

    ``run`` and ``tag`` are categorical columns (a small integer code per row: a sweep of
    scalars takes about 27 bytes per row), categories sorted; ``frame.run == "a"`` and
    ``groupby`` work as on strings, ``.astype(str)`` gives strings. The runs are read one at a
    time, so the read holds little more than the frame itself. hparams tables keep plain
    columns.

    Raises:
        ImportError: pandas is not installed (``pip install pandas``).
    """
    pd = _require("pandas")
    kind = check_choice(kind, "kind", tuple(KINDS))
    if kind == "hparams":
        return pd.DataFrame(columns(logdir, kind, runs=runs, tags=tags, workers=workers))
    names = ("step", "value", "wall_time")
    numeric = kind == "scalars"
    parts: dict[str, Any] = {
        "step": _Column(np.int64),
        "value": _Column(np.float64) if numeric else [],
        "wall_time": _Column(np.float64),
    }
    keys: list[tuple[str, str, int]] = []  # (run, tag, rows) of each series, in order
    for run in iter_runs(logdir, kinds=(kind,), runs=runs, tags=tags, workers=workers):
        found: dict[tuple[str, str], Any] = getattr(run, kind)
        keys += [(r, t, len(series)) for (r, t), series in found.items()]
        for series in found.values():
            parts["step"].extend(series.steps)
            parts["wall_time"].extend(series.wall_times)
            if numeric:
                parts["value"].extend(series.values)
            else:
                parts["value"].extend(_payload(kind, series))
    run_names = sorted({k[0] for k in keys})
    tag_names = sorted({k[1] for k in keys})
    run_id = {name: i for i, name in enumerate(run_names)}
    tag_id = {name: i for i, name in enumerate(tag_names)}
    counts = [k[2] for k in keys]
    data: dict[str, Any] = {
        "run": pd.Categorical.from_codes(
            np.repeat(np.array([run_id[k[0]] for k in keys], _codes(len(run_names))), counts),
            categories=run_names,
        ),
        "tag": pd.Categorical.from_codes(
            np.repeat(np.array([tag_id[k[1]] for k in keys], _codes(len(tag_names))), counts),
            categories=tag_names,
        ),
    }
    for name in names:  # one column at a time: its chunks are freed as they are copied
        part = parts.pop(name)
        data[name] = part.join() if isinstance(part, _Column) else part
    frame = pd.DataFrame(
        {n: data[n] for n in ("run", "tag", "step", "value", "wall_time")}, copy=False
    )
    return frame


def _codes(count: int) -> Any:
    """The smallest integer type that holds ``count`` category codes."""
    for dtype in (np.int8, np.int16, np.int32):
        if count <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def to_arrow(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    workers: int | None = None,
) -> Any:
    """An Apache Arrow table of ``kind`` (scalars and histograms; others have object values).

    Raises:
        ImportError: pyarrow is not installed (``pip install pyarrow``).
    """
    return arrow_table(columns(logdir, kind, runs=runs, tags=tags, workers=workers), kind)


def arrow_table(cols: dict[str, Any], kind: str) -> Any:
    """The Arrow table of columns ``cols`` of ``kind`` (from :func:`read_table`)."""
    pa = _require("pyarrow")
    arrays: dict[str, Any] = {}
    for name, col in cols.items():
        if name in ("run", "tag"):
            arrays[name] = _strings(pa, col)
        elif name == "value" and kind == "histograms":
            arrays[name] = pa.array([np.asarray(b).tolist() for b in col])
        elif name == "value" and kind in ("images", "audio"):
            arrays[name] = pa.array([list(row) for row in col], pa.list_(pa.binary()))
        elif name == "value" and kind in ("text", "pr_curves", "tensors"):
            arrays[name] = pa.array([np.asarray(v).tolist() for v in col])
        elif name == "value" and kind == "hparams":
            arrays[name] = pa.array([str(v) for v in col], pa.string())
        else:
            arrays[name] = pa.array(col)
    return pa.table(arrays)


def _strings(pa: Any, col: Any) -> Any:
    """An Arrow string array of ``col``, whose rows come in long stretches of one value (a
    series' run and tag): built from a code per stretch, not converted string by string."""
    if not isinstance(col, np.ndarray) or col.size < 2:
        return pa.array(list(col), pa.string())
    bounds = np.concatenate(([0], np.flatnonzero(col[1:] != col[:-1]) + 1, [col.size]))
    ids: dict[str, int] = {}
    codes = np.array([ids.setdefault(v, len(ids)) for v in col[bounds[:-1]].tolist()], np.int32)
    rows = pa.array(np.repeat(codes, np.diff(bounds)))
    return pa.DictionaryArray.from_arrays(rows, pa.array(list(ids), pa.string())).cast(pa.string())


def _join(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """Columns of several tables of one kind, end to end (``tables`` is emptied)."""
    names = list(tables[0])
    out = {name: _concatenate([t[name] for t in tables]) for name in names}
    tables.clear()
    return out


def iter_batches(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    workers: int | None = None,
    rows: int = 1 << 20,
    stats: ReadStats | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> Iterator[Any]:
    """The Arrow table of :func:`to_arrow` as record batches of whole runs, read as they go:
    each batch holds runs until it has ``rows`` rows or more (the last one fewer), so memory
    holds about one batch whatever the sweep's size. Every batch has the first one's schema.
    ``stats`` gathers what the read meets.

    Raises:
        ImportError: pyarrow is not installed (``pip install pyarrow``).
        TypeError: a later run's values do not fit the first batch's type (text of another
            rank, say); :func:`to_arrow` cannot make one table of those either.
    """
    pa = _require("pyarrow")
    rows = check_int(rows, "rows", minimum=1)
    tables = iter_tables(
        logdir,
        kind,
        runs=runs,
        tags=tags,
        strict=strict,
        workers=workers,
        stats=stats,
        progress=progress,
    )
    return _batches(pa, tables, kind, rows)


def _batches(pa: Any, tables: Iterator[dict[str, Any]], kind: str, rows: int) -> Iterator[Any]:
    schema = None
    held: list[dict[str, Any]] = []
    count = 0
    for cols in tables:
        held.append(cols)
        count += len(cols["run"])
        if count < rows:
            continue
        table, schema = _conform(pa, arrow_table(_join(held), kind), schema)
        yield from table.to_batches()
        count = 0
    if held:
        table, schema = _conform(pa, arrow_table(_join(held), kind), schema)
        yield from table.to_batches()


def _conform(pa: Any, table: Any, schema: Any) -> tuple[Any, Any]:
    if schema is None or table.schema == schema:
        return table, table.schema
    try:
        return table.cast(schema), schema
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise TypeError(f"values of another type than the first runs' ({schema}): {exc}") from None


def to_parquet(
    logdir: PathLike,
    path: str | os.PathLike[str],
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    workers: int | None = None,
) -> None:
    """Write the Arrow table of ``kind`` to a Parquet file at ``path``, run by run
    (:func:`iter_batches`): memory stays about one row group whatever the sweep's size.

    The file is created without following a link at ``path`` and replaced atomically: a failure
    leaves any previous file intact.

    Raises:
        ImportError: pyarrow is not installed (``pip install pyarrow``).
    """
    batches = iter_batches(logdir, kind, runs=runs, tags=tags, workers=workers)
    write_parquet_batches(batches, path, kind)


def write_parquet(table: Any, path: str | os.PathLike[str]) -> None:
    """Write an Arrow table to ``path`` atomically, never through a link."""
    parquet = _require("pyarrow.parquet")
    write_atomically(path, lambda stream: parquet.write_table(table, stream))


def write_parquet_batches(batches: Iterable[Any], path: str | os.PathLike[str], kind: str) -> int:
    """Write record batches (one schema) as one Parquet file at ``path``, atomically and never
    through a link, a row group per batch; no batches give the empty table of ``kind``.
    Returns the rows written."""
    parquet = _require("pyarrow.parquet")
    written = 0

    def write(stream: BinaryIO) -> None:
        nonlocal written
        writer = None
        try:
            for batch in batches:
                if writer is None:
                    writer = parquet.ParquetWriter(stream, batch.schema)
                writer.write_batch(batch, row_group_size=max(batch.num_rows, 1))
                written += batch.num_rows
            if writer is None:
                empty = arrow_table(_columns(Logdata(), kind), kind)
                writer = parquet.ParquetWriter(stream, empty.schema)
                writer.write_table(empty)
        finally:
            if writer is not None:
                writer.close()

    write_atomically(path, write)
    return written
