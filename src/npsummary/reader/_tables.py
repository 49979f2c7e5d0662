"""Long tables of a logdir: pandas DataFrames, Arrow tables and Parquet files.

pandas and pyarrow are optional (``pip install pandas pyarrow``) and imported only when one
of these functions is called. Scalars give the columns ``run, tag, step, value, wall_time``
(tbparse's names, so notebooks can switch); the other kinds give ``run, tag, step, wall_time``
and a ``value`` column of objects (``[k, 3]`` buckets, lists of image bytes, ...); hparams give
one row per session and hyperparameter or metric: ``run, tag, value``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .._common.convert import check_choice
from ._api import PathLike, Pattern, load
from ._atomic import write_atomically
from ._framing import ReadStats
from ._values import KINDS

__all__ = [
    "arrow_table",
    "columns",
    "read_table",
    "to_arrow",
    "to_pandas",
    "to_parquet",
    "write_parquet",
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
    logdir: PathLike, kind: str = "scalars", *, runs: Pattern = None, tags: Pattern = None
) -> dict[str, Any]:
    """The table of ``kind`` as a dict of equal-length columns (NumPy arrays or lists)."""
    return read_table(logdir, kind, runs=runs, tags=tags)[0]


def read_table(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    strict: bool = False,
    progress: Callable[[str, int], None] | None = None,
) -> tuple[dict[str, Any], ReadStats]:
    """:func:`columns`, with what the read met (corrupt records skipped, ...)."""
    check_choice(kind, "kind", tuple(KINDS))
    data = load(logdir, kinds=(kind,), runs=runs, tags=tags, strict=strict, progress=progress)
    return _columns(data, kind), data.stats


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


def to_pandas(
    logdir: PathLike, kind: str = "scalars", *, runs: Pattern = None, tags: Pattern = None
) -> Any:
    """A long pandas DataFrame of ``kind`` (columns in the module docstring).

    Raises:
        ImportError: pandas is not installed (``pip install pandas``).
    """
    pd = _require("pandas")
    cols = columns(logdir, kind, runs=runs, tags=tags)
    frame = pd.DataFrame(cols)
    if kind != "hparams":
        frame["run"] = frame["run"].astype(str)
        frame["tag"] = frame["tag"].astype(str)
    return frame


def to_arrow(
    logdir: PathLike, kind: str = "scalars", *, runs: Pattern = None, tags: Pattern = None
) -> Any:
    """An Apache Arrow table of ``kind`` (scalars and histograms; others have object values).

    Raises:
        ImportError: pyarrow is not installed (``pip install pyarrow``).
    """
    return arrow_table(columns(logdir, kind, runs=runs, tags=tags), kind)


def arrow_table(cols: dict[str, Any], kind: str) -> Any:
    """The Arrow table of columns ``cols`` of ``kind`` (from :func:`read_table`)."""
    pa = _require("pyarrow")
    arrays: dict[str, Any] = {}
    for name, col in cols.items():
        if name in ("run", "tag"):
            arrays[name] = pa.array([str(x) for x in col], pa.string())
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


def to_parquet(
    logdir: PathLike,
    path: str | os.PathLike[str],
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
) -> None:
    """Write the Arrow table of ``kind`` to a Parquet file at ``path``.

    The file is created without following a link at ``path`` and replaced atomically: a failure
    leaves any previous file intact.

    Raises:
        ImportError: pyarrow is not installed (``pip install pyarrow``).
    """
    table = to_arrow(logdir, kind, runs=runs, tags=tags)
    write_parquet(table, path)


def write_parquet(table: Any, path: str | os.PathLike[str]) -> None:
    """Write an Arrow table to ``path`` atomically, never through a link."""
    parquet = _require("pyarrow.parquet")
    write_atomically(path, lambda stream: parquet.write_table(table, stream))
