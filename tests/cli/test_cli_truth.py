"""The command line against hostile files and its own promises (issue 20 items 2, 3, 4, 15;
issue 24 item 4): outputs created atomically and never through a link, text from files escaped
on the terminal and in CSV, a selection that matches nothing is an error, skipped records are
reported, a closed pipe ends quietly."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary._cli import _export, main
from npsummary._cli._inspect import sparkline
from npsummary._format.record import frame_record
from npsummary.proto import Event
from npsummary.reader._atomic import write_atomically
from paths import TESTS

GOLDEN = TESTS / "golden" / "reader"


def _events(path: Path, *scalars: tuple[str, int, float]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = bytearray()
    for tag, step, value in scalars:
        ev = Event(wall_time=1_700_000_000.0, step=step)
        ev.summary.value.add(tag=tag, simple_value=value)
        out += frame_record(ev.SerializeToString())
    path.write_bytes(bytes(out))
    return path


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- item 2: outputs never follow a link, and are replaced atomically ---------------------


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_export_replaces_a_link_at_its_output_instead_of_writing_through_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow.parquet")
    logdir = tmp_path / "logs"
    _events(logdir / "events.out.tfevents.1", ("loss", 0, 0.5))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / f"scalars.{fmt}").symlink_to(victim)
    status, _, err = _cli(capsys, "export", logdir, "--format", fmt, "--out", out)
    assert status == 0, err
    assert victim.read_text() == "precious\n"
    assert not (out / f"scalars.{fmt}").is_symlink()
    assert sorted(p.name for p in out.iterdir()) == [f"scalars.{fmt}"]  # no temporary left


def test_a_failed_export_leaves_the_previous_file_intact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    logdir = tmp_path / "logs"
    _events(logdir / "events.out.tfevents.1", ("loss", 0, 0.5))
    out = tmp_path / "out"
    out.mkdir()
    (out / "scalars.csv").write_text("previous\n")

    def fail_midway(self: Any, cols: dict[str, Any]) -> None:
        self.stream.write("run,tag\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_export._TextWriter, "write", fail_midway)
    status, _, err = _cli(capsys, "export", logdir, "--format", "csv", "--out", out)
    assert status == 1 and "No space left" in err
    assert (out / "scalars.csv").read_text() == "previous\n"
    assert [p.name for p in out.iterdir()] == ["scalars.csv"]


def _writing(data: bytes) -> Callable[[BinaryIO], None]:
    def write(f: BinaryIO) -> None:
        f.write(data)

    return write


def test_write_atomically_refuses_what_it_cannot_do_cleanly(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(OSError):
        write_atomically(tmp_path / "dir", _writing(b"x"))  # a directory is not replaced
    with pytest.raises(ValueError, match="does not name a file"):
        write_atomically(str(tmp_path) + os.sep, _writing(b"x"))
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "missing" / "f", _writing(b"x"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]
    write_atomically(tmp_path / "f", _writing(b"new"))
    assert (tmp_path / "f").read_bytes() == b"new"


def test_to_parquet_does_not_write_through_a_link(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow.parquet")
    from npsummary import reader

    victim = tmp_path / "victim"
    victim.write_text("precious")
    (tmp_path / "t.parquet").symlink_to(victim)
    reader.to_parquet(GOLDEN / "tf1", tmp_path / "t.parquet")
    assert victim.read_text() == "precious" and not (tmp_path / "t.parquet").is_symlink()


# --- item 3: text from files is escaped on the terminal --------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[8mhidden\u202eevil\r"


def test_inspect_escapes_control_characters_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _events(tmp_path / f"run{HOSTILE[:5]}" / "events.out.tfevents.1", (HOSTILE, 0, 1.0))
    status, out, err = _cli(capsys, "inspect", tmp_path)
    assert status == 0, err
    assert not any(c in out for c in "\x1b\x07\u202e\r")
    assert "\\x1b]0;pwned\\x07\\x1b[8mhidden\\u202eevil\\x0d" in out
    assert "run run\\x1b]0;p" in out
    status, out, _ = _cli(capsys, "inspect", tmp_path, "--json")
    info = json.loads(out)
    assert HOSTILE in info["runs"][f"run{HOSTILE[:5]}"]["scalars"]


def test_error_lines_escape_text_from_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _events(tmp_path / "events.out.tfevents.1", (HOSTILE, 0, 1.0))
    ev = Event(step=1)
    value = ev.summary.value.add(tag=HOSTILE + "/hp")
    value.metadata.plugin_data.plugin_name = "hparams"
    value.metadata.plugin_data.content = b"\xff"
    path.write_bytes(path.read_bytes() + frame_record(ev.SerializeToString()))
    status, _, err = _cli(capsys, "inspect", tmp_path, "--strict")
    assert status == 1 and "\\x1b]0;pwned" in err and "\x1b" not in err
    status, _, err = _cli(capsys, "export", tmp_path, "--kind", "hparams", "--format", "csv")
    assert status == 1 and "1 undecodable value\n" in err and "\x1b" not in err
    assert "\\x1b]0;pwned" in err and "no hparams in 1 run" in err


# --- item 4: CSV injection ------------------------------------------------------------------


def test_csv_cells_that_a_spreadsheet_would_run_are_prefixed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tags = ['=HYPERLINK("http://x")', "+1", "-2", "@SUM(A1)", "\tt", "\rr", "loss", "a=b"]
    _events(tmp_path / "logs" / "=run" / "events.out.tfevents.1", *[(t, 0, -0.5) for t in tags])
    status, _, err = _cli(capsys, "export", tmp_path / "logs", "--format", "csv", "--out", tmp_path)
    assert status == 0, err
    text = (tmp_path / "scalars.csv").read_bytes().decode()
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    got = {r["tag"] for r in rows}
    assert got == {"'" + t for t in tags[:6]} | {"loss", "a=b"}
    assert {r["run"] for r in rows} == {"'=run"}
    assert {r["value"] for r in rows} == {"-0.5"}  # numbers are not text: never prefixed
    status, out, _ = _cli(capsys, "export", tmp_path / "logs", "--format", "json", "--out", "-")
    assert {r["tag"] for r in json.loads(out)} == set(tags)  # JSON keeps the text as it is


def test_export_help_documents_the_csv_prefix_and_atomic_writes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "= + - @" in text and "OWASP" in text and "never followed" in text


# --- item 15: the sparkline near the float64 limits -----------------------------------------


def test_inspect_survives_values_near_float64_limits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """float64 scalar tensors (TF2 writes them for float64 data): simple_value is float32."""
    values = [1e308, -1e308, 1.7e308, math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308]
    records = bytearray()
    for step, value in enumerate(values):
        ev = Event(wall_time=1.0, step=step)
        v = ev.summary.value.add(tag="big")
        v.metadata.plugin_data.plugin_name = "scalars"
        v.tensor.dtype = 2  # DT_DOUBLE
        v.tensor.double_val.append(value)
        records += frame_record(ev.SerializeToString())
    (tmp_path / "events.out.tfevents.1").write_bytes(bytes(records))
    status, out, err = _cli(capsys, "inspect", tmp_path)
    assert status == 0, err
    assert "last 1.79769e+308  ▆▁▇   ▃█" in out
    status, out, _ = _cli(capsys, "inspect", tmp_path, "--json")
    big = json.loads(out)["runs"]["."]["scalars"]["big"]
    assert big["count"] == len(values) and big["last_value"] == 1.7976931348623157e308


@pytest.mark.fuzz
@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=60))
def test_sparkline_never_fails(values: list[float]) -> None:
    line = sparkline(np.array(values, np.float64))
    finite = [v for v in values if math.isfinite(v)]
    assert len(line) == (min(24, len(values)) if finite else 0)


def test_sparkline_of_extreme_values_keeps_their_order() -> None:
    line = sparkline(np.array([-1.7e308, 0.0, 1.7e308]))
    assert line == "▁▄█"


# --- issue 24 item 4: a command line that tells the truth -----------------------------------


def test_a_selection_that_matches_nothing_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _events(tmp_path / "logs" / "demo" / "train" / "events.out.tfevents.1", ("loss", 0, 1.0))
    logs = tmp_path / "logs"
    status, out, err = _cli(capsys, "inspect", logs, "--runs", "^train")
    assert status == 1 and out == ""
    assert "no run matches --runs '^train'; the runs are 'demo/train'" in err
    status, _, err = _cli(capsys, "inspect", logs, "--tags", "acc")
    assert status == 1 and "no tag of summaries matches --tags 'acc' in 1 run" in err
    out_dir = tmp_path / "out"
    status, _, err = _cli(
        capsys, "export", logs, "--format", "csv", "--runs", "^x", "--out", out_dir
    )
    assert status == 1 and "no run matches" in err and not out_dir.exists()
    status, _, err = _cli(
        capsys, "export", logs, "--format", "csv", "--kind", "images", "--out", "-"
    )
    assert status == 1 and "no images in 1 run" in err
    status, _, _ = _cli(capsys, "inspect", logs, "--runs", "train$")
    assert status == 0


def test_a_file_that_is_not_an_event_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a TFRecord at all\n" * 10)
    status, _, err = _cli(capsys, "inspect", notes)
    assert status == 1 and "is not an event file" in err
    status, _, err = _cli(capsys, "export", notes, "--format", "csv", "--out", "-")
    assert status == 1 and "is not an event file" in err
    assert len(err.splitlines()) == 1, err  # one line, as docs/CLI.md says: no skipped list
    (tmp_path / "empty").mkdir()
    status, _, err = _cli(capsys, "inspect", tmp_path / "empty")
    assert status == 1 and "no event files" in err


def test_skipped_records_are_reported_and_fail_under_strict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _events(tmp_path / "events.out.tfevents.1", *[("x", s, s) for s in range(4)])
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    status, _, err = _cli(capsys, "export", tmp_path, "--format", "csv", "--out", tmp_path / "o")
    assert status == 0 and "skipped 1 corrupt record (" in err and "events.out.tfevents.1" in err
    status, _, err = _cli(
        capsys, "export", tmp_path, "--format", "csv", "--out", tmp_path / "o", "--strict"
    )
    assert status == 1 and "corrupt record" in err
    status, out, _ = _cli(capsys, "inspect", tmp_path)
    assert status == 0 and "1 corrupt record (" in out and "1 run, 1 file" in out
    status, _, err = _cli(capsys, "inspect", tmp_path, "--strict")
    assert status == 1 and "events.out.tfevents.1" in err


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    _events(tmp_path / "events.out.tfevents.1", *[(f"tag/{i:05d}", 0, 1.0) for i in range(4000)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "npsummary", "inspect", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert first.startswith(b"logdir ") and err == b""


def test_demo_help_states_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "30 s" not in text and "under a minute" not in text
    assert "600 steps take about 2 s" in text and "(default 600)" in text


def test_csv_on_a_terminal_is_escaped_and_exact_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _events(tmp_path / "events.out.tfevents.1", (HOSTILE, 0, 1.0))
    status, out, _ = _cli(capsys, "export", tmp_path, "--format", "csv", "--out", "-")
    assert status == 0 and "\x1b]0;pwned" in out  # a pipe gets the data as it is
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    status, out, _ = _cli(capsys, "export", tmp_path, "--format", "csv", "--out", "-")
    assert status == 0 and "\x1b" not in out and "\\x1b]0;pwned" in out


def test_every_help_example_runs_on_the_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each example in the --help texts runs as written (on a short demo; piped examples
    without the pipe, the one naming a sample event file on a real one)."""
    import re
    import shlex

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--steps", "20"]) == 0
    sample = next((tmp_path / "runs" / "demo" / "train").glob("*tfevents*"))
    examples_run = 0
    for command in ([], ["inspect"], ["export"], ["demo"]):
        with pytest.raises(SystemExit):
            main([*command, "--help"])
        text = capsys.readouterr().out
        for line in text.split("examples:")[1].split("\n\n")[0].splitlines():
            if not line.strip().startswith("npsummary "):
                continue
            shown = re.split(r"\s{2,}", line.strip())[0].split(" | ")[0]
            argv = shlex.split(shown)[1:]
            argv = [str(sample) if a.startswith("runs/exp1/events") else a for a in argv]
            argv = [str(tmp_path / "d") if a == "/tmp/demo" else a for a in argv]
            if argv[0] == "demo" and "--steps" not in argv:
                argv += ["--steps", "20"]  # the default 600 steps take about 2 s
            status = main(argv)
            out = capsys.readouterr()
            assert status == 0, (shown, out.err)
            examples_run += 1
    assert examples_run >= 8


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 torn tails"), (1, "1 torn tail"), (2, "2 torn tails"), (1234, "1,234 torn tails")],
)
def test_counts_take_the_noun_in_their_number(n: int, expected: str) -> None:
    from npsummary._cli._report import count

    assert count(n, "torn tail") == expected


@pytest.mark.parametrize("installed", [True, False])
def test_demo_ends_with_a_view_that_works(
    installed: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its last command is ``tensorboard --logdir``; where TensorBoard is missing (npsummary does
    not depend on it), the line before says how to install it (issue 33 item 5)."""
    from npsummary._cli import _demo

    monkeypatch.setattr(_demo, "tensorboard_installed", lambda: installed)
    status, out, _ = _cli(capsys, "demo", tmp_path / "demo", "--steps", "2")
    assert status == 0
    view = out.partition("View it with")[2].partition("Where to look:")[0].splitlines()
    assert view[-2:] == [
        f"  tensorboard --logdir {tmp_path / 'demo'}",
        "then open http://localhost:6006",
    ]
    assert ("  pip install tensorboard" in view) is not installed
