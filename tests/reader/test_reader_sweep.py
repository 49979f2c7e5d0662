"""Sweeps: worker processes read what one thread reads, runs stream one at a time, tables are
written run by run (bounded memory), and to_pandas keeps run and tag as categories."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter, reader
from npsummary._format.record import CorruptRecordError, frame_record
from npsummary.proto import Event
from npsummary.reader import _load, _parallel
from npsummary.reader._io import LocalFileSystem
from npsummary.reader._storage.sweep import open_sweep

WALL = 1_700_000_000.0


def _event(step: int, tag: str, value: float) -> bytes:
    ev = Event(wall_time=WALL + step, step=step)
    ev.summary.value.add(tag=tag, simple_value=value)
    return bytes(frame_record(ev.SerializeToString()))


def _sweep(root: Path, runs: int = 6) -> Path:
    """Runs of several layouts: two event files in a run, nested sub-runs, a run of
    histograms and text only, a corrupt record, a torn tail, a duplicate step."""
    for r in range(runs):
        with SummaryWriter(str(root / f"run{r}"), filename_suffix=".a") as w:
            for step in range(150):
                w.add_scalar("loss", 1.0 / (step + r + 1), step)
                w.add_scalar("acc", step * 0.01 + r, step)
                if step % 50 == 0:
                    w.add_histogram("w", np.arange(20.0) + step, step)
                    w.add_text("note", f"run {r} step {step}", step)
    with SummaryWriter(str(root / "run0"), filename_suffix=".b") as w:
        w.add_scalar("loss", -1.0, 149)  # a second file: a duplicate step, kept in file order
    for sub in ("train", "eval"):
        with SummaryWriter(str(root / "run1" / sub)) as w:
            for step in range(100):
                w.add_scalar("loss", step * 0.5, step)
    with SummaryWriter(str(root / "hist_only")) as w:
        w.add_histogram("w", np.ones(5), 0)
        w.add_text("t", "x", 0)
    records = [_event(s, "x", s / 3) for s in range(80)]
    bad = bytearray(records[40])
    bad[-1] ^= 0xFF  # payload CRC fails
    records[40] = bytes(bad)
    (root / "corrupt").mkdir()
    (root / "corrupt" / "events.out.tfevents.1").write_bytes(b"".join(records))
    (root / "torn").mkdir()
    (root / "torn" / "events.out.tfevents.1").write_bytes(b"".join(records[:10]) + b"\x05\x00")
    return root


def _same(a: Any, b: Any) -> bool:
    """Equal bit for bit: arrays by dtype, shape and bytes; containers item by item."""
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and ((a.dtype == object and a.tolist() == b.tolist()) or a.tobytes() == b.tobytes())
        )
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            _same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, float) and a != a:
        return isinstance(b, float) and b != b
    return bool(a == b) and type(a) is type(b)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sweep(tmp_path_factory.mktemp("sweep"))


def test_workers_read_what_one_thread_reads_bit_for_bit(sweep: Path) -> None:
    serial = reader.load(sweep, workers=1)
    assert serial.stats.corrupt_records == 1 and serial.stats.torn_tails == 1
    assert ("run1/train", "loss") in serial.scalars
    assert serial.scalars[("run0", "loss")].values[-1] == -1.0
    for workers in (2, 3):
        parallel = reader.load(sweep, workers=workers)
        assert _same(parallel, serial), workers
    assert _same(reader.scalars(sweep, workers=2), reader.scalars(sweep, workers=1))


def test_a_packed_group_unpacks_to_what_read_runs_returns(sweep: Path) -> None:
    """A worker sends its runs' scalar arrays end to end (PackedRuns): unpacked, they are the
    runs read_runs returns, runs without scalars and sub-runs included."""
    found, fs = open_sweep(LocalFileSystem(), str(sweep), None)
    options = _load.Options()
    for group in (found, found[:1], [r for r in found if r.name == "hist_only"]):
        unpacked = _load.read_runs_packed(fs, group, options).unpack()
        assert _same(unpacked, _load.read_runs(fs, group, options))


def test_a_strict_error_in_a_worker_is_raised_as_in_one_thread(sweep: Path) -> None:
    with pytest.raises(CorruptRecordError) as serial:
        reader.load(sweep, strict=True, workers=1)
    with pytest.raises(CorruptRecordError) as parallel:
        reader.load(sweep, strict=True, workers=2)
    assert str(parallel.value) == str(serial.value)
    assert parallel.value.offset == serial.value.offset


def test_iter_runs_yields_each_run_as_load_reads_it(sweep: Path) -> None:
    whole = reader.load(sweep)
    stats = reader.ReadStats()
    seen: list[str] = []
    for workers in (1, 2):
        stats = reader.ReadStats()
        seen = []
        for part in reader.iter_runs(sweep, stats=stats, workers=workers):
            assert len(part.runs) == 1
            seen += part.runs
            for kind in ("scalars", "histograms", "text"):
                for key, series in getattr(part, kind).items():
                    assert key[0] == part.runs[0]
                    assert _same(series, getattr(whole, kind)[key])
        assert seen == whole.runs
        assert _same(stats, whole.stats)


def test_worker_count_stays_serial_for_small_or_remote_reads(sweep: Path) -> None:
    from npsummary.reader._discover import discover

    fs = LocalFileSystem()
    runs = discover(fs, str(sweep))
    assert _parallel.worker_count(None, fs, runs) == 1  # far below MIN_BYTES
    assert _parallel.worker_count(4, fs, runs[:2]) == 2  # never more than the runs
    assert _parallel.worker_count(None, object(), runs) == 1  # type: ignore[arg-type]
    groups = _parallel.split(runs, 2)
    assert [r for g in groups for r in g] == runs


@pytest.mark.parametrize("bad", [0, -1])
def test_workers_must_be_positive(sweep: Path, bad: int) -> None:
    with pytest.raises(ValueError, match="workers"):
        reader.scalars(sweep, workers=bad)
    with pytest.raises(TypeError, match="workers"):
        reader.scalars(sweep, workers="2")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress"):
        reader.load(sweep, progress=3)  # type: ignore[arg-type]


def test_a_script_without_a_main_guard_is_not_run_again_by_the_workers(
    sweep: Path, tmp_path: Path
) -> None:
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from npsummary import reader
            print("top level ran")
            print(len(reader.scalars({str(sweep)!r}, workers=2)))
            """
        )
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["top level ran", str(len(reader.scalars(sweep)))]


