"""npsummary.reader: framing, corruption, order, and a round trip of every kind both APIs write."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import npsummary
from npsummary import SummaryWriter, reader
from npsummary._format.record import CorruptRecordError, frame_record
from npsummary.proto import Event

WALL = 1_700_000_000.0


def _event(step: int, tag: str = "x", value: float = 0.5, wall: float = WALL) -> bytes:
    ev = Event(wall_time=wall, step=step)
    ev.summary.value.add(tag=tag, simple_value=value)
    return bytes(frame_record(ev.SerializeToString()))


def _write(path: Path, *records: bytes | bytearray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(records))
    return path


def test_scalars_contract_legacy_and_tf2_in_one_model(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path / "a")) as w:  # TF2 tensor scalars
        for step in range(200):
            w.add_scalar("loss", step / 4, step, walltime=WALL + step)
    _write(
        tmp_path / "b" / "events.out.tfevents.1", *[_event(s, "loss", s / 8) for s in range(100)]
    )
    got = reader.scalars(tmp_path)
    assert list(got) == [("a", "loss"), ("b", "loss")]
    a = got[("a", "loss")]
    assert a.steps.dtype == np.int64 and a.wall_times.dtype == np.float64
    assert a.values.dtype == np.float64
    assert np.array_equal(a.steps, np.arange(200))
    assert np.array_equal(a.values, np.arange(200) / 4)
    assert np.array_equal(a.wall_times, WALL + np.arange(200))
    assert np.array_equal(got[("b", "loss")].values, np.arange(100) / 8)
    assert list(reader.scalars(tmp_path, runs="^a$")) == [("a", "loss")]
    assert reader.scalars(tmp_path, tags="nothing") == {}


def test_logdir_itself_is_run_dot_and_files_in_name_order(tmp_path: Path) -> None:
    _write(tmp_path / "events.out.tfevents.2", _event(2))
    _write(tmp_path / "events.out.tfevents.10", _event(10))  # sorts first, as in TensorBoard
    _write(tmp_path / "events.out.tfevents.1.profile-empty", _event(99))
    _write(tmp_path / "not_an_event_file", _event(77))
    s = reader.scalars(tmp_path)[(".", "x")]
    assert s.steps.tolist() == [10, 2]
    assert [e.step for e in reader.events(tmp_path)] == [10, 2]
    one = reader.scalars(tmp_path / "events.out.tfevents.2")
    assert list(one) == [(".", "x")]


def test_duplicate_steps_kept_and_last_write_wins(tmp_path: Path) -> None:
    steps = [0, 1, 2, 3, 2, 5, 5]
    _write(
        tmp_path / "r" / "events.out.tfevents.1", *[_event(s, value=i) for i, s in enumerate(steps)]
    )
    s = reader.scalars(tmp_path)[("r", "x")]
    assert s.steps.tolist() == steps and s.values.tolist() == list(range(7))
    last = reader.scalars(tmp_path, last_write_wins=True)[("r", "x")]
    assert last.steps.tolist() == [0, 1, 2, 5] and last.values.tolist() == [0, 1, 4, 6]


def test_corrupt_record_skipped_counted_or_raised(tmp_path: Path) -> None:
    good = [_event(s) for s in range(5)]
    bad_payload = bytearray(good[2])
    bad_payload[20] ^= 0xFF  # payload CRC fails
    bad_header = bytearray(good[3])
    bad_header[0] ^= 0x01  # length CRC fails: resynchronise at the next record
    path = _write(
        tmp_path / "events.out.tfevents.1", good[0], good[1], bad_payload, bad_header, good[4]
    )
    stats = reader.ReadStats()
    steps = [e.step for e in reader.events(path, stats=stats)]
    assert steps == [0, 1, 4]
    assert stats.corrupt_records == 2 and stats.records == 3 and stats.torn_tails == 0
    assert any("CRC" in p for p in stats.problems)
    data = reader.load(tmp_path)
    assert data.scalars[(".", "x")].steps.tolist() == [0, 1, 4]
    assert data.stats.corrupt_records == 2
    with pytest.raises(CorruptRecordError, match=r"events\.out\.tfevents\.1"):
        reader.load(tmp_path, strict=True)
    with pytest.raises(CorruptRecordError):
        list(reader.events(path, strict=True))


def test_torn_tail_tolerated(tmp_path: Path) -> None:
    records = [_event(s) for s in range(3)]
    for cut in (1, 11, 12, 20, len(records[2]) - 1):
        path = _write(tmp_path / str(cut) / "events.out.tfevents.1", *records)
        path.write_bytes(path.read_bytes()[:-cut])
        stats = reader.ReadStats()
        assert [e.step for e in reader.events(path, stats=stats)] == [0, 1]
        assert stats.torn_tails == 1 and stats.corrupt_records == 0
        assert stats.torn_bytes == len(records[2]) - cut
        assert reader.load(path, strict=True).scalars[(".", "x")].steps.tolist() == [0, 1]


def test_payload_that_is_not_an_event_is_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "events.out.tfevents.1", _event(0), frame_record(b"\xff\xff"), _event(1)
    )
    data = reader.load(path)
    assert data.scalars[(".", "x")].steps.tolist() == [0, 1]
    assert data.stats.corrupt_records == 1


def test_chunk_boundaries_and_large_records(tmp_path: Path) -> None:
    from npsummary.reader import _framing

    rng = np.random.default_rng(0)
    records = []
    for s in range(300):
        ev = Event(wall_time=WALL, step=s)
        value = ev.summary.value.add(tag="t", simple_value=s)
        if s % 7 == 0:
            value.metadata.summary_description = "x" * int(rng.integers(0, 5000))
        records.append(frame_record(ev.SerializeToString()))
    path = _write(tmp_path / "events.out.tfevents.1", *records)
    for chunk in (64, 100, 1000, 4096, 1 << 20):
        stats = reader.ReadStats()
        fs = reader.LocalFileSystem()
        seen = 0
        for batch in _framing.read_batches(fs, str(path), stats, chunk=chunk):
            seen += batch.starts.size
        assert seen == 300 and stats.corrupt_records == 0 and stats.torn_tails == 0, chunk


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        reader.scalars(tmp_path / "nope")
    with pytest.raises(ValueError, match="regular expression"):
        reader.scalars(tmp_path, tags="(")
    with pytest.raises(ValueError, match="unknown kinds"):
        reader.load(tmp_path, kinds=["scalar"])


def _log_everything(logdir: Path) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)
    snd = np.sin(np.arange(800) / 9).astype(np.float32) / 2
    hist = rng.normal(size=500)
    with SummaryWriter(str(logdir / "torch_api")) as w:
        for step in range(3):
            w.add_scalar("loss", 1 / (step + 1), step, walltime=WALL + step)
            w.add_scalars("pair", {"a": step, "b": -step}, step, walltime=WALL + step)
            w.add_histogram("h", hist + step, step, walltime=WALL + step)
            w.add_image("img", img, step, dataformats="HWC", walltime=WALL + step)
            w.add_text("note", f"step {step}", step, walltime=WALL + step)
            w.add_audio("snd", snd, step, sample_rate=16000, walltime=WALL + step)
    writer = npsummary.create_file_writer(str(logdir / "tf_api"))
    with writer.as_default():
        for step in range(3):
            npsummary.scalar("loss", 1 / (step + 1), step=step)
            npsummary.histogram("h", hist + step, step=step, buckets=12)
            npsummary.image("img", img[None], step=step)
            npsummary.text("note", f"step {step}", step=step)
            npsummary.audio("snd", snd[None, :, None], 16000, step=step)
            npsummary.write("raw", np.arange(6, dtype=np.int32).reshape(2, 3) + step, step=step)
    writer.close()
    return {"img": img, "snd": snd, "hist": hist}


def test_round_trip_every_kind_both_apis(tmp_path: Path) -> None:
    logged = _log_everything(tmp_path)
    data = reader.load(tmp_path, decode=True)
    assert data.stats.corrupt_records == 0 and data.stats.bad_values == 0
    for run in ("torch_api", "tf_api"):
        loss = data.scalars[(run, "loss")]
        assert loss.steps.tolist() == [0, 1, 2]
        assert loss.values.tolist() == [float(np.float32(1 / (s + 1))) for s in range(3)]
        h = data.histograms[(run, "h")]
        assert [b[:, 2].sum() for b in h.buckets] == [500.0] * 3
        assert h.percentiles().shape == (3, 9)
        for s in range(3):
            assert h.buckets[s][0, 0] == pytest.approx(logged["hist"].min() + s)
        im = data.images[(run, "img")]
        assert im.widths.tolist() == [7, 7, 7] and im.heights.tolist() == [6, 6, 6]
        assert all(np.array_equal(row[0], logged["img"]) for row in im.images)
        au = data.audio[(run, "snd")]
        assert au.sample_rates.tolist() == [16000.0] * 3
        clip = au.clips[0][0]
        assert clip.shape == (800, 1)
        # Decoded as int16 / 32768: TF rounds x * 32768, torch's writer truncates x * 32767.
        steps = 1 if run == "tf_api" else 2
        assert np.abs(clip[:, 0] - logged["snd"]).max() <= steps / 32768
    assert data.text[("torch_api", "note/text_summary")].texts[2].tolist() == ["step 2"]
    assert data.text[("tf_api", "note")].texts[1].tolist() == "step 1"
    assert data.scalars[("torch_api/pair_a", "pair")].values.tolist() == [0, 1, 2]
    raw = data.tensors[("tf_api", "raw")]
    assert raw.tensors[2].tolist() == [[2, 3, 4], [5, 6, 7]] and raw.tensors[2].dtype == np.int32
    raw_bytes = reader.images(tmp_path, tags="img")[("tf_api", "img")].images[0][0]
    assert raw_bytes.startswith(b"\x89PNG")


def test_tables(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    _log_everything(tmp_path)
    df = reader.to_pandas(tmp_path)
    assert list(df.columns) == ["run", "tag", "step", "value", "wall_time"]
    assert len(df) == 3 * 4
    row = df[(df.run == "tf_api") & (df.step == 1)].iloc[0]
    assert row.tag == "loss" and row.value == 0.5
    hist = reader.to_pandas(tmp_path, "histograms")
    assert hist["value"].iloc[0].shape[1] == 3
    table = reader.to_arrow(tmp_path)
    assert isinstance(table, pa.Table) and table.num_rows == 12
    reader.to_parquet(tmp_path, tmp_path / "s.parquet")
    back = pq.read_table(tmp_path / "s.parquet").to_pandas()
    assert isinstance(df["run"].dtype, pd.CategoricalDtype)  # a code per row, not a string
    pd.testing.assert_frame_equal(back, df.astype({"run": str, "tag": str}))
    assert reader.to_arrow(tmp_path, "images").num_rows == 6


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (
            ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow"),
            "this needs pyarrow: pip",
        ),
        (
            ImportError("pyarrow requires NumPy 2.0 or newer, found 1.23.2"),
            "pyarrow is installed but does not import: pyarrow requires NumPy 2.0",
        ),
    ],
    ids=["missing", "unusable"],
)
def test_tables_say_why_pyarrow_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: ImportError, message: str
) -> None:
    # pyarrow 25 installed beside NumPy 1.23 fails on import; "pip install it" was the message.
    import importlib

    def refuse(name: str, package: str | None = None) -> object:
        raise failure

    _log_everything(tmp_path)
    monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.raises(ImportError, match=message):
        reader.to_arrow(tmp_path)


def test_import_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, npsummary; "
        "bad = [m for m in ('pandas', 'pyarrow', 'npsummary.reader') if m in sys.modules]; "
        "assert not bad, bad; "
        "npsummary.reader.scalars; "
        "assert 'pandas' not in sys.modules and 'pyarrow' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})


def test_series_helpers() -> None:
    s = reader.ScalarSeries(np.array([3, 1, 2]), np.zeros(3), np.array([1.0, 2.0, 3.0]))
    assert s.last_write_wins().steps.tolist() == [1, 2]
    assert s.last_write_wins().values.tolist() == [2.0, 3.0]
    assert len(s) == 3


def test_bulk_path_detects_corruption_in_varying_bytes(tmp_path: Path) -> None:
    records = [bytearray(_event(s, f"t{s % 3}", s / 2, WALL + s)) for s in range(200)]
    records[50][12 + 3] ^= 0x10  # wall time byte
    records[120][12 + 10] ^= 0x01  # step varint byte
    records[150][-5] ^= 0x80  # value byte (just before the payload CRC)
    path = _write(tmp_path / "events.out.tfevents.1", *records)
    data = reader.load(path)
    assert data.stats.corrupt_records == 3 and data.stats.records == 197
    kept = np.concatenate([s.steps for s in data.scalars.values()])
    assert sorted(kept.tolist()) == sorted(set(range(200)) - {50, 120, 150})


def test_first_metadata_of_a_tag_decides_its_kind(tmp_path: Path) -> None:
    from npsummary._summaries.scalar import ScalarEncoder

    first = Event(wall_time=WALL, step=0)
    for tag in ("t", "other"):
        v = first.summary.value.add(tag=tag)
        v.tensor.dtype = 1
        v.tensor.tensor_shape.SetInParent()
        v.tensor.float_val.append(1.0)
        v.metadata.plugin_data.plugin_name = "custom"
    enc = ScalarEncoder()
    later = [frame_record(enc.event("t", s, s, WALL + s)) for s in range(1, 100)]
    path = _write(
        tmp_path / "events.out.tfevents.1", frame_record(first.SerializeToString()), *later
    )
    data = reader.load(path)
    assert (".", "t") not in data.scalars
    assert data.tensors[(".", "t")].plugin_name == "custom"
    assert len(data.tensors[(".", "t")]) == 100
