"""SummaryWriter: the tensorboardX / torch API, read back with TensorBoard's accumulator."""

from __future__ import annotations

import fractions
import math
import os
import re
import socket
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import (
    event_files,
    examples,
    f32,
    only_event_file,
    read_events,
    read_run,
    read_scalars,
    scalar_values,
)
from npsummary import FileSink, MemorySink, SummaryWriter, proto
from npsummary._sinks import eventfile as _eventfile

# --- value kinds ----------------------------------------------------------------------------


class ArrayLike:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value, dtype=dtype)


class FloatOnly:
    def __float__(self) -> float:
        return 0.75


class TorchLike:
    """A tensor that requires grad: ``__array__`` refuses, ``detach().cpu()`` works."""

    def __init__(self, value: float) -> None:
        self.value = value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad.")

    def detach(self) -> TorchLike:
        return self

    def cpu(self) -> ArrayLike:
        return ArrayLike(np.float32(self.value))


class BrokenTensor:
    """``__array__`` and ``detach`` both fail."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad.")

    def detach(self) -> Any:
        raise RuntimeError("no detach either")


ACCEPTED: list[tuple[Any, float]] = [
    (3, 3.0),
    (-2.5, -2.5),
    (True, 1.0),
    (False, 0.0),
    (np.float16(0.5), 0.5),
    (np.float32(0.1), f32(0.1)),
    (np.float64(0.1), f32(0.1)),
    (np.int8(-5), -5.0),
    (np.uint8(200), 200.0),
    (np.int32(7), 7.0),
    (np.int64(2**40), float(2**40)),
    (np.uint64(3), 3.0),
    (np.bool_(True), 1.0),
    (np.array(2.5), 2.5),
    (np.array([1.5]), 1.5),
    (np.array([[4]], dtype=np.int16), 4.0),
    (np.array(0.25, dtype=np.float16), 0.25),
    (ArrayLike(0.125), 0.125),
    (ArrayLike([6]), 6.0),
    (FloatOnly(), 0.75),
    (TorchLike(1.5), 1.5),
    (fractions.Fraction(1, 4), 0.25),
    (10**20, f32(1e20)),
]


@pytest.mark.parametrize(("value", "expected"), ACCEPTED, ids=[repr(v) for v, _ in ACCEPTED])
def test_accepted_scalar_kinds(logdir: Path, value: Any, expected: float) -> None:
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("v", value, 1)
    assert scalar_values(read_scalars(logdir)["v"]) == [(1, expected)]


REJECTED: list[tuple[Any, type[Exception]]] = [
    ("1.0", TypeError),
    (b"1", TypeError),
    (None, TypeError),
    (1 + 2j, TypeError),
    (np.complex64(1), TypeError),
    ([1.0, 2.0], ValueError),
    (np.array([1.0, 2.0]), ValueError),
    (np.zeros((0,)), ValueError),
    (np.array(["a"]), TypeError),
    (np.array([None], dtype=object), TypeError),
    (object(), TypeError),
    (BrokenTensor(), TypeError),
    ({"a": 1}, TypeError),
]


@pytest.mark.parametrize(("value", "error"), REJECTED, ids=[repr(v) for v, _ in REJECTED])
def test_rejected_scalar_kinds_write_nothing(value: Any, error: type[Exception]) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match="my/tag"):
        writer.add_scalar("my/tag", value, 1)
    assert sink.payloads == []
    writer.add_scalar("my/tag", 1.0, 2)
    assert len(sink.payloads) == 1


@pytest.mark.parametrize("tag", [1, None, b"loss", ["loss"]])
def test_non_string_tag(tag: Any) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(TypeError, match="tag must be a str"):
        writer.add_scalar(tag, 1.0, 1)
    with pytest.raises(TypeError, match="must be a str"):
        writer.add_scalars(tag, {"a": 1.0}, 1)
    assert sink.payloads == [] and sink.children == {}


def test_str_subclass_tag_is_accepted(logdir: Path) -> None:
    class Tag(str):
        pass

    with SummaryWriter(logdir) as writer:
        writer.add_scalar(Tag("loss"), 1.0, 1)
    assert list(read_scalars(logdir)) == ["loss"]


# Floats, bools and numeric strings are steps here, as int() reads them in torch and tensorboardX
# (tests/frontends/test_global_step_forms.py).
BAD_STEPS: list[tuple[Any, type[Exception]]] = [
    (float("nan"), ValueError),
    ("3.5", ValueError),
    (2**63, ValueError),
    (-(2**63) - 1, ValueError),
    (np.uint64(2**63), ValueError),
    (np.array([1, 2]), TypeError),
]


@pytest.mark.parametrize(("step", "error"), BAD_STEPS, ids=[repr(s) for s, _ in BAD_STEPS])
def test_bad_steps(step: Any, error: type[Exception]) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match="'loss'"):
        writer.add_scalar("loss", 1.0, step)
    with pytest.raises(error, match="'acc'"):
        writer.add_scalars("acc", {"a": 1.0}, step)
    assert sink.payloads == [] and sink.children == {}
    with pytest.raises(error):
        writer.set_step(step)


class Index:
    def __index__(self) -> int:
        return 9


GOOD_STEPS = [0, -1, 2**63 - 1, -(2**63), np.int64(5), np.uint32(6), np.array(7), Index()]


def test_good_steps(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        for step in GOOD_STEPS:
            writer.add_scalar("s", 1.0, step)
    steps = [e.step for e in read_events(only_event_file(logdir))[1:]]
    assert steps == [int(s) if not isinstance(s, Index) else 9 for s in GOOD_STEPS]


@pytest.mark.parametrize(
    ("walltime", "error"),
    [(math.nan, ValueError), (math.inf, ValueError), (-math.inf, ValueError), ("now", TypeError)],
)
def test_bad_walltime(walltime: Any, error: type[Exception]) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match=r"'loss'.*walltime"):
        writer.add_scalar("loss", 1.0, 1, walltime=walltime)
    with pytest.raises(error, match="walltime"):
        writer.add_scalars("loss", {"a": 1.0}, 1, walltime=walltime)
    assert sink.payloads == [] and sink.children == {}


def test_walltime_and_default_walltime(logdir: Path) -> None:
    import time

    before = time.time()
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("a", 1.0, 1, walltime=1234.5)
        writer.add_scalar("a", 2.0, 2, walltime=np.float64(5.0))
        writer.add_scalar("a", 3.0, 3)
    after = time.time()
    points = read_scalars(logdir)["a"]
    assert [p.wall_time for p in points[:2]] == [1234.5, 5.0]
    assert before <= points[2].wall_time <= after


# --- non-finite and out-of-range values -----------------------------------------------------


def test_non_finite_values_are_stored(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("x", math.nan, 1)
        writer.add_scalar("x", math.inf, 2)
        writer.add_scalar("x", -np.inf, 3)
        writer.add_scalar("x", np.float32("nan"), 4)
    values = [p.value for p in read_scalars(logdir)["x"]]
    assert math.isnan(values[0]) and math.isnan(values[3])
    assert values[1:3] == [math.inf, -math.inf]


def test_values_beyond_float32_saturate_without_warnings(logdir: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with SummaryWriter(logdir) as writer:
            writer.add_scalar("x", 1e39, 1)
            writer.add_scalar("x", -1e300, 2)
            writer.add_scalar("x", np.float64(3.5e38), 3)
            writer.add_scalar("x", 10**400, 4)
            writer.add_scalars("m", {"k": 1e39}, 5)
    assert [p.value for p in read_scalars(logdir)["x"]] == [math.inf, -math.inf, math.inf, math.inf]
    assert [p.value for p in read_scalars(logdir / "m_k")["m"]] == [math.inf]


@pytest.mark.fuzz
@settings(max_examples=examples(300))
@given(
    st.one_of(
        st.floats(allow_nan=False),
        st.floats(min_value=3.3e38, max_value=3.5e38),
        st.sampled_from([2.0**128 - 2.0**103, np.nextafter(2.0**128 - 2.0**103, 0), 3.4028235e38]),
    ).flatmap(lambda x: st.sampled_from([x, -x]))
)
def test_stored_value_is_the_float32_cast(value: float) -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_scalar("x", value, 1)
    event = proto.Event.FromString(sink.payloads[0])
    (v,) = event.summary.value
    assert v.WhichOneof("value") == "simple_value"  # as tensorboardX and torch write it
    stored = np.float32(v.simple_value)
    with np.errstate(over="ignore"):
        expected = np.float32(value)
    assert stored == expected or (math.isnan(stored) and math.isnan(expected))


@pytest.mark.fuzz
@settings(max_examples=examples(150))
@given(
    st.text(min_size=1, max_size=30),
    st.floats(width=32),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
)
def test_round_trip_through_tensorboard_parser(
    tag: str, value: float, step: int, walltime: float
) -> None:
    event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    sink = MemorySink()
    SummaryWriter(sink).add_scalar(tag, value, step, walltime=walltime)
    (payload,) = sink.payloads
    event = event_pb2.Event.FromString(payload)
    assert (event.step, event.wall_time) == (step, walltime)
    (v,) = event.summary.value
    assert v.tag == tag
    assert not v.HasField("metadata")  # tensorboardX writes none without display_name
    stored = v.simple_value
    assert stored == value or (math.isnan(stored) and math.isnan(value))


def test_unicode_tags_read_back(logdir: Path) -> None:
    tags = ["λ/損失", "emoji 🎉", "tab\tand space", "a" * 300]
    with SummaryWriter(logdir) as writer:
        for i, tag in enumerate(tags):
            writer.add_scalar(tag, float(i), i)
    scalars = read_scalars(logdir)
    assert sorted(scalars) == sorted(tags)
    for i, tag in enumerate(tags):
        assert scalar_values(scalars[tag]) == [(i, float(i))]


# --- add_scalars ----------------------------------------------------------------------------


def test_add_scalars_writes_sub_runs(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        for step in range(3):
            writer.add_scalars(
                "loss", {"train": step * 1.0, "eval": np.float32(step * 2.0)}, step, walltime=10.0
            )
        writer.add_scalar("main", 1.0, 0)
    assert sorted(p.name for p in logdir.iterdir() if p.is_dir()) == ["loss_eval", "loss_train"]
    assert scalar_values(read_scalars(logdir / "loss_train")["loss"]) == [
        (s, s * 1.0) for s in range(3)
    ]
    assert scalar_values(read_scalars(logdir / "loss_eval")["loss"]) == [
        (s, s * 2.0) for s in range(3)
    ]
    assert list(read_scalars(logdir)) == ["main"]
    # One event file per sub-run, however many calls.
    assert len(event_files(logdir / "loss_train")) == 1


def test_add_scalars_keys_cannot_escape_logdir(tmp_path: Path) -> None:
    logdir = tmp_path / "a" / "run"
    keys: dict[str, Any] = {
        "x/y": 1.0,
        "..": 2.0,
        "../../escape": 3.0,
        "/abs": 4.0,
        "b\\c": 5.0,
        "": 6.0,
    }
    with SummaryWriter(logdir) as writer:
        writer.add_scalars("m", keys, 1)
        writer.add_scalars("..", {".": 7.0}, 1)
        writer.add_scalars("../up", {"k": 8.0}, 1)
    files = [p for p in tmp_path.rglob("*") if "tfevents" in p.name]
    assert len(files) == 1 + len(keys) + 2
    for path in files:
        assert path.resolve().is_relative_to(logdir.resolve())
        parent = path.parent.relative_to(logdir)
        assert len(parent.parts) <= 1
    runs = {p.parent.name for p in files if p.parent != logdir}
    assert runs == {
        "m_x%2Fy",
        "m_..",
        "m_..%2F..%2Fescape",
        "m_%2Fabs",
        "m_b%5Cc",
        "m_",
        ".._.",
        ".._up_k",
    }
    assert scalar_values(read_scalars(logdir / "m_x%2Fy")["m"]) == [(1, 1.0)]
    assert scalar_values(read_scalars(logdir / ".._up_k")["../up"]) == [(1, 8.0)]


def test_add_scalars_keys_differing_by_slash_or_underscore_stay_apart(logdir: Path) -> None:
    # "train/a" and "train_a" are two curves: two sub-runs, each with one value per step (issue
    # 13, item 8). A "/" in a key is written %2F, as in a URL; a key without "/", "\\", NUL or
    # a "%" followed by two hex digits keeps the tensorboardX name <main_tag>_<key>.
    keys = {"train/a": 1.0, "train_a": 2.0, "b\\c": 3.0, "b_c": 4.0, "p%2Fq": 5.0, "p/q": 6.0}
    with SummaryWriter(logdir) as writer:
        for step in range(3):
            writer.add_scalars("loss", {k: v + step for k, v in keys.items()}, step)
    runs = {
        "loss_train%2Fa": 1.0,
        "loss_train_a": 2.0,
        "loss_b%5Cc": 3.0,
        "loss_b_c": 4.0,
        "loss_p%252Fq": 5.0,
        "loss_p%2Fq": 6.0,
    }
    assert sorted(p.name for p in logdir.iterdir() if p.is_dir()) == sorted(runs)
    for run, value in runs.items():
        assert scalar_values(read_scalars(logdir / run)["loss"]) == [
            (s, value + s) for s in range(3)
        ]


# Keys made of the pieces a sub-run name must encode, so that near-collisions are common.
_KEY_PIECES = st.sampled_from(["/", "_", "\\", "%", "%2F", "%5c", "\x00", "a", "."])
_KEYS = st.lists(_KEY_PIECES, max_size=4).map("".join) | st.text(
    st.characters(blacklist_categories=["Cs"]), max_size=8
)


@pytest.mark.fuzz
@given(st.lists(_KEYS, min_size=2, max_size=8, unique=True))
def test_add_scalars_distinct_keys_get_distinct_subruns(keys: list[str]) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_scalars("m", {k: 1.0 for k in keys}, 0)
    assert len(sink.children) == len(keys)
    for name in sink.children:
        assert len(sink.children[name].payloads) == 1


def test_add_scalars_bad_value_writes_nothing(logdir: Path) -> None:
    writer = SummaryWriter(logdir)
    with pytest.raises(TypeError, match="loss/bad"):
        writer.add_scalars("loss", {"good": 1.0, "bad": "x", "later": 2.0}, 1)
    with pytest.raises(ValueError, match="loss/vec"):
        writer.add_scalars("loss", {"good": 1.0, "vec": [1, 2]}, 1)
    with pytest.raises(TypeError, match="key"):
        writer.add_scalars("loss", {"good": 1.0, 3: 2.0}, 1)  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="dict"):
        writer.add_scalars("loss", [("good", 1.0)], 1)  # type: ignore[arg-type]
    assert [p.name for p in logdir.iterdir()] == [only_event_file(logdir).name]
    writer.add_scalars("loss", {"good": 3.0}, 2)
    writer.close()
    assert scalar_values(read_scalars(logdir / "loss_good")["loss"]) == [(2, 3.0)]
    assert len(read_events(only_event_file(logdir))) == 1  # file_version only


def test_add_scalars_with_memory_sink() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_scalars("m", {"a": 1.0, "b/c": 2.0}, 4, walltime=3.0)
    assert sink.payloads == []
    assert sorted(sink.children) == ["m_a", "m_b%2Fc"]
    event = proto.Event.FromString(sink.children["m_b%2Fc"].payloads[0])
    assert (event.step, event.wall_time, event.summary.value[0].tag) == (4, 3.0, "m")
    writer.close()
    assert sink.closed and all(c.closed for c in sink.children.values())


# --- construction and lifecycle -------------------------------------------------------------


def test_log_dir_alias(tmp_path: Path) -> None:
    with SummaryWriter(log_dir=str(tmp_path / "alias")) as writer:
        assert writer.get_logdir() == str(tmp_path / "alias")
        writer.add_scalar("x", 1.0, 1)
    assert read_scalars(tmp_path / "alias")["x"]
    with pytest.raises(TypeError):
        SummaryWriter(str(tmp_path / "a"), log_dir=str(tmp_path / "b"))


def test_pathlike_logdir(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        assert writer.get_logdir() == str(logdir)
    only_event_file(logdir)


def test_default_logdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as writer:
        logdir = writer.get_logdir()
        writer.add_scalar("x", 1.0, 1)
    host = re.escape(socket.gethostname())
    assert re.fullmatch(
        rf"runs{re.escape(os.sep)}[A-Z][a-z]{{2}}\d\d_\d\d-\d\d-\d\d_{host}_lr0\.1", logdir
    )
    assert read_scalars(tmp_path / logdir)["x"]


def test_comment_ignored_with_explicit_logdir(logdir: Path) -> None:
    with SummaryWriter(logdir, comment="_ignored") as writer:
        assert writer.get_logdir() == str(logdir)


def test_filename_suffix(logdir: Path) -> None:
    with SummaryWriter(logdir, filename_suffix=".mine") as writer:
        writer.add_scalars("a", {"b": 1.0}, 1)
    assert only_event_file(logdir).name.endswith(".mine")
    assert only_event_file(logdir / "a_b").name.endswith(".mine")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"flush_secs": 0}, ValueError),
        ({"flush_secs": -1}, ValueError),
        ({"max_queue": -1}, ValueError),
        ({"max_queue": 1.5}, TypeError),
    ],
)
def test_bad_options(logdir: Path, kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        SummaryWriter(logdir, **kwargs)


def test_context_manager_closes(logdir: Path) -> None:
    with SummaryWriter(logdir, flush_secs=1000) as writer:
        writer.add_scalar("x", 1.0, 1)
        sink = writer.sink
    assert isinstance(sink, FileSink)
    assert sink._state.closed
    assert scalar_values(read_scalars(logdir)["x"]) == [(1, 1.0)]


def test_flush_without_close(logdir: Path) -> None:
    writer = SummaryWriter(logdir, flush_secs=1000, max_queue=1000)
    writer.add_scalar("x", 1.0, 1)
    writer.add_scalars("m", {"a": 2.0}, 1)
    writer.flush()
    assert scalar_values(read_scalars(logdir)["x"]) == [(1, 1.0)]
    assert scalar_values(read_scalars(logdir / "m_a")["m"]) == [(1, 2.0)]
    writer.close()


def test_close_is_idempotent_and_add_after_close_starts_new_file(logdir: Path) -> None:
    writer = SummaryWriter(logdir)
    writer.add_scalar("x", 1.0, 1)
    writer.close()
    writer.close()
    writer.flush()  # no-op when closed
    assert len(event_files(logdir)) == 1
    writer.add_scalar("x", 2.0, 2)
    writer.add_scalars("m", {"a": 3.0}, 2)
    writer.close()
    files = event_files(logdir)
    assert len(files) == 2
    steps = sorted(e.step for f in files for e in read_events(f) if e.HasField("summary"))
    assert steps == [1, 2]
    assert len(event_files(logdir / "m_a")) == 1


def test_set_step_default(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("x", 0.0)
        writer.set_step(np.int64(10))
        writer.add_scalar("x", 1.0)
        writer.add_scalar("x", 2.0, 3)
        writer.add_scalars("m", {"a": 4.0})
    assert scalar_values(read_scalars(logdir)["x"]) == [(0, 0.0), (10, 1.0), (3, 2.0)]
    assert scalar_values(read_scalars(logdir / "m_a")["m"]) == [(10, 4.0)]


def test_display_name_and_description(logdir: Path) -> None:
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("x", 1.0, 1, display_name="Ex", summary_description="the *x*")
    md = read_run(logdir).SummaryMetadata("x")
    assert md.display_name == "Ex"
    assert md.summary_description == "the *x*"
    assert md.plugin_data.plugin_name == "scalars"


class SteppedClock:
    """Stands in for ``time`` in ``_events``: each new event file is one second later."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def time(self) -> float:
        self.now += 1.0
        return self.now

    monotonic = staticmethod(__import__("time").monotonic)


