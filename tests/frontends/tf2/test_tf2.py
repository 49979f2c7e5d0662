"""The tf.summary (TF2) API: default writer and step, as_default, flush, noop and closed writers."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from conftest import (
    event_files,
    only_event_file,
    read_events,
    read_run,
    read_scalars,
    scalar_values,
    wait_for,
)
from npsummary import MemorySink, experimental, proto
from npsummary._frontends import context as _context
from npsummary._frontends.tf2 import api as tf2

TF_NO_STEP = (
    "No step set. Please specify one either through the `step` argument or through "
    "tf.summary.experimental.set_step()"
)


def writer_for(path: Path, **kwargs: Any) -> npsummary.SummaryFileWriter:
    kwargs.setdefault("flush_millis", 10**6)  # only explicit flushes reach the disk
    kwargs.setdefault("max_queue", 1000)
    return npsummary.create_file_writer(str(path), **kwargs)


def on_disk(logdir: Path) -> list[tuple[int, float]]:
    return scalar_values(read_scalars(logdir).get("x", []))


# --- no writer, no step ---------------------------------------------------------------------


def test_no_default_writer_returns_false() -> None:
    assert _context.state.writer is None
    assert npsummary.scalar("x", 1.0) is False  # no step either: still just False
    assert npsummary.scalar("x", 1.0, step=3) is False
    assert npsummary.scalar("x", "not even a number", step=1.5) is False  # type: ignore[arg-type]


def test_writer_without_step_raises_tf_message(logdir: Path) -> None:
    writer = writer_for(logdir)
    with writer.as_default():
        assert experimental.get_step() is None
        with pytest.raises(ValueError) as info:
            npsummary.scalar("x", 1.0)
        assert str(info.value) == TF_NO_STEP
        assert npsummary.scalar("x", 1.0, step=0) is True
    writer.close()
    assert on_disk(logdir) == [(0, 1.0)]


def test_scalar_returns_python_true_and_writes(logdir: Path) -> None:
    writer = writer_for(logdir)
    with writer.as_default(step=2):
        result = npsummary.scalar("x", 7, description="the *x*")
        assert result is True
        assert npsummary.scalar("x", np.float64(0.25), step=np.int64(5)) is True
        assert npsummary.scalar("x", np.array([1.5]), step=3) is True
    writer.close()
    assert on_disk(logdir) == [(2, 7.0), (5, 0.25), (3, 1.5)]
    md = read_run(logdir).SummaryMetadata("x")
    assert md.summary_description == "the *x*"
    assert md.plugin_data.plugin_name == "scalars"


def test_scalar_bad_input_writes_nothing() -> None:
    sink = MemorySink()
    writer = npsummary.create_file_writer(sink)
    with writer.as_default(step=1):
        with pytest.raises(TypeError, match="'bad'"):
            npsummary.scalar("bad", "1.0")
        with pytest.raises(ValueError, match="'vec'"):
            npsummary.scalar("vec", [1.0, 2.0])
        with pytest.raises(TypeError, match="step"):
            npsummary.scalar("x", 1.0, step=1.5)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="int64"):
            npsummary.scalar("x", 1.0, step=2**63)
        with pytest.raises(TypeError, match="str"):
            npsummary.scalar(3, 1.0)  # type: ignore[arg-type]
        assert sink.payloads == []
        assert npsummary.scalar("ok", math.nan) is True
    assert len(sink.payloads) == 1


# --- as_default / set_as_default ------------------------------------------------------------


def test_as_default_restores_and_flushes_on_exit(tmp_path: Path) -> None:
    outer = writer_for(tmp_path / "outer")
    inner = writer_for(tmp_path / "inner")
    experimental.set_step(1)
    with outer.as_default():
        assert _context.state.writer is outer
        npsummary.scalar("x", 1.0)
        with inner.as_default(step=10):
            assert _context.state.writer is inner
            assert experimental.get_step() == 10
            npsummary.scalar("x", 10.0)
        # Flushed on exit, without close: on disk right after the block.
        assert on_disk(tmp_path / "inner") == [(10, 10.0)]
        assert _context.state.writer is outer
        assert experimental.get_step() == 1
        npsummary.scalar("x", 2.0, step=2)
        assert on_disk(tmp_path / "outer") == []  # not flushed yet
    assert _context.state.writer is None
    assert experimental.get_step() == 1
    assert on_disk(tmp_path / "outer") == [(1, 1.0), (2, 2.0)]
    outer.close()
    inner.close()


def test_as_default_yields_writer_and_restores_after_exception(logdir: Path) -> None:
    writer = writer_for(logdir)
    with pytest.raises(KeyError), writer.as_default(step=4) as entered:
        assert entered is writer
        npsummary.scalar("x", 4.0)
        raise KeyError("boom")
    assert _context.state.writer is None and experimental.get_step() is None
    assert on_disk(logdir) == [(4, 4.0)]
    writer.close()


def test_close_inside_as_default(logdir: Path) -> None:
    writer = writer_for(logdir)
    with writer.as_default(step=1):
        assert npsummary.scalar("x", 1.0) is True
        writer.close()
        assert npsummary.scalar("x", 2.0) is False
    assert _context.state.writer is None
    assert on_disk(logdir) == [(1, 1.0)]


def test_as_default_with_bad_step_changes_nothing(tmp_path: Path) -> None:
    previous = writer_for(tmp_path / "prev")
    previous.set_as_default(step=3)
    writer = writer_for(tmp_path / "new")
    for bad in (1.5, "2", True):
        with pytest.raises(TypeError), writer.as_default(step=bad):  # type: ignore[arg-type]
            pass  # pragma: no cover
        with pytest.raises(TypeError):
            writer.set_as_default(step=bad)  # type: ignore[arg-type]
        assert _context.state.writer is previous
        assert experimental.get_step() == 3
    previous.close()
    writer.close()


def test_set_as_default(logdir: Path) -> None:
    writer = writer_for(logdir)
    writer.set_as_default()
    assert _context.state.writer is writer
    assert experimental.get_step() is None
    writer.set_as_default(step=np.int32(8))
    assert experimental.get_step() == 8
    assert npsummary.scalar("x", 8.0) is True
    npsummary.flush()
    assert on_disk(logdir) == [(8, 8.0)]
    writer.close()
    # A closed default writer writes nothing.
    assert npsummary.scalar("x", 9.0) is False


def test_step_and_writer_are_thread_local(logdir: Path) -> None:
    writer = writer_for(logdir)
    writer.set_as_default(step=5)
    seen: dict[str, Any] = {}

    def other() -> None:
        seen["step"] = experimental.get_step()
        seen["wrote"] = npsummary.scalar("x", 1.0, step=1)
        experimental.set_step(99)
        seen["own step"] = experimental.get_step()

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(30)
    assert seen == {"step": None, "wrote": False, "own step": 99}
    assert experimental.get_step() == 5
    experimental.set_step(None)
    assert experimental.get_step() is None
    with pytest.raises(TypeError):
        experimental.set_step(2.0)  # type: ignore[arg-type]
    writer.close()


def test_experimental_module_exports_step_functions() -> None:
    assert experimental.set_step is tf2.set_step
    assert experimental.get_step is tf2.get_step


# --- flush ----------------------------------------------------------------------------------


def test_flush_function(tmp_path: Path) -> None:
    # no default writer: nothing to do
    assert npsummary.flush() is None  # type: ignore[func-returns-value]
    a = writer_for(tmp_path / "a")
    b = writer_for(tmp_path / "b")
    a.set_as_default(step=1)
    npsummary.scalar("x", 1.0)
    npsummary.flush()
    assert on_disk(tmp_path / "a") == [(1, 1.0)]
    with b.as_default(step=2):
        npsummary.scalar("x", 2.0)
        npsummary.scalar("x", 3.0, step=3)
        npsummary.flush(writer=b)
        assert on_disk(tmp_path / "b") == [(2, 2.0), (3, 3.0)]
    a.close()
    b.close()


@pytest.mark.parametrize("bad", ["writer", 1, MemorySink()])
def test_flush_rejects_non_writers(bad: Any) -> None:
    with pytest.raises(ValueError):
        npsummary.flush(writer=bad)


def test_flush_millis_without_calls(logdir: Path) -> None:
    writer = npsummary.create_file_writer(str(logdir), flush_millis=200)
    writer.set_as_default(step=1)
    npsummary.scalar("x", 1.0)
    assert wait_for(lambda: on_disk(logdir) == [(1, 1.0)])
    writer.close()


def test_max_queue(logdir: Path) -> None:
    writer = npsummary.create_file_writer(str(logdir), flush_millis=10**6, max_queue=2)
    writer.set_as_default()
    for step in range(3):
        npsummary.scalar("x", float(step), step=step)
    assert wait_for(lambda: len(on_disk(logdir)) == 3)
    writer.close()


# --- closed and noop writers ----------------------------------------------------------------


def test_closed_writer(logdir: Path) -> None:
    writer = writer_for(logdir)
    with writer.as_default(step=1):
        npsummary.scalar("x", 1.0)
    writer.close()
    size = only_event_file(logdir).stat().st_size
    for call in (writer.set_as_default, writer.init):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    with pytest.raises(RuntimeError, match="closed"), writer.as_default():
        pass  # pragma: no cover
    assert _context.state.writer is None
    writer.flush()
    writer.close()
    npsummary.flush(writer)
    assert only_event_file(logdir).stat().st_size == size
    assert on_disk(logdir) == [(1, 1.0)]


def test_writer_context_manager_and_init(logdir: Path) -> None:
    with writer_for(logdir) as writer:
        writer.init()
        assert writer.logdir == str(logdir)
        with writer.as_default(step=1):
            npsummary.scalar("x", 1.0)
    with pytest.raises(RuntimeError):
        writer.init()
    assert on_disk(logdir) == [(1, 1.0)]


def test_noop_writer_writes_nothing(tmp_path: Path) -> None:
    noop = npsummary.create_noop_writer()
    assert isinstance(noop, npsummary.NoopSummaryWriter)
    with noop.as_default(step=1):
        assert _context.state.writer is None
        assert npsummary.scalar("x", 1.0) is False
        assert npsummary.scalar("x", 1.0, step=2) is False
    noop.set_as_default()
    assert npsummary.scalar("x", 1.0, step=3) is False
    noop.init()
    noop.flush()
    npsummary.flush(noop)
    noop.close()
    noop.close()
    with noop.as_default():  # still usable after close, like TF's
        pass
    assert list(tmp_path.iterdir()) == []


def test_noop_as_default_keeps_the_real_default(logdir: Path) -> None:
    real = writer_for(logdir)
    real.set_as_default(step=1)
    with npsummary.create_noop_writer().as_default():
        assert _context.state.writer is real
    assert _context.state.writer is real
    real.close()


# --- create_file_writer ---------------------------------------------------------------------


def test_file_created_immediately_with_file_version(logdir: Path) -> None:
    writer = writer_for(logdir)
    (first,) = read_events(only_event_file(logdir))
    assert first.file_version == "brain.Event:2"
    assert first.source_metadata.writer
    writer.close()


@pytest.mark.parametrize(
    ("suffix", "ending"),
    [(None, ".v2"), (".v2", ".v2"), ("x", ".x"), (".x", ".x"), ("", ".")],
)
def test_filename_suffix_rules(logdir: Path, suffix: str | None, ending: str) -> None:
    writer = npsummary.create_file_writer(str(logdir), filename_suffix=suffix)
    writer.close()
    name = only_event_file(logdir).name
    assert name.endswith(ending)
    counter = name[: -len(ending)].rsplit(".", 1)[1]
    assert counter.isdigit()


def test_create_file_writer_rejects_none() -> None:
    with pytest.raises(ValueError):
        npsummary.create_file_writer(None)  # type: ignore[arg-type]


def test_create_file_writer_pathlike_and_nested(tmp_path: Path) -> None:
    writer = npsummary.create_file_writer(tmp_path / "a" / "b", name="ignored")
    writer.close()
    assert len(event_files(tmp_path / "a" / "b")) == 1


def test_create_file_writer_with_memory_sink() -> None:
    sink = MemorySink()
    writer = npsummary.create_file_writer(sink)
    with writer.as_default(step=1):
        assert npsummary.scalar("x", 2.0) is True
    assert sink.flushes == 1  # as_default flushes on exit
    event = proto.Event.FromString(sink.payloads[0])
    assert event.step == 1 and event.summary.value[0].tag == "x"
    writer.close()
    assert sink.closed
