"""Every install line a user is shown works today (issue 33 item 1): npsummary is not on PyPI,
so no message, docstring or page may say ``pip install npsummary`` or ``'npsummary[extra]'``,
except docs/install.md, which says so and gives them "After the first release"; the ImportErrors
name the package itself (``pip install pyarrow``), which always works."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from docblocks import blocks, marked

ROOT = Path(__file__).resolve().parents[2]
FROM_PYPI = re.compile(r"pip install (?:-\S+ )*['\"]?npsummary\b(?![.-])|npsummary\[\w+\]")
AFTER_RELEASE = "## After the first release"


def _texts() -> list[tuple[Path, str]]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "RELIABILITY.md"]
    files += sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.rst"))
    files += sorted((ROOT / "src" / "npsummary").rglob("*.py"))
    found = []
    for path in files:
        if "_build" in path.parts:
            continue
        if path != ROOT / "docs" / "install.md":  # checked on its own, below
            found.append((path, path.read_text(encoding="utf-8")))
    return found


def test_no_install_line_assumes_a_release() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {match[0]!r}"
        for path, text in _texts()
        for match in FROM_PYPI.finditer(text)
    ]
    assert not wrong, "npsummary is not on PyPI yet (docs/install.md): " + "; ".join(wrong)


def test_the_install_page_says_what_works_now_and_after() -> None:
    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    now, _, after = text.partition(AFTER_RELEASE)
    assert "not on PyPI yet" in now and "pip install dist/npsummary-" in now
    assert "pip install '.[viewer]'" in now and not FROM_PYPI.search(now.partition("\n## ")[2])
    assert "pip install npsummary\n" in after


@pytest.mark.parametrize("package", ["pandas", "pyarrow"])
def test_a_missing_table_package_is_named_with_its_own_install_line(
    package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npsummary.reader import _tables

    monkeypatch.setitem(sys.modules, package, None)  # import fails, as where it is absent
    with pytest.raises(ImportError, match=rf"needs {package}: pip install {package}$"):
        _tables._require(package)


def test_a_url_logdir_without_fsspec_names_fsspec(monkeypatch: pytest.MonkeyPatch) -> None:
    from npsummary._sinks import location

    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(ImportError, match=r"pip install fsspec$"):
        location.resolve_url("memory://bucket/run")


def test_s3_without_s3fs_or_boto3_names_both(monkeypatch: pytest.MonkeyPatch) -> None:
    from npsummary._sinks import location

    monkeypatch.setitem(sys.modules, "s3fs", None)
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(ImportError, match=r"\(pip install s3fs\) or boto3 \(pip install boto3\)"):
        location.through_boto3("s3://bucket/run")


def test_the_wheel_named_on_the_install_page_is_this_version() -> None:
    import npsummary

    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    named = set(re.findall(r"npsummary-([\w.]+)-py3-none-any\.whl", text))
    assert named == {npsummary.__version__}, f"docs/install.md names {named}"


def test_only_the_lines_that_work_today_are_run() -> None:
    """CI runs the install blocks as written (docs-test: install and ci-run); the lines for after
    the first release must not be among them, and must be marked as not run."""
    run = marked("install") + marked("ci-run")
    assert not [b.id for b in run if FROM_PYPI.search(b.code)]
    page = ROOT / "docs" / "install.md"
    after = page.read_text(encoding="utf-8").partition(AFTER_RELEASE)[0].count("\n") + 1
    future = [b for b in blocks(page) if b.line > after]
    assert future and all(b.marker == "skip" and FROM_PYPI.search(b.code) for b in future)
