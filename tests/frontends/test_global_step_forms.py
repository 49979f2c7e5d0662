"""``global_step`` in the forms torch's and tensorboardX's writers and TF1's ``FileWriter`` take:
they store ``int(global_step)``, so a float step (``3.0``, ``np.float64(4.0)``, even ``2.7``) is
accepted and truncated (issue 29, item 5: refused with TypeError before). tensorboardX is the
oracle where it is installed; ``tf.summary`` keeps refusing floats, as TensorFlow does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, TensorboardXSummaryWriter, reader, v1
from npsummary import tensorboardx_summary as tbx_builders
from npsummary.proto import Event

ACCEPTED: dict[str, Any] = {
    "float": 3.0,
    "float fraction": 2.7,
    "negative fraction": -2.7,
    "np.float64": np.float64(4.0),
    "np.float32": np.float32(5.5),
    "np.float16": np.float16(6.0),
    "0-d float array": np.array(7.25),
    "one-element array": np.array([8.0]),
    "np.int32": np.int32(9),
    "bool": True,
    "numeric str": "10",
}
REFUSED: dict[str, tuple[Any, type[Exception]]] = {
    "nan": (float("nan"), ValueError),
    "inf": (float("inf"), ValueError),
    "text": ("ten", ValueError),
    "list": ([1, 2], TypeError),
    "two-element array": (np.array([1.0, 2.0]), TypeError),
    "beyond int64": (2.0**70, ValueError),
}


def _steps(sink: MemorySink) -> list[int]:
    return [Event.FromString(p).step for p in sink.payloads if Event.FromString(p).summary.value]


@pytest.mark.parametrize("name", sorted(ACCEPTED))
@pytest.mark.parametrize("writer_class", [SummaryWriter, TensorboardXSummaryWriter])
def test_writers_store_int_of_the_step(name: str, writer_class: type[SummaryWriter]) -> None:
    step = ACCEPTED[name]
    sink = MemorySink()
    writer = writer_class(sink)
    writer.add_scalar("loss", 0.5, step)
    writer.add_histogram("h", np.arange(4.0), step)
    writer.add_text("t", "x", step)
    file_writer = writer.file_writer
    assert file_writer is not None
    file_writer.add_summary(tbx_builders.scalar("s", 1.0), step)
    assert _steps(sink) == [int(step.reshape(()) if isinstance(step, np.ndarray) else step)] * 4


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_steps_int_refuses_are_refused_naming_the_tag(name: str) -> None:
    step, error = REFUSED[name]
    writer = SummaryWriter(MemorySink())
    with pytest.raises(error, match=r"'loss'.*step"):
        writer.add_scalar("loss", 0.5, step)
    writer.add_scalar("loss", 0.5, 1)  # still usable
    writer.close()


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_v1_file_writer_stores_int_of_the_step(name: str) -> None:
    step = ACCEPTED[name]
    sink = MemorySink()
    with v1.FileWriter(sink) as file_writer:
        file_writer.add_summary(v1.scalar("loss", 0.5), step)
    expected = int(step.reshape(()) if isinstance(step, np.ndarray) else step)
    assert _steps(sink) == [expected]


@pytest.mark.parametrize("step", [3.0, np.float64(4.0), 2.7])
def test_tf_summary_still_refuses_float_steps(step: Any) -> None:
    with npsummary.create_file_writer(MemorySink()).as_default(), pytest.raises(TypeError):
        npsummary.scalar("loss", 0.5, step=step)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_same_step_as_tensorboardx(tmp_path: Path, name: str) -> None:
    tensorboardX = pytest.importorskip("tensorboardX")
    step = ACCEPTED[name]
    if isinstance(step, np.ndarray) and step.ndim:
        pytest.skip("int() of a one-element array is deprecated in NumPy (a warning)")
    theirs = tensorboardX.SummaryWriter(str(tmp_path / "theirs"))
    theirs.add_scalar("loss", 0.5, step)
    theirs.close()
    ours = TensorboardXSummaryWriter(str(tmp_path / "ours"))
    ours.add_scalar("loss", 0.5, step)
    ours.close()
    got = {
        run: reader.scalars(str(tmp_path / run))[(".", "loss")].steps for run in ("theirs", "ours")
    }
    assert got["ours"].tolist() == got["theirs"].tolist()
