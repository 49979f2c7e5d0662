"""The hypothesis profiles of conftest.py: CI draws the same examples on every run, even for tests
with their own ``@settings(...)``, and prints how to reproduce a failure; local runs explore.

Each case runs pytest in a subprocess on a small test file beside a copy of conftest.py, with the
environment of the profile under test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from conftest import hypothesis_profile
from paths import TESTS

PROBE = """
import os
from hypothesis import given, settings, strategies as st

@settings(max_examples=20, deadline=None)  # explicit settings: the rest comes from the profile
@given(st.binary(min_size=8, max_size=8))
def test_draws(data):
    with open(os.environ["DRAWS"], "a") as f:
        f.write(data.hex() + "\\n")

def test_fails_reproducibly():
    @settings(max_examples=50)
    @given(st.integers())
    def inner(n):
        assert n < 1000
    inner()
"""


def _run(tmp_path: Path, name: str, env: dict[str, str]) -> tuple[list[str], str]:
    root = tmp_path / name
    root.mkdir()
    shutil.copy(TESTS / "conftest.py", root / "conftest.py")
    (root / "test_probe.py").write_text(PROBE)
    draws = root / "draws.txt"
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CI", "HYPOTHESIS_PROFILE", "NPSUMMARY_HEAVY")
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "error", "."],
        cwd=root,
        env={**clean, **env, "DRAWS": str(draws)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout + proc.stderr
    return draws.read_text().split(), proc.stdout


def test_ci_profile_is_derandomized_and_prints_the_blob(tmp_path: Path) -> None:
    first, out = _run(tmp_path, "a", {"CI": "true"})
    again, _ = _run(tmp_path, "b", {"HYPOTHESIS_PROFILE": "ci"})
    assert "hypothesis profile 'ci': derandomize=True" in out
    assert first == again, "CI must draw the same examples on every run"
    assert "@reproduce_failure" in out, "CI prints the blob that replays the failure"
    assert "n=1000" in out, "and the (shrunk, deterministic) failing example"


def test_dev_and_heavy_profiles_explore(tmp_path: Path) -> None:
    dev, out = _run(tmp_path, "a", {})
    heavy, heavy_out = _run(tmp_path, "b", {"NPSUMMARY_HEAVY": "1", "CI": "true"})
    assert "hypothesis profile 'dev': derandomize=False" in out
    assert "hypothesis profile 'heavy': derandomize=False" in heavy_out
    # 20 random 8-byte draws each; two runs agreeing on all of them by chance does not happen.
    assert set(dev) != set(heavy)
    assert "@reproduce_failure" in out


def test_this_run_uses_the_profile_its_environment_selects() -> None:
    if any(arg.startswith("--hypothesis-profile") for arg in sys.argv):
        pytest.skip("profile chosen on the command line")
    assert getattr(settings, "_current_profile", None) == hypothesis_profile()
    # A test's own @settings(...) inherits the fields it does not set from the profile.
    explicit = settings(max_examples=3, deadline=None)
    assert explicit.derandomize == settings.default.derandomize
    assert explicit.print_blob is True
