"""A logdir as a Dask DataFrame, read on the workers: one partition per group of runs.

Only the listing happens where :func:`to_dask` is called, once; each partition is
:func:`~npsummary.reader.to_pandas` of its runs (their files as listed: a partition lists
nothing), run where Dask schedules it (a
``distributed.LocalCluster``, dask-jobqueue on SLURM, Kubernetes ...), so the logdir must be
reachable from the workers under the same name: a shared path, or a URL (``s3://``, ``gs://``).
Dask is optional (``pip install 'dask[dataframe]' distributed``) and imported only by
:func:`to_dask`.
"""

from __future__ import annotations

import os
from typing import Any

from ._api import PathLike, Pattern
from ._discover import compile_filter
from ._io import filesystem_for
from ._storage.sweep import ListedSweep, list_sweep, reading_listed
from ._tables import to_pandas

__all__ = ["to_dask"]


def read_partition(
    listed: ListedSweep, logdir: str, kind: str, tags: Pattern, options: dict[str, Any]
) -> Any:
    """One partition: :func:`~npsummary.reader.to_pandas` of the runs ``listed`` of ``logdir``."""
    with reading_listed(listed):
        return to_pandas(logdir, kind, tags=tags, **options)


def to_dask(
    logdir: PathLike,
    kind: str = "scalars",
    *,
    runs: Pattern = None,
    tags: Pattern = None,
    runs_per_partition: int = 100,
    **options: Any,
) -> Any:
    """The table :func:`~npsummary.reader.to_pandas` gives, as a lazy ``dask.dataframe``.

    Runs are listed here and split, in name order, into partitions of ``runs_per_partition``
    runs; each partition is read on a Dask worker (built with ``dd.from_map``), so
    ``.compute()`` gives ``to_pandas``'s rows in ``to_pandas``'s order (each partition with an
    index of its own). The column types (``meta``) come from reading no run at all.

    Args:
        logdir: the logdir, a path every worker can read or a URL.
        kind, runs, tags: as for :func:`~npsummary.reader.to_pandas`; ``options`` are passed
            to it as they are.
        runs_per_partition: how many runs each partition reads.

    Raises:
        ImportError: Dask is not installed (``pip install 'dask[dataframe]' distributed``).
        FileNotFoundError: ``logdir`` does not exist.
    """
    from .._common.convert import check_int

    per = check_int(runs_per_partition, "runs_per_partition", minimum=1)
    import importlib

    try:
        dask: Any = importlib.import_module("dask")
        dd: Any = importlib.import_module("dask.dataframe")
    except ImportError:
        raise ImportError("to_dask needs Dask: pip install 'dask[dataframe]' distributed") from None
    path = os.fspath(logdir)
    listed = list_sweep(filesystem_for(path), path, compile_filter(runs, "runs")).runs
    # A partition of no run: the columns without reading the sweep.
    meta = read_partition(ListedSweep(()), path, kind, tags, options)
    if not listed:
        with dask.config.set({"dataframe.convert-string": False}):
            return dd.from_pandas(meta, npartitions=1)
    groups = [ListedSweep(listed[i : i + per]) for i in range(0, len(listed), per)]
    # Dask would otherwise turn the string columns into its own pyarrow string type: the
    # partitions keep to_pandas's types, so that compute() gives what to_pandas gives.
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_map(
            read_partition,
            groups,
            logdir=path,
            kind=kind,
            tags=tags,
            options=options,
            meta=meta,
            label="npsummary-read",
            enforce_metadata=False,
        )
