"""``npsummary.GlobalSummaryWriter`` (issue 21, item 6): tensorboardX's writer whose steps count
themselves per tag, shared by forked worker processes, and ``patch()`` installs it."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path
from typing import Any

import pytest

import npsummary
from npsummary import GlobalSummaryWriter, reader


def test_each_tag_counts_its_own_steps(tmp_path: Path) -> None:
    writer = GlobalSummaryWriter(str(tmp_path))
    for value in (0.5, 0.25, 0.125):
        writer.add_scalar("loss", value)
    writer.add_scalar("acc", 0.9)
    writer.add_text("note", "hello")
    writer.add_text("note", "again")
    writer.close()
    scalars = reader.scalars(str(tmp_path))
    assert scalars[(".", "loss")].steps.tolist() == [0, 1, 2]
    assert scalars[(".", "loss")].values.tolist() == [0.5, 0.25, 0.125]
    assert scalars[(".", "acc")].steps.tolist() == [0]
    assert reader.text(str(tmp_path))[(".", "note/text_summary")].steps.tolist() == [0, 1]


_shared: Any = None


def _log(value: int) -> None:
    _shared.add_scalar("pool/x", float(value))
    _shared.flush()


@pytest.mark.distributed
@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_forked_workers_share_one_step_sequence(tmp_path: Path) -> None:
    global _shared
    _shared = GlobalSummaryWriter(str(tmp_path))
    try:
        # close() and join(), not terminate(): this test is about the shared steps; the
        # workers' SIGTERM path has its own tests (test_reliability_concurrency.py).
        pool = multiprocessing.get_context("fork").Pool(3)
        pool.map(_log, range(12))
        pool.close()
        pool.join()
        _shared.add_scalar("pool/x", 99.0)
    finally:
        _shared.close()
    series = reader.scalars(str(tmp_path))[(".", "pool/x")]
    assert sorted(series.steps.tolist()) == list(range(13))
    assert sorted(series.values.tolist()) == [*map(float, range(12)), 99.0]


def test_patch_installs_it_on_tensorboardx() -> None:
    tensorboardX = pytest.importorskip("tensorboardX")
    original = tensorboardX.GlobalSummaryWriter
    try:
        patched = npsummary.patch()
        assert "tensorboardX.GlobalSummaryWriter" in patched
        assert tensorboardX.GlobalSummaryWriter is GlobalSummaryWriter
    finally:
        npsummary.unpatch()
    assert tensorboardX.GlobalSummaryWriter is original


def test_it_keeps_logging_after_close(tmp_path: Path) -> None:
    """As tensorboardX's: close() ends this process's file, a later call opens a new one and
    the steps go on (issue 29, item 4: BrokenPipeError before)."""
    writer = GlobalSummaryWriter(str(tmp_path))
    writer.add_scalar("loss", 0.5)
    writer.close()
    writer.add_scalar("loss", 0.25)
    writer.add_text("note", "after close")
    writer.close()
    writer.close()  # twice is fine
    series = reader.scalars(str(tmp_path))[(".", "loss")]
    assert series.steps.tolist() == [0, 1]
    assert series.values.tolist() == [0.5, 0.25]


def test_get_summary_writer_hands_out_a_working_writer_after_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npsummary._frontends.tbx import global_writer

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(global_writer, "_global_writer", None)
    first = GlobalSummaryWriter.getSummaryWriter()
    first.add_scalar("x", 1.0)
    first.close()
    again = GlobalSummaryWriter.getSummaryWriter()
    again.add_scalar("x", 2.0)
    again.close()
    (series,) = reader.scalars(str(tmp_path / "runs")).values()
    assert series.values.tolist() == [1.0, 2.0]
