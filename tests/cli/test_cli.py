"""The ``npsummary`` command, run as a subprocess: output, exit codes, one-line errors, JSON."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from npsummary import reader
from npsummary._format.record import frame_record
from npsummary.proto import Event
from paths import TESTS

GOLDEN = TESTS / "golden" / "reader"


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "npsummary", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        timeout=300,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )


def _one_line_error(result: subprocess.CompletedProcess[str], command: str) -> str:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"npsummary {command}: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("command", [[], ["inspect"], ["export"], ["demo"]])
def test_help_has_examples(command: list[str]) -> None:
    result = _run(*command, "--help")
    assert result.returncode == 0 and "examples:" in result.stdout


@pytest.mark.parametrize("command", [[], ["inspect"], ["export"], ["demo"]])
def test_help_prints_no_control_character(command: list[str]) -> None:
    """The help promising that control characters are escaped held a real ESC and a right-to-left
    override (issue 29, item 9: a non-raw string)."""
    import unicodedata

    text = _run(*command, "--help").stdout
    bad = {c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")}
    assert not bad, sorted(map(hex, map(ord, bad)))
    assert not text.startswith("\\")


def test_usage_errors_exit_2() -> None:
    assert _run().returncode == 2
    assert _run("frobnicate").returncode == 2


def test_inspect_text_and_json() -> None:
    result = _run("inspect", GOLDEN / "tf2")
    assert result.returncode == 0 and result.stderr == ""  # no progress line off a terminal
    out = result.stdout
    assert "run ." in out and "run hp" in out and "problems: none" in out
    assert "loss" in out and "(4 records)" in out and any(c in out for c in "▁▂▃▄▅▆▇█")
    info = json.loads(_run("inspect", GOLDEN / "tf2", "--json").stdout)
    loss = info["runs"]["."]["scalars"]["loss"]
    assert loss == {**loss, "count": 4, "first_step": 0, "last_step": 1, "last_value": 9.0}
    assert set(info["runs"]["."]) >= {"scalars", "histograms", "images", "audio", "text"}
    assert info["runs"]["hp"]["hparams"]["hparams"] == {"lr": 0.25, "opt": "adam", "wide": True}
    assert info["corrupt_records"] == 0 and len(info["files"]) == 2
    only = json.loads(_run("inspect", GOLDEN / "tf2", "--json", "--tags", "^acc$").stdout)
    assert list(only["runs"]["."]) == ["scalars"] and list(only["runs"]["."]["scalars"]) == ["acc"]


def test_inspect_reports_corruption(tmp_path: Path) -> None:
    records = []
    for step in range(4):
        ev = Event(wall_time=1.0, step=step)
        ev.summary.value.add(tag="x", simple_value=step)
        records.append(bytearray(frame_record(ev.SerializeToString())))
    records[1][-1] ^= 1
    (tmp_path / "events.out.tfevents.1").write_bytes(b"".join(records)[:-3])
    result = _run("inspect", tmp_path)
    assert result.returncode == 0
    assert "1 corrupt record (" in result.stdout and "1 torn tail (" in result.stdout
    info = json.loads(_run("inspect", tmp_path, "--json").stdout)
    assert (info["corrupt_records"], info["torn_tails"]) == (1, 1)
    assert info["runs"]["."]["scalars"]["x"]["count"] == 2


def test_errors_are_one_line(tmp_path: Path) -> None:
    line = _one_line_error(_run("inspect", tmp_path / "missing"), "inspect")
    assert "missing" in line
    _one_line_error(_run("export", GOLDEN / "tf1", "--format", "xlsx"), "export")
    _one_line_error(_run("export", GOLDEN / "tf1", "--format", "csv", "--tags", "("), "export")
    _one_line_error(_run("export", tmp_path / "missing", "--format", "csv"), "export")
    (tmp_path / "file").write_text("x")
    _one_line_error(_run("demo", tmp_path / "file", "--steps", "2"), "demo")


def test_export_csv_json_parquet(tmp_path: Path) -> None:
    result = _run("export", GOLDEN / "torch", "--format", "csv", "--out", tmp_path)
    assert result.returncode == 0 and "wrote 8 rows" in result.stderr
    rows = list(csv.DictReader(io.StringIO((tmp_path / "scalars.csv").read_text())))
    assert list(rows[0]) == ["run", "tag", "step", "wall_time", "value"]
    assert [(r["run"], r["tag"], r["step"]) for r in rows][:3] == [
        (".", "acc", "0"),
        (".", "acc", "1"),
        (".", "acc", "2"),
    ]
    assert float(rows[-1]["value"]) == 0.75  # hp/metric
    out = _run("export", GOLDEN / "torch", "--format", "json", "--out", "-", "--runs", "^hp$")
    assert json.loads(out.stdout) == [
        {**json.loads(out.stdout)[0], "run": "hp", "tag": "metric", "step": 0, "value": 0.75}
    ]
    hist = _run("export", GOLDEN / "tf2", "--format", "json", "--out", "-", "--kind", "histograms")
    assert len(json.loads(hist.stdout)[0]["value"]) == 10
    pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    assert _run("export", GOLDEN / "tf1", "--format", "parquet", "--out", tmp_path).returncode == 0
    table = pq.read_table(tmp_path / "scalars.parquet")
    assert table.num_rows == 7 and table.column_names == [
        "run",
        "tag",
        "step",
        "value",
        "wall_time",
    ]


def test_demo_small_read_by_tensorboard(tmp_path: Path) -> None:
    pea = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
    logdir = tmp_path / "demo"
    result = _run("demo", logdir, "--steps", "20")
    assert result.returncode == 0, result.stderr
    assert f"tensorboard --logdir {logdir}" in result.stdout and result.stderr == ""
    plugins: dict[str, set[str]] = {}
    for run in ("train", "eval"):
        acc = pea.EventAccumulator(str(logdir / run), size_guidance={"tensors": 0})
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
            plugins.setdefault(plugin, set()).add(f"{run}:{tag}")
            assert len(acc.Tensors(tag)) >= 1
    assert {"scalars", "histograms", "images", "audio", "text"} <= set(plugins)
    assert {"train:loss", "eval:eval/accuracy"} <= plugins["scalars"]
    assert "train:weights/w1" in plugins["histograms"]
    assert {"train:decision_regions", "train:class_probability", "eval:eval/confusion"} <= plugins[
        "images"
    ]
    assert plugins["npsummary_demo"] == {"eval:eval/confusion_matrix"}
    assert {"pr_curves", "custom_scalars", "mesh", "tensor"} <= set(plugins)
    assert {"train:training_video", "train:boxes"} <= plugins["images"]
    data = reader.load(logdir, decode=True)
    assert data.stats.bad_values == 0 and data.stats.corrupt_records == 0
    assert data.hparams["train/hparams"].hparams["optimizer"] == "sgd+momentum"
    assert set(data.hparams["train/hparams"].metrics) == {"eval/accuracy"}
    video = data.images[("train", "training_video")].images[0][0]  # GIF decoded into frames
    assert video.dtype == np.uint8 and video.ndim == 4 and video.shape[0] > 1
    assert (logdir / "train" / "projector_config.pbtxt").exists()
    acc = pea.EventAccumulator(str(logdir / "train"), size_guidance={"tensors": 0})
    acc.Reload()
    assert [e.step for e in acc.Tensors("loss")] == list(range(21))


def test_console_script() -> None:
    script = Path(sys.executable).with_name("npsummary")
    if not script.exists():
        pytest.skip("the npsummary console script is not installed in this environment")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("npsummary ")


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_export_writes_complex_tensors_as_real_imag_pairs(tmp_path: Path, fmt: str) -> None:
    """A complex tensor ended JSON and CSV exports with a traceback (issue 29, item 7); each
    complex number is now the documented pair [real, imag], non-finite parts as in JSON cells."""
    import npsummary

    logdir = tmp_path / "logs"
    with npsummary.create_file_writer(str(logdir)).as_default(step=0):
        npsummary.write("c", np.array([1 + 2j, 3 - 1j, complex("nan+infj")]), step=0)
    out = tmp_path / "out"
    result = _run("export", logdir, "--format", fmt, "--kind", "tensors", "--out", out)
    assert result.returncode == 0, result.stderr
    text = (out / f"tensors.{fmt}").read_text()
    value = (
        json.loads(text)[0]["value"]
        if fmt == "json"
        else json.loads(next(iter(csv.DictReader(io.StringIO(text))))["value"])
    )
    assert value == [[1.0, 2.0], [3.0, -1.0], ["NaN", "Infinity"]]
