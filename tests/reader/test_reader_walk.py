"""The reader's directory walk visits each real directory once (issue 20 item 5)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

import pytest

from npsummary import reader
from npsummary._format.record import frame_record
from npsummary.proto import Event
from npsummary.reader._discover import _entries, discover, is_event_file
from npsummary.reader._io import LocalFileSystem

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


def _events(path: Path, step: int = 1) -> None:
    ev = Event(wall_time=1.0, step=step)
    ev.summary.value.add(tag="loss", simple_value=0.5)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(frame_record(ev.SerializeToString()))


class CountingFS(LocalFileSystem):
    def __init__(self) -> None:
        self.listed: list[str] = []

    def _count(self, path: str) -> None:
        self.listed.append(path)
        if len(self.listed) > 100:
            raise AssertionError("the walk lists directories without bound")

    def listdir(self, path: str) -> list[str]:
        self._count(path)
        return super().listdir(path)

    def entries(self, path: str) -> list[tuple[str, bool, bool, bool]]:
        self._count(path)
        return super().entries(path)


class MinimalFS:
    """A filesystem with the five methods of the protocol only: the walk asks each question."""

    def __init__(self) -> None:
        self.local = LocalFileSystem()

    def open(self, path: str) -> BinaryIO:
        return self.local.open(path)

    def listdir(self, path: str) -> list[str]:
        return self.local.listdir(path)

    def isdir(self, path: str) -> bool:
        return self.local.isdir(path)

    def size(self, path: str) -> int:
        return self.local.size(path)

    def join(self, *parts: str) -> str:
        return self.local.join(*parts)


def test_links_to_an_ancestor_are_walked_once(tmp_path: Path) -> None:
    _events(tmp_path / "events.out.tfevents.1")
    _events(tmp_path / "run" / "events.out.tfevents.2")
    for name in ("a", "b", "c", "d"):
        (tmp_path / name).symlink_to(".")  # before the fix: 4**64 paths; run "." 64 times
    fs = CountingFS()
    runs = discover(fs, str(tmp_path))
    assert [r.name for r in runs] == [".", "run"]
    assert len(fs.listed) == 2  # the logdir and run/, each once
    data = reader.load(tmp_path)
    assert sorted(data.scalars) == [(".", "loss"), ("run", "loss")]
    assert data.stats.files == 2


def test_a_run_reached_directly_and_through_a_link_keeps_its_real_name(tmp_path: Path) -> None:
    _events(tmp_path / "zeta" / "events.out.tfevents.1")
    (tmp_path / "alpha").symlink_to("zeta")  # sorts first, but is a link
    (tmp_path / "loop").symlink_to("loop")  # ELOOP on stat: skipped
    (tmp_path / "gone").symlink_to("missing")
    assert [r.name for r in discover(LocalFileSystem(), str(tmp_path))] == ["zeta"]


def test_a_link_to_a_run_outside_the_logdir_is_still_read(tmp_path: Path) -> None:
    _events(tmp_path / "elsewhere" / "r" / "events.out.tfevents.1")
    (tmp_path / "logdir").mkdir()
    (tmp_path / "logdir" / "linked").symlink_to(tmp_path / "elsewhere" / "r")
    assert list(reader.scalars(tmp_path / "logdir")) == [("linked", "loss")]


def test_a_deep_chain_of_links_between_two_directories_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "to_y").symlink_to(tmp_path / "y")
    (tmp_path / "y" / "to_x").symlink_to(tmp_path / "x")
    _events(tmp_path / "y" / "events.out.tfevents.1")
    fs = CountingFS()
    assert [r.name for r in discover(fs, str(tmp_path))] == ["y"]
    assert len(fs.listed) == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_named_like_an_event_file_does_not_hang_the_read(tmp_path: Path) -> None:
    import subprocess
    import sys

    _events(tmp_path / "run" / "events.out.tfevents.1")
    os.mkfifo(tmp_path / "run" / "events.out.tfevents.2")  # no writer: open() would block
    os.mkfifo(tmp_path / "alone")
    code = (
        "import sys; from npsummary import reader; "
        "d = reader.load(sys.argv[1]); print(sorted(d.scalars), d.stats.files); "
        "print(reader.load(sys.argv[2]).stats.records)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path), str(tmp_path / "alone")],
        capture_output=True,
        text=True,
        timeout=120,  # a hang detector, not a speed assertion
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[('run', 'loss')] 1", "0"]


def _tree_of_every_kind(root: Path) -> None:
    _events(root / "run" / "events.out.tfevents.1")
    _events(root / "events.out.tfevents.0")
    (root / "events.out.tfevents.dir").mkdir()  # a folder named like an event file
    (root / "notes.txt").write_text("x")
    (root / "linked-run").symlink_to("run")
    (root / "events.out.tfevents.link").symlink_to("events.out.tfevents.0")
    (root / "events.out.tfevents.dangling").symlink_to("missing")
    (root / "loop").symlink_to("loop")
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "events.out.tfevents.fifo")


def test_one_scandir_answers_as_the_four_questions_do(tmp_path: Path) -> None:
    # LocalFileSystem.entries (one scandir) must answer what listdir + isdir / islink / isfile
    # answer, for what the walk asks: links followed, FIFOs and dangling links not files.
    _tree_of_every_kind(tmp_path)
    fs = LocalFileSystem()
    for directory in (str(tmp_path), str(tmp_path / "run")):

        def asked(rows: list[tuple[str, bool, bool, bool]]) -> list[tuple[str, bool, bool, bool]]:
            return sorted(
                (name, isdir, isdir and islink, not isdir and is_event_file(name) and isfile)
                for name, isdir, islink, isfile in rows
            )

        assert asked(fs.entries(directory)) == asked(_entries(fs, directory))


def test_a_filesystem_without_entries_or_identity_finds_the_same_runs(tmp_path: Path) -> None:
    _events(tmp_path / "b" / "events.out.tfevents.2")
    _events(tmp_path / "a" / "deeper" / "events.out.tfevents.1")
    _events(tmp_path / "events.out.tfevents.0")
    (tmp_path / "a" / "notes.txt").write_text("x")
    assert discover(MinimalFS(), str(tmp_path)) == discover(LocalFileSystem(), str(tmp_path))
    assert [r.name for r in discover(MinimalFS(), str(tmp_path))] == [".", "a/deeper", "b"]
