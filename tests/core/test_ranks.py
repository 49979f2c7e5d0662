"""Rank detection and the rank -> sub-run rule (pure; the real multi-process runs are in
test_distributed.py)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from npsummary import SummaryWriter
from npsummary._core.ranks import RANK_VARIABLES, detect_rank, rank_run, silent_type

pytestmark = pytest.mark.distributed


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)
    yield


def test_no_launcher_is_rank_zero() -> None:
    assert detect_rank() == 0
    assert rank_run() == ""


@pytest.mark.parametrize("name", RANK_VARIABLES)
def test_each_launcher_variable_is_read(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, "3")
    assert detect_rank() == 3
    assert rank_run() is None
    assert rank_run(ranks="all") == "rank_3"


def test_variables_are_read_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLURM_PROCID", "5")  # srun launching torchrun: RANK is the global one
    monkeypatch.setenv("RANK", "2")
    assert detect_rank() == 2


def test_bad_variable_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "zero")
    with pytest.raises(ValueError, match=r"RANK='zero'.*rank="):
        detect_rank()
    assert rank_run(rank=0) == ""  # an explicit rank needs no detection
    monkeypatch.setenv("RANK", "-1")
    with pytest.raises(ValueError, match="RANK"):
        detect_rank()


def _fake_dist(initialized: bool, rank: int) -> Any:
    module = types.ModuleType("torch.distributed")
    module.is_available = lambda: True  # type: ignore[attr-defined]
    module.is_initialized = lambda: initialized  # type: ignore[attr-defined]
    module.get_rank = lambda: rank  # type: ignore[attr-defined]
    return module


def test_torch_distributed_wins_when_initialised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setitem(sys.modules, "torch.distributed", _fake_dist(True, 4))
    assert detect_rank() == 4
    monkeypatch.setitem(sys.modules, "torch.distributed", _fake_dist(False, 4))
    assert detect_rank() == 1


def _fake_jax(monkeypatch: pytest.MonkeyPatch, *, started: bool, client: bool) -> list[str]:
    """A ``jax`` whose process_index() records that it was called (it would start backends)."""
    calls: list[str] = []
    jax = types.ModuleType("jax")

    def process_index() -> int:
        calls.append("process_index")
        return 6

    jax.process_index = process_index  # type: ignore[attr-defined]
    bridge = types.ModuleType("jax._src.xla_bridge")
    bridge.backends_are_initialized = lambda: started  # type: ignore[attr-defined]
    distributed = types.ModuleType("jax._src.distributed")
    state = types.SimpleNamespace(client=object() if client else None, process_id=5)
    distributed.global_state = state  # type: ignore[attr-defined]
    for module in (jax, bridge, distributed):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return calls


def test_jax_is_asked_only_when_it_has_started(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_jax(monkeypatch, started=True, client=False)
    assert detect_rank() == 6
    monkeypatch.setenv("JAX_PROCESS_INDEX", "2")
    assert detect_rank() == 2
    assert calls == ["process_index"]


def test_an_idle_jax_is_never_started(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """process_index() starts JAX's backends (GPU memory claimed, jax.distributed.initialize()
    refused afterwards): a writer created beside an imported but idle JAX must not call it."""
    calls = _fake_jax(monkeypatch, started=False, client=False)
    assert detect_rank() == 0
    SummaryWriter(str(tmp_path)).close()
    assert calls == []


def test_jax_distributed_gives_its_process_id(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake_jax(monkeypatch, started=False, client=True)
    assert detect_rank() == 5
    assert calls == []


def test_explicit_ranks() -> None:
    assert rank_run(rank=0, ranks=[0, 3]) == "rank_0"
    assert rank_run(rank=3, ranks=(0, 3)) == "rank_3"
    assert rank_run(rank=1, ranks=[0, 3]) is None
    assert rank_run(rank=1, ranks="all") == "rank_1"
    assert rank_run(rank=2) is None


@pytest.mark.parametrize(
    ("rank", "ranks", "error", "match"),
    [
        ("1", None, TypeError, "rank must be an int"),
        (True, None, TypeError, "rank must be an int"),
        (-1, None, ValueError, "rank must be >= 0"),
        (0, "some", TypeError, "ranks must be None, 'all'"),
        (0, 3, TypeError, "ranks must be None, 'all'"),
        (0, [], ValueError, "at least one rank"),
        (0, [0, "1"], TypeError, r"ranks\[1\] must be an int"),
        (0, [0, -2], ValueError, r"ranks\[1\] must be >= 0"),
    ],
)
def test_bad_arguments(rank: Any, ranks: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        rank_run(rank=rank, ranks=ranks)


def test_numpy_ints_are_ranks() -> None:
    np = pytest.importorskip("numpy")
    assert rank_run(rank=np.int64(2), ranks=[np.int32(2)]) == "rank_2"


class _Loud:
    _name: str  # set by the silent subclass's __init__ override

    def __init__(self) -> None:
        raise AssertionError("the real constructor must not run")

    def add(self, value: int) -> int:
        raise AssertionError("a silent method must not run")

    def name(self) -> str:
        return self._name

    @property
    def kind(self) -> str:
        raise AssertionError("a silent property must not run")


def test_silent_type_keeps_only_its_overrides() -> None:
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        self._name = kwargs.get("name", "")

    silent = silent_type(_Loud, {"__init__": init, "name": _Loud.name})
    obj = silent(1, 2, name="x")  # type: ignore[call-arg]
    assert isinstance(obj, _Loud)
    assert obj.add(1) is None
    assert obj.add("anything", at=all) is None  # type: ignore[call-arg, arg-type]
    assert obj.name() == "x"
    assert obj.kind is None
