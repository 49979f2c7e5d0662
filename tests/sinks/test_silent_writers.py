"""The silent writer of a rank that writes nothing, walked against the real writer's whole public
surface (issue 20, item 10): every attribute the real one has, every call it accepts (the option
fuzzer's valid calls), and return values of the same types. A DDP script that works on rank 0
must work unchanged on rank 1.
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest

import npsummary
from npsummary import EventSink, SummaryWriter, v1
from npsummary._core.ranks import RANK_VARIABLES
from paths import TESTS

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _options_suite() -> ModuleType:
    """The option fuzzer's module, for its valid call of every public method."""
    path = TESTS / "reliability" / "test_reliability_options.py"
    spec = importlib.util.spec_from_file_location("_options_for_silent", path)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return module


def _public(cls: type) -> list[str]:
    names = [n for n in dir(cls) if not n.startswith("_")]
    return [*names, "_get_file_writer"] if hasattr(cls, "_get_file_writer") else names


def _same_kind(real: Any, silent: Any) -> bool:
    if isinstance(real, EventSink):
        return isinstance(silent, EventSink)
    if inspect.ismethod(real) or inspect.isfunction(real):
        return callable(silent)
    return type(silent) is type(real)


def _returns(function: Any, kwargs: dict[str, Any]) -> Any:
    result = function(**kwargs)
    if hasattr(result, "__enter__"):  # a context manager: it must also be usable
        with result as entered:
            owner = getattr(function, "__self__", None)
            return type(result), "self" if entered is owner else type(entered)
    return type(result)


@pytest.mark.parametrize("cls_name", ["SummaryWriter", "FileWriter"])
def test_silent_writer_has_every_attribute_of_the_real_one(tmp_path: Path, cls_name: str) -> None:
    cls: Any = {"SummaryWriter": SummaryWriter, "FileWriter": v1.FileWriter}[cls_name]
    real = cls(str(tmp_path / "real"))
    silent = cls(str(tmp_path / "silent"), rank=1)
    assert type(silent) is not cls and isinstance(silent, cls)
    for name in _public(cls):
        real_value = getattr(real, name)
        silent_value = getattr(silent, name)
        assert _same_kind(real_value, silent_value), (name, real_value, silent_value)
    for name in ("get_logdir",):
        assert getattr(silent, name)() == str(tmp_path / "silent")
    real.close()
    silent.close()
    assert not (tmp_path / "silent").exists()


def test_every_valid_call_returns_the_same_type_on_a_silent_rank(tmp_path: Path) -> None:
    suite = _options_suite()
    ctx = suite.Ctx(tmp_path / "logs")
    real = {"writer": ctx.writer, "disk_writer": ctx.disk_writer, "filewriter": ctx.filewriter}
    silent = {
        "writer": SummaryWriter(str(tmp_path / "s1"), rank=1),
        "disk_writer": SummaryWriter(str(tmp_path / "s2"), rank=1),
        "filewriter": v1.FileWriter(str(tmp_path / "s3"), rank=1),
    }
    checked = []
    for name, call in sorted(suite.VALID_CALLS.items()):
        if not name.startswith(("SummaryWriter.", "FileWriter.")):
            continue
        for attr, obj in real.items():
            setattr(ctx, attr, obj)
        function, kwargs = call.make(ctx)
        expected = _returns(function, kwargs)
        for attr, obj in silent.items():
            setattr(ctx, attr, obj)
        function, kwargs = call.make(ctx)
        assert _returns(function, kwargs) == expected, name
        checked.append(name)
    # The calls without arguments, and the ones the fuzzer leaves to their own tests.
    for cls, key in ((SummaryWriter, "writer"), (v1.FileWriter, "filewriter")):
        for name in (
            "flush",
            "get_logdir",
            "set_step",
            "reopen",
            "use_metadata",
            "_get_file_writer",
        ):
            if not hasattr(cls, name):
                continue
            kwargs = {"set_step": {"step": 3}, "use_metadata": {"global_step": 4}}.get(name, {})
            expected = _returns(getattr(real[key], name), kwargs)
            assert _returns(getattr(silent[key], name), kwargs) == expected, name
            checked.append(f"{cls.__name__}.{name}")
    out = tmp_path / "scalars.json"
    writer = cast(SummaryWriter, silent["writer"])
    assert writer.export_scalars_to_json(out) is None  # type: ignore[func-returns-value]
    # Every public method was called on both (close below; ONNX/OpenVINO need files).
    methods = {
        f"{cls.__name__}.{n}"
        for cls in (SummaryWriter, v1.FileWriter)
        for n in _public(cls)
        if callable(getattr(cls, n)) and not isinstance(getattr(cls, n), property)
    }
    left = {"close", "export_scalars_to_json", "add_onnx_graph", "add_openvino_graph"}
    assert {m for m in methods - set(checked) if m.split(".")[1] not in left} == set()
    for obj in (*real.values(), *silent.values()):
        obj.close()
    assert not any((tmp_path / s).exists() for s in ("s1", "s2", "s3"))


