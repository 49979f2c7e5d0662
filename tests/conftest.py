"""Shared fixtures: read what npsummary wrote back with TensorBoard's own code."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

EVENT_FILE_INFIX = "tfevents"

# -- hypothesis profiles --------------------------------------------------------------------------
# The README's test command must give the same result on every machine and every run, so the
# default profile is derandomized whether or not CI is set: "default" (also reachable as "ci")
# draws the same examples every time, keeps no example database (derandomize makes it useless,
# and a stored failure would replay on every later run of a user's checkout), prints the failing
# example's reproduction blob, and depends on no timing (no deadline, no too_slow health check:
# the machine is shared and noisy). Exploration is opt-in:
#   HYPOTHESIS_PROFILE=explore python -m pytest -m fuzz
# draws new random examples on each run, EXPLORE_FACTOR times as many (tests that set their own
# max_examples scale it with examples()), with the database on so that a failure found replays
# until it is fixed. "heavy" (NPSUMMARY_HEAVY=1) is explore for the long reliability variants.
# Loaded here, before any test module is imported, because a test's @settings(...) takes every
# field it does not set (derandomize, print_blob, database) from the profile loaded when it is
# created; pytest's --hypothesis-profile still wins (the plugin loads it later). Each profile
# derives from hypothesis's own "default", not from whatever hypothesis loaded on import
# (hypothesis loads its own derandomized "ci" whenever CI is in the environment).
EXPLORE_FACTOR = 10
_BASE = settings.get_profile("default")
_REPRODUCIBLE = settings(
    _BASE,
    derandomize=True,
    database=None,
    print_blob=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("reproducible", _REPRODUCIBLE)
settings.register_profile("ci", _REPRODUCIBLE)
settings.register_profile(
    "explore",
    _BASE,
    print_blob=True,
    deadline=None,
    max_examples=_BASE.max_examples * EXPLORE_FACTOR,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "heavy",
    _BASE,
    print_blob=True,
    deadline=None,
    max_examples=1000,
    suppress_health_check=[HealthCheck.too_slow],
)


def _is_set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def hypothesis_profile() -> str:
    """The profile this run uses: HYPOTHESIS_PROFILE if set, else "heavy" under
    NPSUMMARY_HEAVY=1, else the derandomized "reproducible" profile (CI or not)."""
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return os.environ["HYPOTHESIS_PROFILE"]
    if _is_set("NPSUMMARY_HEAVY"):
        return "heavy"
    return "reproducible"


settings.load_profile(hypothesis_profile())


def exploring() -> bool:
    """True when the loaded profile draws random examples (explore, heavy)."""
    current = settings.default
    assert current is not None  # a profile is loaded above
    return not current.derandomize


def examples(n: int) -> int:
    """``max_examples`` for a test that sets its own: ``n`` in the reproducible profile, ``n``
    times EXPLORE_FACTOR when exploring, so that ``-m fuzz`` under explore really explores."""
    return n * EXPLORE_FACTOR if exploring() else n


def pytest_report_header() -> str:
    current = settings.default
    assert current is not None
    return (
        f"hypothesis profile {getattr(settings, '_current_profile', '?')!r}: "
        f"derandomize={current.derandomize}, print_blob={current.print_blob}, "
        f"database={'none' if current.database is None else 'on'}"
    )


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport() -> Iterator[None]:
    # When a hypothesis test fails, hypothesis imports libcst to suggest a patch, and libcst
    # triggers a DeprecationWarning in mypy_extensions that filterwarnings=error turns into an
    # INTERNALERROR hiding the real failure.
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="mypy_extensions.TypedDict is deprecated", category=DeprecationWarning
        )
        yield


class ScalarPoint(NamedTuple):
    step: int
    value: float
    wall_time: float


def event_files(directory: str | os.PathLike[str]) -> list[Path]:
    """Event files directly inside ``directory``, in the order TensorBoard reads them."""
    root = Path(directory)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_file() and EVENT_FILE_INFIX in p.name)


def only_event_file(directory: str | os.PathLike[str]) -> Path:
    files = event_files(directory)
    assert len(files) == 1, f"expected one event file in {directory}, found {files}"
    return files[0]


def raw_records(path: str | os.PathLike[str]) -> list[bytes]:
    """Serialized events of one file, read by TensorBoard's record reader (CRCs checked)."""
    event_file_loader = pytest.importorskip(
        "tensorboard.backend.event_processing.event_file_loader"
    )
    return list(event_file_loader.RawEventFileLoader(os.fspath(path)).Load())


def read_events(path: str | os.PathLike[str]) -> list[Any]:
    """``tensorboard.compat.proto.event_pb2.Event`` messages of one file, unmigrated."""
    event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
    return [event_pb2.Event.FromString(r) for r in raw_records(path)]


def read_run(logdir: str | os.PathLike[str]) -> Any:
    """A reloaded TensorBoard ``EventAccumulator`` (the plugin one TensorBoard serves from)
    over the run directory ``logdir``, keeping every tensor event."""
    pea = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
    acc = pea.EventAccumulator(os.fspath(logdir), size_guidance=pea.STORE_EVERYTHING_SIZE_GUIDANCE)
    acc.Reload()
    return acc


def read_scalars(logdir: str | os.PathLike[str]) -> dict[str, list[ScalarPoint]]:
    """Scalar series of the run ``logdir`` as TensorBoard's scalars plugin sees them."""
    tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
    acc = read_run(logdir)
    out: dict[str, list[ScalarPoint]] = {}
    for tag in acc.Tags()["tensors"]:
        md = acc.SummaryMetadata(tag)
        if md.plugin_data.plugin_name != "scalars":
            continue
        out[tag] = [
            ScalarPoint(e.step, float(tensor_util.make_ndarray(e.tensor_proto).item()), e.wall_time)
            for e in acc.Tensors(tag)
        ]
    return out


def scalar_values(series: list[ScalarPoint]) -> list[tuple[int, float]]:
    return [(p.step, p.value) for p in series]


def f32(x: float) -> float:
    """``x`` rounded to float32, as stored."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; return whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    """A run directory that does not exist yet (writers must create it)."""
    return tmp_path / "run"


@pytest.fixture(autouse=True)
def _reset_tf2_state() -> Iterator[None]:
    """Tests must not leak a default ``tf.summary`` writer or step into each other."""
    yield
    from npsummary._frontends import context as _context

    _context.reset()


# -- the figures report (RELIABILITY.md "Last run", scripts/reliability_figures.py) ---------------
_SESSION_START = time.monotonic()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """With NPSUMMARY_RELIABILITY_REPORT set, append this run's totals to the figures report, so
    that the suite's counts quoted in RELIABILITY.md come from the run itself."""
    import json

    path = os.environ.get("NPSUMMARY_RELIABILITY_REPORT")
    if not path:
        return
    counts = {
        kind: len(terminalreporter.stats.get(kind, []))
        for kind in ("passed", "failed", "skipped", "error", "xfailed", "xpassed")
    }
    line = {
        "test": "session",
        "heavy": _is_set("NPSUMMARY_HEAVY"),
        "hypothesis_profile": hypothesis_profile(),
        "args": [str(a) for a in terminalreporter.config.invocation_params.args],
        "seconds": round(time.monotonic() - _SESSION_START),
        "failed_tests": [r.nodeid for r in terminalreporter.stats.get("failed", [])],
        **counts,
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line, sort_keys=True) + "\n")
