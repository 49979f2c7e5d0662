"""npsummary.reader.to_dask: a sweep read on the workers of a two-process LocalCluster equals
to_pandas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter, reader

pytestmark = pytest.mark.dask
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _sweep(root: Path) -> Path:
    for r in range(5):
        with SummaryWriter(str(root / f"lr={r}" / "train")) as w:
            for step in range(80):
                w.add_scalar("loss", 1.0 / (step + r + 1), step)
                w.add_scalar("acc", step / 80, step)
                if step % 40 == 0:
                    w.add_histogram("w", np.arange(10.0) * r, step)
    return root


def test_compute_equals_to_pandas_on_two_worker_processes(tmp_path: Path, client: Any) -> None:
    logdir = _sweep(tmp_path)
    ddf = reader.to_dask(logdir, runs_per_partition=2)
    assert ddf.npartitions == 3
    got = ddf.compute().reset_index(drop=True)
    want = reader.to_pandas(logdir)
    pd.testing.assert_frame_equal(got, want)
    workers = client.run(lambda: __import__("os").getpid())
    assert len(set(workers.values())) == 2


def test_options_filters_and_other_kinds(tmp_path: Path, client: Any) -> None:
    logdir = _sweep(tmp_path)
    ddf = reader.to_dask(logdir, "histograms", runs="lr=[1-3]", tags="w", runs_per_partition=1)
    assert ddf.npartitions == 3
    got = ddf.compute().reset_index(drop=True)
    want = reader.to_pandas(logdir, "histograms", runs="lr=[1-3]", tags="w")
    assert got[["run", "tag", "step", "wall_time"]].equals(
        want[["run", "tag", "step", "wall_time"]]
    )
    assert all(np.array_equal(a, b) for a, b in zip(got["value"], want["value"], strict=True))
    lazy = reader.to_dask(logdir, tags="acc")
    assert list(lazy.columns) == list(want.columns)  # meta without computing
    eager = reader.to_pandas(logdir, tags="acc").dtypes.to_dict()
    # run and tag are categorical in both; the lazy frame's categories are known only once
    # computed (each partition holds its own runs), as Dask keeps categoricals from from_map.
    assert {k: str(v) for k, v in lazy.dtypes.items() if k not in ("run", "tag")} == {
        k: str(v) for k, v in eager.items() if k not in ("run", "tag")
    }
    assert all(lazy.dtypes[k] == "category" and eager[k] == "category" for k in ("run", "tag"))


def test_nothing_selected_and_bad_arguments(tmp_path: Path) -> None:
    logdir = _sweep(tmp_path)
    empty = reader.to_dask(logdir, runs="nothing").compute()
    assert len(empty) == 0 and list(empty.columns) == list(reader.to_pandas(logdir).columns)
    with pytest.raises(ValueError, match="runs_per_partition"):
        reader.to_dask(logdir, runs_per_partition=0)
    with pytest.raises(FileNotFoundError):
        reader.to_dask(tmp_path / "missing")
    with pytest.raises(TypeError):
        reader.to_dask(logdir, no_such_option=1)


def test_a_partition_reads_its_runs_without_listing_the_logdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # to_dask lists once where it is called; each partition is handed its runs and files (a
    # sweep of 10,000 runs in 100 partitions would otherwise be listed 100 times).
    from npsummary.reader import _dask, _discover
    from npsummary.reader._io import filesystem_for
    from npsummary.reader._storage import sweep

    logdir = _sweep(tmp_path)
    listed = sweep.list_sweep(filesystem_for(str(logdir)), str(logdir))
    part = sweep.ListedSweep(listed.runs[1:3])

    def no_listing(*args: object, **kwargs: object) -> None:
        raise AssertionError("a partition listed the logdir")

    monkeypatch.setattr(_discover, "discover", no_listing)
    monkeypatch.setattr(sweep, "discover", no_listing)
    got = _dask.read_partition(part, str(logdir), "scalars", None, {})
    monkeypatch.undo()
    want = reader.to_pandas(logdir, runs="^lr=[12]/train$")
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want)