def test_silent_file_writers_accept_what_the_real_ones_accept(tmp_path: Path) -> None:
    silent = SummaryWriter(str(tmp_path / "run"), rank=1)
    summary = v1.scalar("x", 1.0)
    main_writers = (silent.file_writer, silent._get_file_writer())
    all_writers = silent.all_writers
    assert all_writers is not None
    for file_writer in (*main_writers, *all_writers.values()):
        assert file_writer is not None
        assert file_writer.get_logdir() == str(tmp_path / "run")
        file_writer.add_summary(summary, 1)
        with file_writer.use_metadata(global_step=2):
            file_writer.add_summary(summary)
        file_writer.flush()
        file_writer.close()
    with silent.use_metadata(global_step=5, walltime=1.0) as inside:
        assert inside is silent
        silent.add_scalar("loss", 1.0)
    assert silent.logdir == silent.log_dir == str(tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_tf2_noop_writer_has_the_file_writer_surface(tmp_path: Path) -> None:
    real = npsummary.create_file_writer(str(tmp_path / "real"))
    silent = npsummary.create_file_writer(str(tmp_path / "silent"), rank=1)
    for name in _public(type(real)):
        assert _same_kind(getattr(real, name), getattr(silent, name)), name
    for writer in (real, silent):
        with writer.as_default(step=1) as inside:
            assert inside is writer
        writer.set_as_default(step=2)
        writer.init()
        writer.flush()
        writer.close()
    assert isinstance(silent.logdir, str)
    assert not (tmp_path / "silent").exists()


_DDP_SCRIPT = """
import sys
from npsummary import SummaryWriter, v1
writer = SummaryWriter(sys.argv[1])
print(type(writer.log_dir).__name__, type(writer.logdir).__name__)
with writer.use_metadata(global_step=3):
    writer.add_scalar("loss", 0.5)
writer.file_writer.add_summary(v1.scalar("lr", 0.1), 3)
writer._get_file_writer().flush()
for path, fw in writer.all_writers.items():
    fw.add_summary(v1.scalar("x", 1.0), 1)
writer.add_scalars("acc", {"a": 1.0}, 3)
bins = len(writer.default_bins) > 0
print(writer.max_queue + 1, writer.flush_secs * 2, writer.filename_suffix + "!", bins)
writer.close()
"""


@pytest.mark.parametrize("rank", ["0", "1"])
def test_one_ddp_script_runs_on_every_rank(tmp_path: Path, rank: str) -> None:
    logdir = tmp_path / "run"
    env = {k: v for k, v in __import__("os").environ.items() if k not in RANK_VARIABLES}
    env["RANK"] = rank
    done = subprocess.run(
        [sys.executable, "-c", _DDP_SCRIPT, str(logdir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["str str", "11 4.0 ! True"]
    assert logdir.exists() == (rank == "0")


def test_positional_rank_is_read_once_and_honoured(tmp_path: Path) -> None:
    # rank is SummaryWriter's tenth parameter: __new__ reads it by position too.
    args = (str(tmp_path / "run"), "", None, 10, 2.0, "", True, None, {"disabled": True}, 1)
    silent = SummaryWriter(*args)
    assert type(silent).__name__ == "SilentSummaryWriter"
    assert not (tmp_path / "run").exists()
    args = (*args[:-1], 0)
    with SummaryWriter(*args) as writer:
        writer.add_scalar("x", 1.0, 0)
    assert (tmp_path / "run").exists()


def test_rank_is_detected_once_per_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from npsummary._core import ranks

    calls = []
    real_detect = ranks.detect_rank

    def counting() -> int:
        calls.append(1)
        return real_detect()

    monkeypatch.setattr(ranks, "detect_rank", counting)
    SummaryWriter(str(tmp_path / "a")).close()
    v1.FileWriter(str(tmp_path / "b")).close()
    npsummary.create_file_writer(str(tmp_path / "c")).close()
    assert len(calls) == 3


@pytest.mark.parametrize("flavour", ["SummaryWriter", "TensorboardXSummaryWriter"])
def test_silent_histograms_of_spread_values_join_the_collective(
    flavour: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DTensor's or a process group's histogram is a collective call: a silent rank still
    runs it, with the tag rank 0 writes (tensorboardX's writer cleans it first), and a silent
    rank's histogram of plain values still does nothing."""
    import npsummary
    from npsummary._summaries import histogram as builders

    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        builders,
        "tensorboardx_histogram",
        lambda tag, values, bins, max_bins, group: seen.append((tag, group)),
    )
    monkeypatch.setattr(
        builders, "tf2_histogram_value", lambda tag, *args: seen.append((tag, args[-1]))
    )
    writer = getattr(npsummary, flavour)(str(tmp_path), rank=1)
    group = object()
    writer.add_histogram("a b", [1.0], 0)
    writer.add_histogram("a b", [1.0], 0, process_group=group)
    writer.add_distribution("d", [1.0], 0, process_group=group)
    cleaned = "a_b" if flavour == "TensorboardXSummaryWriter" else "a b"
    assert seen == [(cleaned, group), ("d", group)]
    assert not list(tmp_path.iterdir())
