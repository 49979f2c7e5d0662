"""The three front ends check the same argument the same way, and warnings blame the user's line.

``SummaryWriter`` (tensorboardX/torch), the ``tf.summary`` functions and ``npsummary.v1`` accept
several arguments of the same kind; one bad value must give one exception type from all of them,
naming the argument (and the tag where there is one). Warnings from any entry point must point
at the line of the test that called it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, v1

# -- writer options -----------------------------------------------------------------------------

BAD_MAX_QUEUE: list[tuple[Any, type[Exception]]] = [
    ("3", TypeError),
    (1.5, TypeError),
    (True, TypeError),
    ([3], TypeError),
    (-1, ValueError),
]
BAD_FLUSH: list[tuple[Any, type[Exception]]] = [
    ("x", TypeError),
    ("2", TypeError),
    (True, TypeError),
    (object(), TypeError),
    (0, ValueError),
    (-1, ValueError),
    (math.inf, ValueError),
    (math.nan, ValueError),
]


def _constructors(tmp_path: Path) -> dict[str, Callable[..., Any]]:
    return {
        "SummaryWriter": lambda **kw: SummaryWriter(tmp_path / "a", **kw),
        "create_file_writer": lambda **kw: npsummary.create_file_writer(tmp_path / "b", **kw),
        "v1.FileWriter": lambda **kw: v1.FileWriter(tmp_path / "c", **kw),
    }


@pytest.mark.parametrize(("value", "error"), BAD_MAX_QUEUE)
def test_max_queue_is_checked_alike(tmp_path: Path, value: Any, error: type[Exception]) -> None:
    for name, make in _constructors(tmp_path).items():
        with pytest.raises(error, match="max_queue") as info:
            make(max_queue=value)
        assert type(info.value) is error, name


@pytest.mark.parametrize(("value", "error"), BAD_FLUSH)
def test_flush_interval_is_checked_alike(
    tmp_path: Path, value: Any, error: type[Exception]
) -> None:
    makers = _constructors(tmp_path)
    cases = [
        (makers["SummaryWriter"], "flush_secs"),
        (makers["v1.FileWriter"], "flush_secs"),
        (makers["create_file_writer"], "flush_millis"),
    ]
    for make, keyword in cases:
        with pytest.raises(error, match=keyword) as info:
            make(**{keyword: value})
        assert type(info.value) is error, keyword


def test_numpy_integers_and_good_values_are_accepted_by_all(tmp_path: Path) -> None:
    makers = _constructors(tmp_path)
    makers["SummaryWriter"](max_queue=np.int64(3), flush_secs=np.float32(0.5)).close()
    makers["create_file_writer"](max_queue=np.int64(3), flush_millis=np.int32(500)).close()
    makers["v1.FileWriter"](max_queue=np.int64(3), flush_secs=np.float64(0.5)).close()


@pytest.mark.parametrize("suffix", [3, b".x", [".x"]])
def test_filename_suffix_type_is_checked_alike(tmp_path: Path, suffix: Any) -> None:
    for name, make in _constructors(tmp_path).items():
        with pytest.raises(TypeError, match="filename_suffix"):
            make(filename_suffix=suffix)
        assert name


@pytest.mark.parametrize("logdir", [3, 1.5, [b"x"]])
def test_logdir_type_is_checked_alike(logdir: Any) -> None:
    for make in (SummaryWriter, npsummary.create_file_writer, v1.FileWriter):
        with pytest.raises(TypeError, match="logdir"):
            make(logdir)


# -- steps --------------------------------------------------------------------------------------

BAD_STEPS: list[tuple[Any, type[Exception]]] = [
    (np.timedelta64(1, "s"), TypeError),
    (2**64, ValueError),
    (-(2**63) - 1, ValueError),
]


def _step_calls(step: Any) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], Any]]]:
    """The calls taking ``step``: (the writers' global_step, the tf.summary functions' step)."""
    writer = SummaryWriter(MemorySink())
    file_writer = v1.FileWriter(MemorySink())
    writers: dict[str, Callable[[], Any]] = {
        "add_scalar": lambda: writer.add_scalar("loss", 1.0, step),
        "add_histogram": lambda: writer.add_histogram("loss", [1.0], step),
        "FileWriter.add_summary": lambda: file_writer.add_summary(v1.scalar("x", 1), step),
    }
    functions: dict[str, Callable[[], Any]] = {
        "scalar": lambda: npsummary.scalar("loss", 1.0, step=step),
        "histogram": lambda: npsummary.histogram("loss", [1.0], step=step),
        "write": lambda: npsummary.write("loss", [1.0], step=step),
    }
    return writers, functions


@pytest.mark.parametrize(("step", "error"), BAD_STEPS)
def test_steps_are_checked_alike(step: Any, error: type[Exception]) -> None:
    writers, functions = _step_calls(step)
    with npsummary.create_file_writer(MemorySink()).as_default():
        for name, call in {**writers, **functions}.items():
            with pytest.raises(error, match="step") as info:
                call()
            assert type(info.value) is error, name


@pytest.mark.parametrize("step", ["1", 1.5, True, np.float32(2)])
def test_writers_take_int_of_a_step_tf_summary_refuses_it(step: Any) -> None:
    """torch's and tensorboardX's writers and TF1's FileWriter store int(step); TF2's summary
    functions refuse a step that is not an integer, as TensorFlow does."""
    writers, functions = _step_calls(step)
    for call in writers.values():
        call()
    with npsummary.create_file_writer(MemorySink()).as_default():
        for name, call in functions.items():
            with pytest.raises(TypeError, match="step") as info:
                call()
            assert type(info.value) is TypeError, name


# -- per-summary arguments ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "error"), [("3", TypeError), (2.0, TypeError), (True, TypeError), (-1, ValueError)]
)
def test_max_outputs_is_checked_alike(value: Any, error: type[Exception]) -> None:
    images = np.zeros((2, 4, 4, 3), dtype=np.uint8)
    clips = np.zeros((2, 8, 1), dtype=np.float32)
    calls: dict[str, Callable[[], Any]] = {
        "image": lambda: npsummary.image("pic", images, 0, max_outputs=value),
        "audio": lambda: npsummary.audio("pic", clips, 8000, 0, max_outputs=value),
        "v1.image": lambda: v1.image("pic", images, max_outputs=value),
        "v1.audio": lambda: v1.audio("pic", clips, 8000, max_outputs=value),
    }
    with npsummary.create_file_writer(MemorySink()).as_default():
        for name, call in calls.items():
            with pytest.raises(error, match=r"'pic.*max_outputs") as info:
                call()
            assert type(info.value) is error, name


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ncols": "2"}, TypeError),
        ({"ncols": 0}, ValueError),
        ({"padding": 1.0}, TypeError),
        ({"padding": -1}, ValueError),
        ({"padding": 10**6}, ValueError),
    ],
)
def test_grid_options_are_checked_alike(kwargs: dict[str, Any], error: type[Exception]) -> None:
    writer = SummaryWriter(MemorySink())
    calls: dict[str, Callable[[], Any]] = {
        "add_images": lambda: writer.add_images("g", np.zeros((2, 3, 4, 4)), 0, **kwargs),
        "add_filters": lambda: writer.add_filters("g", np.zeros((3, 3, 1, 2)), 0, **kwargs),
        "add_feature_maps": lambda: writer.add_feature_maps(
            "g", np.zeros((1, 2, 4, 4)), 0, **kwargs
        ),
    }
    for name, call in calls.items():
        with pytest.raises(error, match="'g'") as info:
            call()
        assert type(info.value) is error, name
    assert not writer.sink.payloads  # type: ignore[attr-defined]


@pytest.mark.parametrize("description", [3, b"bytes", ["a"], "\ud800"])
def test_descriptions_are_checked_alike(description: Any) -> None:
    writer = SummaryWriter(MemorySink())
    calls: dict[str, Callable[[], Any]] = {
        "add_scalar": lambda: writer.add_scalar("d", 1.0, 0, summary_description=description),
        "add_distribution": lambda: writer.add_distribution("d", [1.0], 0, description=description),
        "add_image": lambda: writer.add_image("d", np.zeros((3, 2, 2)), 0, description=description),
        "scalar": lambda: npsummary.scalar("d", 1.0, 0, description=description),
        "histogram": lambda: npsummary.histogram("d", [1.0], 0, description=description),
        "text": lambda: npsummary.text("d", "hi", 0, description=description),
        "image": lambda: npsummary.image("d", np.zeros((1, 2, 2, 3)), 0, description=description),
        "v1.tensor_summary": lambda: v1.tensor_summary("d", [1.0], summary_description=description),
    }
    with npsummary.create_file_writer(MemorySink()).as_default():
        for name, call in calls.items():
            error = ValueError if isinstance(description, str) else TypeError
            with pytest.raises(error, match="'d") as info:
                call()
            assert type(info.value) is error, name
    assert not writer.sink.payloads  # type: ignore[attr-defined]


@pytest.mark.parametrize("metadata", [b"\xff\xff\xff", "text", 3])
def test_summary_metadata_is_checked_alike(metadata: Any) -> None:
    error = ValueError if isinstance(metadata, bytes) else TypeError
    sink = MemorySink()
    tf2 = npsummary.create_file_writer(sink)
    with tf2.as_default(step=0):
        if isinstance(metadata, bytes):
            # tf.summary.write keeps bytes that do not parse as an empty field, as TF does
            assert npsummary.write("m", [1.0], metadata=metadata) is True
        else:
            with pytest.raises(error, match=r"'m'.*metadata"):
                npsummary.write("m", [1.0], metadata=metadata)
    with pytest.raises(error, match=r"'m'.*summary_metadata"):
        v1.tensor_summary("m", [1.0], summary_metadata=metadata)


def test_broken_array_arguments_are_type_errors_naming_tag_and_argument() -> None:
    class Lying:
        def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
            raise RuntimeError("no")

    writer = SummaryWriter(MemorySink())
    data = np.random.default_rng(0).standard_normal(100)
    with pytest.raises(TypeError, match=r"'t': bins"):
        writer.add_histogram("t", data, 0, bins=Lying())
    with pytest.raises(TypeError, match=r"'t': bucket_limits"):
        writer.add_histogram_raw("t", 0, 1, 1, 1, 1, Lying(), [1], 0)
    with pytest.raises(TypeError, match=r"'t'"):
        writer.add_histogram("t", Lying(), 0)
    with pytest.raises(TypeError, match=r"'t': max_bins"):
        writer.add_histogram("t", data, 0, bins=10, max_bins=Lying())  # type: ignore[arg-type]
    assert not writer.sink.payloads  # type: ignore[attr-defined]


# -- warnings point at the user's line ------------------------------------------------------------


def _warning_files(call: Callable[[], Any], category: type[Warning]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w.filename for w in caught if issubclass(w.category, category)]


def test_nonfinite_warnings_point_at_the_callers_line() -> None:
    writer = SummaryWriter(MemorySink())
    bad = np.array([1.0, np.nan, np.inf])
    tf2 = npsummary.create_file_writer(MemorySink())
    entry_points: dict[str, Callable[[], Any]] = {
        "add_histogram": lambda: writer.add_histogram("a", bad, 0),
        "add_distribution": lambda: writer.add_distribution("b", bad, 0),
        "add_variable_summaries": lambda: writer.add_variable_summaries("c", bad, 0),
        "add_image": lambda: writer.add_image("d", np.full((1, 2, 2), np.nan), 0),
        "add_images": lambda: writer.add_images("e", np.full((2, 1, 2, 2), np.nan), 0),
        "histogram": lambda: npsummary.histogram("f", bad, 0),
    }
    with tf2.as_default():
        for name, call in entry_points.items():
            files = _warning_files(call, npsummary.NonFiniteWarning)
            assert files == [__file__], name


def test_warnings_name_the_tag() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.warns(npsummary.NonFiniteWarning, match="'named'"):
        writer.add_histogram("named", [1.0, np.nan], 0)


def test_bin_count_capped_warning_names_the_tag_and_points_at_the_caller() -> None:
    writer = SummaryWriter(MemorySink())
    wide = np.append(np.linspace(0.0, 1.0, 10_000), 1e9)  # fd asks for ~1e12 bins
    with pytest.warns(npsummary.BinCountCappedWarning, match="'capped'") as caught:
        writer.add_histogram("capped", wide, 0, bins="fd")
    assert [w.filename for w in caught] == [__file__]
