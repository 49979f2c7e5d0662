"""The hypothesis profiles of conftest.py: the README's test command draws the same examples on
every run, with or without CI set, even for tests with their own ``@settings(...)``, and prints
how to reproduce a failure; exploring is opt-in (HYPOTHESIS_PROFILE=explore, -m fuzz).

Each case runs pytest in a subprocess on a small test file beside a copy of conftest.py, with the
environment of the profile under test.
"""

from __future__ import annotations

import ast
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


def test_default_profile_is_derandomized_with_or_without_ci(tmp_path: Path) -> None:
    # The README's test command, as a newcomer runs it: no variable set. It must draw the same
    # examples as CI, on every run, and keep no database that could replay an old failure.
    plain, out = _run(tmp_path, "a", {})
    again, _ = _run(tmp_path, "b", {})
    under_ci, ci_out = _run(tmp_path, "c", {"CI": "true"})
    assert "hypothesis profile 'reproducible': derandomize=True" in out
    assert "database=none" in out
    assert "hypothesis profile 'reproducible': derandomize=True" in ci_out
    assert plain == again == under_ci, "the default run must draw the same examples every time"
    assert "@reproduce_failure" in out, "a failure prints the blob that replays it"
    assert "n=1000" in out, "and the (shrunk, deterministic) failing example"
    assert not (tmp_path / "a" / ".hypothesis" / "examples").exists(), "no example database"


def test_explore_and_heavy_profiles_draw_new_examples(tmp_path: Path) -> None:
    explore, out = _run(tmp_path, "a", {"HYPOTHESIS_PROFILE": "explore"})
    heavy, heavy_out = _run(tmp_path, "b", {"NPSUMMARY_HEAVY": "1", "CI": "true"})
    assert "hypothesis profile 'explore': derandomize=False" in out
    assert "hypothesis profile 'heavy': derandomize=False" in heavy_out
    # 20 random 8-byte draws each; two runs agreeing on all of them by chance does not happen.
    assert set(explore) != set(heavy)
    assert "@reproduce_failure" in out


def test_the_default_profile_is_derandomized(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HYPOTHESIS_PROFILE", "NPSUMMARY_HEAVY", "CI"):
        monkeypatch.delenv(name, raising=False)
    default = settings.get_profile(hypothesis_profile())
    assert default.derandomize is True
    assert default.database is None
    monkeypatch.setenv("CI", "true")
    assert settings.get_profile(hypothesis_profile()) == default
    explore = settings.get_profile("explore")
    assert explore.derandomize is False
    assert explore.max_examples >= 10 * default.max_examples


def test_every_property_test_is_marked_fuzz() -> None:
    # `HYPOTHESIS_PROFILE=explore python -m pytest -m fuzz` must reach every hypothesis test.
    root = TESTS
    missing = [
        f"{path.relative_to(root)}::{name}"
        for path in sorted(root.rglob("*.py"))
        for name in property_tests_without_fuzz_mark(path)
    ]
    assert not missing, f"hypothesis tests without @pytest.mark.fuzz: {missing}"


def test_this_run_uses_the_profile_its_environment_selects() -> None:
    if any(arg.startswith("--hypothesis-profile") for arg in sys.argv):
        pytest.skip("profile chosen on the command line")
    assert getattr(settings, "_current_profile", None) == hypothesis_profile()
    # A test's own @settings(...) inherits the fields it does not set from the profile.
    explicit = settings(max_examples=3, deadline=None)
    assert settings.default is not None
    assert explicit.derandomize == settings.default.derandomize
    assert explicit.print_blob is True


# -- the fuzz marker ------------------------------------------------------------------------------


def _is_decorator(node: ast.expr, attribute: str) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id == attribute
    return isinstance(target, ast.Attribute) and target.attr == attribute


def _uses_given(function: ast.AST) -> bool:
    """The test is a hypothesis test, or runs one it defines inside."""
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(_is_decorator(d, "given") for d in node.decorator_list)
        for node in ast.walk(function)
    )


def property_tests_without_fuzz_mark(path: Path) -> list[str]:
    """Names of the hypothesis tests in ``path`` that carry no ``fuzz`` mark (their own, their
    class's or the module's ``pytestmark``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module_marked = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
        and "mark.fuzz" in ast.unparse(node.value)
        for node in tree.body
    )
    found: list[str] = []

    def visit(body: list[ast.stmt], marked: bool) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                visit(
                    node.body, marked or any(_is_decorator(d, "fuzz") for d in node.decorator_list)
                )
            elif (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name.startswith("test")
                and _uses_given(node)
                and not marked
                and not any(_is_decorator(d, "fuzz") for d in node.decorator_list)
            ):
                found.append(node.name)

    visit(tree.body, module_marked)
    return found


def test_the_marker_check_finds_an_unmarked_property_test(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        "import pytest\nfrom hypothesis import given, strategies as st\n"
        "@given(st.integers())\ndef test_plain(n): pass\n"
        "@pytest.mark.fuzz\n@given(st.integers())\ndef test_marked(n): pass\n"
        "def test_nested():\n    @given(st.integers())\n    def run(n): pass\n    run()\n"
        "def test_not_a_property(): pass\n"
    )
    assert property_tests_without_fuzz_mark(probe) == ["test_plain", "test_nested"]