def test_to_pandas_has_categorical_run_and_tag_columns(sweep: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = reader.to_pandas(sweep)
    from npsummary.reader._tables import columns

    cols = columns(sweep)
    assert isinstance(frame["run"].dtype, pd.CategoricalDtype)
    assert isinstance(frame["tag"].dtype, pd.CategoricalDtype)
    assert frame["run"].astype(str).tolist() == [str(x) for x in cols["run"]]
    assert frame["tag"].astype(str).tolist() == [str(x) for x in cols["tag"]]
    for name in ("step", "value", "wall_time"):
        assert _same(frame[name].to_numpy(), cols[name])
    assert frame.memory_usage(deep=True).sum() / len(frame) <= 40
    hist = reader.to_pandas(sweep, "histograms")
    assert len(hist) == len(columns(sweep, "histograms")["run"])
    empty = reader.to_pandas(sweep, runs="^nothing$")
    assert list(empty.columns) == ["run", "tag", "step", "value", "wall_time"] and not len(empty)


def test_to_pandas_columns_cross_chunks(sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts copied into chunks as they come: with chunks of 7 rows every part crosses one."""
    pytest.importorskip("pandas")
    from npsummary.reader import _tables

    whole = reader.to_pandas(sweep)
    monkeypatch.setattr(_tables._Column, "_CHUNK_BYTES", 7 * 8)
    small = reader.to_pandas(sweep)
    assert small.equals(whole) and len(whole) > 7
    column = _tables._Column(np.int64)
    for part in (np.arange(3), np.arange(0), np.arange(7, 20)):
        column.extend(part)
    assert column.join().tolist() == [0, 1, 2, *range(7, 20)] and not column.chunks
    assert _tables._Column(np.float64).join().dtype == np.float64


def test_iter_batches_and_to_parquet_equal_to_arrow(sweep: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    whole = reader.to_arrow(sweep)
    batches = list(reader.iter_batches(sweep, rows=200, workers=2))
    assert len(batches) > 3 and all(b.schema == whole.schema for b in batches)
    assert pa.Table.from_batches(batches).equals(whole)
    reader.to_parquet(sweep, tmp_path / "s.parquet")
    assert pq.read_table(tmp_path / "s.parquet").equals(whole)
    assert pq.ParquetFile(tmp_path / "s.parquet").num_row_groups >= 1
    hist = pa.Table.from_batches(list(reader.iter_batches(sweep, "histograms", rows=3)))
    assert hist.equals(reader.to_arrow(sweep, "histograms"))


def _cli(*args: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "npsummary", *map(str, args)], capture_output=True, timeout=300
    )


def _rows_of_old_export(sweep: Path, kind: str) -> list[dict[str, Any]]:
    """The rows the export wrote before it streamed: every row of read_table at once."""
    from npsummary._cli._export import _rows
    from npsummary.reader._tables import read_table

    return _rows(read_table(sweep, kind)[0])


@pytest.mark.parametrize("kind", ["scalars", "text"])
def test_export_streams_the_same_bytes(sweep: Path, tmp_path: Path, kind: str) -> None:
    import csv
    import io

    out = tmp_path / kind
    assert _cli("export", sweep, "--format", "json", "--kind", kind, "--out", out).returncode == 0
    rows = _rows_of_old_export(sweep, kind)
    expected = json.dumps(rows, allow_nan=False) + "\n"
    assert (out / f"{kind}.json").read_text() == expected
    assert _cli("export", sweep, "--format", "csv", "--kind", kind, "--out", out).returncode == 0
    from npsummary._cli._export import _csv_value

    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(rows[0]), lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(k, v) for k, v in row.items()})
    assert (out / f"{kind}.csv").read_bytes() == text.getvalue().encode()
    stdout = _cli("export", sweep, "--format", "json", "--kind", kind, "--out", "-").stdout
    assert stdout.decode() == expected


def test_export_parquet_equals_to_arrow(sweep: Path, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    done = _cli("export", sweep, "--format", "parquet", "--out", tmp_path, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert pq.read_table(tmp_path / "scalars.parquet").equals(reader.to_arrow(sweep))
    assert b"corrupt" in done.stderr  # skipped records are still reported


def test_an_empty_record_is_still_found_among_zero_runs(tmp_path: Path) -> None:
    # The header scan drops 12 zero bytes as candidates: an empty record's length CRC is not 0.
    empty = bytes(frame_record(b""))
    assert empty[8:12] != bytes(4)
    ev = Event(step=1, wall_time=WALL)
    ev.summary.value.add(tag="z", simple_value=0.0)
    zeros = ev.SerializeToString() + bytes(0)
    data = empty + bytes(frame_record(zeros)) + empty + _event(2, "z", 0.0)
    (tmp_path / "events.out.tfevents.1").write_bytes(data)
    stats = reader.ReadStats()
    assert reader.scalars(tmp_path)[(".", "z")].steps.tolist() == [1, 2]
    list(reader.events(tmp_path, stats=stats))
    assert stats.records == 4 and stats.corrupt_records == 0


def test_small_runs_read_together_equal_runs_read_file_by_file(
    sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npsummary.reader._discover import discover
    from npsummary.reader._load import Options, read_run, read_runs
    from npsummary.reader._logdata import build

    fs = LocalFileSystem()
    # A short file (fewer than 64 records: protobuf alone when read by itself) among the rest.
    (tmp_path / "short").mkdir()
    (tmp_path / "short" / "events.out.tfevents.1").write_bytes(_event(3, "x", 0.25))
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "events.out.tfevents.1").write_bytes(b"")
    runs = discover(fs, str(sweep)) + discover(fs, str(tmp_path))
    options = Options()
    alone = [read_run(fs, run, options) for run in runs]
    calls = []

    def counted(*args: Any) -> Any:
        calls.append(args[1].name)
        return read_run(*args)

    monkeypatch.setattr(_load, "read_run", counted)
    clean = [run for run in runs if run.name not in ("corrupt", "torn")]
    assert len(read_runs(fs, clean, options)) == len(clean) and not calls  # all together
    together = read_runs(fs, runs, options)
    assert "corrupt" in calls and "torn" in calls  # their group, read again file by file
    assert [d.name for d, _ in together] == [d.name for d, _ in alone]
    for (d1, s1), (d2, s2) in zip(together, alone, strict=True):
        assert _same(s1, s2), d1.name
        assert _same(build([d1], s1), build([d2], s2)), d1.name
    corrupt = {d.name: s for d, s in together}["corrupt"]
    assert corrupt.corrupt_records == 1 and "fails its CRC" in corrupt.problems[0]