def test_purge_step_hides_orphaned_steps(logdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_eventfile, "time", SteppedClock())
    with SummaryWriter(logdir) as crashed:
        for step in range(10):
            crashed.add_scalar("loss", float(step), step)
    with SummaryWriter(logdir, purge_step=5) as resumed:
        for step in range(5, 8):
            resumed.add_scalar("loss", step + 0.5, step)
    files = event_files(logdir)
    assert len(files) == 2
    for start in read_events(files[1])[1:3]:
        assert start.session_log.status == proto.SESSION_LOG_START
        assert start.step == 5
    expected = [(s, float(s)) for s in range(5)] + [(s, s + 0.5) for s in range(5, 8)]
    assert scalar_values(read_scalars(logdir)["loss"]) == expected


def test_purge_step_written_once(logdir: Path) -> None:
    writer = SummaryWriter(logdir, purge_step=3)
    writer.close()
    writer.add_scalar("x", 1.0, 4)
    writer.close()
    first, second = (
        [e for e in read_events(f) if e.HasField("session_log")] for f in event_files(logdir)
    )
    # Two STARTs: TensorBoard's Python loader purges on the second START of a run.
    assert [(e.step, e.session_log.status) for e in first] == [(3, proto.SESSION_LOG_START)] * 2
    assert second == []


def test_legacy_accumulator_reads_scalars(logdir: Path) -> None:
    # The loader of analysis notebooks (and tbparse): simple_value lands in Tags()["scalars"].
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    with SummaryWriter(logdir) as writer:
        writer.add_scalar("x", 0.5, 2)
    acc = ea.EventAccumulator(str(logdir))
    acc.Reload()
    assert acc.Tags()["scalars"] == ["x"]
    (event,) = acc.Scalars("x")
    assert (event.step, event.value) == (2, 0.5)


def test_custom_sink_has_no_logdir() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    assert writer.get_logdir() == ""
    assert writer.sink is sink
    writer.add_scalar("x", 1.0, 1)
    writer.flush()
    assert sink.flushes == 1
