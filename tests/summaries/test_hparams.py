"""add_hparams: the anchors' three summaries, the session's run, value types and errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import event_files, examples, read_events
from npsummary import MemorySink, SummaryWriter, proto
from npsummary._summaries.hparams import hparams_summaries

pytestmark = pytest.mark.torch

# Booleans are left out of the tensorboardX comparison: the anchors differ (torch, whose
# form we write, records them as 0/1; tensorboardX as booleans): test_bools_as_torch_writes_them.
VALUES = st.one_of(
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.none(),
)


def _parsed(summary: bytes) -> tuple[str, Any]:
    # Parsed with TensorBoard's own schema (skipped where tensorboard is absent).
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    plugin_data_pb2 = pytest.importorskip("tensorboard.plugins.hparams.plugin_data_pb2")

    (value,) = summary_pb2.Summary.FromString(summary).value
    content = plugin_data_pb2.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    assert value.metadata.plugin_data.plugin_name == "hparams"
    assert value.WhichOneof("value") is None
    return value.tag, content


@pytest.mark.fuzz
@settings(max_examples=examples(50), deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=6), VALUES, max_size=5),
    st.lists(st.text(min_size=1, max_size=6), max_size=3, unique=True),
)
def test_same_content_as_tensorboardx(hparams: dict[str, Any], metrics: list[str]) -> None:
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    ours = [_parsed(s) for s in hparams_summaries(hparams, metrics)]
    theirs = [
        _parsed(s.SerializeToString())
        for s in tbx_summary.hparams(hparams, dict.fromkeys(metrics, 0.0))
    ]
    assert [tag for tag, _ in ours] == [tag for tag, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)


def test_numpy_scalars_size_one_arrays_and_bools_are_numbers() -> None:
    _, start, _ = hparams_summaries(
        {"a": np.int64(3), "b": np.float32(0.5), "c": np.bool_(True), "d": np.array([2.0])}, []
    )
    hparams = _parsed(start)[1].session_start_info.hparams
    assert hparams["a"].number_value == 3.0
    assert hparams["b"].number_value == 0.5
    assert hparams["c"].number_value == 1.0  # as torch: a bool is an int
    assert hparams["d"].number_value == 2.0


def test_bools_as_torch_writes_them() -> None:
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    hp = {"nesterov": False, "amsgrad": True, "lr": 0.1}
    ours = [_parsed(s)[1] for s in hparams_summaries(hp, ["m"])]
    theirs = [_parsed(s.SerializeToString())[1] for s in torch_summary.hparams(hp, {"m": 1})]
    assert ours == theirs


def test_discrete_domains_as_torch_writes_them() -> None:
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    hp = {"opt": "adam", "lr": 0.1}
    domains = {"opt": ["adam", "sgd"], "lr": [0.1, 0.01]}
    ours = _parsed(hparams_summaries(hp, ["m"], domains)[0])[1]
    theirs = _parsed(torch_summary.hparams(hp, {"m": 1}, domains)[0].SerializeToString())[1]
    assert ours == theirs


@pytest.mark.parametrize(
    ("hparams", "domains", "error", "match"),
    [
        ({"lr": [0.1]}, None, TypeError, "'lr'"),
        ({"lr": {"a": 1}}, None, TypeError, "'lr'"),
        ({"lr": object()}, None, TypeError, "'lr'"),
        ({1: 0.1}, None, TypeError, "key"),
        ([("lr", 0.1)], None, TypeError, "hparam_dict"),
        ({"lr": 0.1}, {"opt": ["a"]}, ValueError, "'opt'"),
        ({"lr": 0.1}, {"lr": ["a"]}, TypeError, "'lr'"),
        ({"lr": 0.1}, {"lr": 0.1}, TypeError, "'lr'"),
    ],
)
def test_bad_hparams_raise_and_write_nothing(
    hparams: Any, domains: Any, error: type, match: str
) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match=match):
        writer.add_hparams(hparams, {"m": 1.0}, domains, run_name="r")
    with pytest.raises(TypeError, match="'m'"):
        writer.add_hparams({"lr": 0.1}, {"m": "high"}, run_name="r")
    assert sink.payloads == [] and sink.children == {}


def _tags(directory: Path) -> list[str]:
    (path,) = event_files(directory)
    return [v.tag for e in read_events(path) for v in e.summary.value]


HP_TAGS = ["_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"]


def test_default_run_is_named_by_time_as_in_torch(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_hparams({"lr": 0.1}, {"hp/acc": 0.5})
        writer.add_hparams({"lr": 0.2}, {"hp/acc": 0.6})
    runs = sorted(p for p in logdir.iterdir() if p.is_dir())
    assert len(runs) == 2
    for run in runs:
        float(run.name)  # str(time.time())
        assert _tags(run) == [*HP_TAGS, "hp/acc"]
    assert _tags(logdir) == []


def test_own_run_keeps_everything_in_the_writers_run(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_scalar("loss", 1.0, 0)
        writer.add_hparams({"lr": 0.1}, {"hp/acc": 0.5}, run_name=".", global_step=3)
    assert [p for p in logdir.iterdir() if p.is_dir()] == []
    assert _tags(logdir) == ["loss", *HP_TAGS, "hp/acc"]
    steps = [e.step for e in read_events(event_files(logdir)[0]) if e.summary.value]
    assert steps == [0, 3, 3, 3, 3]


def test_tensorboardx_positional_name_and_nested_runs(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, "trial_a")
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, name="trial_b")
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, "trial_d", 7)  # tensorboardX: name, step
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="sweep/trial_c")
    assert _tags(logdir / "trial_a") == [*HP_TAGS, "m"]
    assert _tags(logdir / "trial_b") == [*HP_TAGS, "m"]
    assert _tags(logdir / "sweep" / "trial_c") == [*HP_TAGS, "m"]
    (path,) = event_files(logdir / "trial_d")
    assert {e.step for e in read_events(path) if e.summary.value} == {7}


@pytest.mark.parametrize("run_name", ["..", "../x", "a/../b", "/abs", "a//b", "a/."])
def test_run_names_cannot_escape_the_logdir(tmp_path: Path, run_name: str) -> None:
    logdir = tmp_path / "run"
    with SummaryWriter(str(logdir)) as writer, pytest.raises(ValueError, match="run_name"):
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name=run_name)
    assert sorted(os.listdir(tmp_path)) == ["run"]
    assert [p for p in logdir.iterdir() if p.is_dir()] == []


def test_session_values_reach_the_plugin_data(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_hparams({"lr": 0.1, "opt": "adam", "aug": False}, {"m": 1.0}, run_name="s")
    (path,) = event_files(logdir / "s")
    values = [v for e in read_events(path) for v in e.summary.value]
    start = proto.HParamsPluginData.FromString(values[1].metadata.plugin_data.content)
    hparams = start.session_start_info.hparams
    assert hparams["lr"].number_value == 0.1
    assert hparams["opt"].string_value == "adam"
    assert hparams["aug"].bool_value is False


def test_nested_run_names_make_one_run_and_close_their_file(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_hparams({"a": 1}, {"m": 1.0}, run_name="sweep/t1")
        # Written and closed at once: readable before the writer is closed.
        assert _tags(logdir / "sweep" / "t1") == [*HP_TAGS, "m"]
    assert event_files(logdir / "sweep") == []


def test_sub_runs_of_a_custom_sink() -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_hparams({"a": 1}, {"m": 1.0}, run_name="sweep/t1")
    assert sink.payloads == [] and sink.children["sweep"].payloads == []
    assert len(sink.children["sweep"].children["t1"].payloads) == 4
