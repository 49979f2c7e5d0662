"""Every code block of the README, the user guide and MIGRATION.md runs, as written.

The blocks of one page run in document order as one session (Python blocks share one namespace;
shell blocks run their ``npsummary`` and ``python examples/...`` commands), in an empty
directory holding a link to the repository's ``examples/``, as docs/guide/index.md tells the
reader. A block that cannot run here (it installs packages, needs an S3 bucket, torchrun or a
TensorBoard server) is preceded by ``<!-- docs-test: skip — reason -->``, and the reason must
name the test or CI stage that covers it instead.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "docs" / "MIGRATION.md",
        ROOT / "docs" / "integrations.md",
        *(ROOT / "docs" / "guide").glob("*.md"),
    ]
)
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*[—-]+\s*(?P<reason>.+?)\s*-->")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console"}


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    skip: str | None  # the reason, when the block is marked not to run


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, with the skip marker before each, if any."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence = match["indent"], match["fence"]
        language = match["info"].strip().split(" ")[0].lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        previous = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.search(previous)
        found.append(
            Block(page, start + 1, language, "\n".join(body) + "\n", marker and marker["reason"])
        )
        i += 1
    return found


def _commands(code: str) -> list[list[str]]:
    """The shell block's commands: continuation lines joined, comments dropped."""
    joined = code.replace("\\\n", " ")
    return [words for line in joined.splitlines() if (words := shlex.split(line, comments=True))]


def _run_shell(block: Block, cwd: Path) -> None:
    for words in _commands(block.code):
        if words[0] == "npsummary":
            argv = [sys.executable, "-m", "npsummary", *words[1:]]
        elif words[0] in ("python", "python3") and words[1].startswith("examples/"):
            argv = [sys.executable, *words[1:]]
        else:
            pytest.fail(
                f"{block.page.name}:{block.line}: the docs test cannot run {words[0]!r}; "
                "write the block so that it runs, or mark it <!-- docs-test: skip — reason -->"
            )
        env = {**os.environ, "COLUMNS": "100"}
        result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
        assert result.returncode == 0, (
            f"{block.page.name}:{block.line}: {shlex.join(words)} exited {result.returncode}\n"
            f"{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        )


def _runnable(block: Block) -> bool:
    return not block.skip and block.language in PYTHON | SHELL and bool(block.code.strip())


def _code_pages() -> list[Path]:
    return [p for p in PAGES if p.exists() and any(_runnable(b) for b in blocks(p))]


@pytest.mark.parametrize("page", _code_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    ran = 0
    for block in blocks(page):
        if not _runnable(block):
            continue
        if block.language in PYTHON:
            code = compile(block.code, f"{page.relative_to(ROOT)}:{block.line}", "exec")
            exec(code, namespace)
            ran += 1
        elif block.language in SHELL:
            _run_shell(block, tmp_path)
            ran += 1
    assert ran, f"{page.name}: no block ran"


def test_every_skipped_block_says_what_covers_it() -> None:
    skipped = [b for p in PAGES if p.exists() for b in blocks(p) if b.skip]
    assert skipped, "the marker is used (README's set-up commands)"
    for block in skipped:
        assert re.search(r"tests/|\.ci/|RESULTS\.md|RELIABILITY\.md", block.skip or ""), (
            f"{block.page.name}:{block.line}: the skip reason names no test or CI stage"
        )


def test_every_code_block_has_a_language() -> None:
    """A fence without a language (or an unknown one) would silently escape this test."""
    known = PYTHON | SHELL | {"text", "{toctree}", "{npsummary-cli}", "{include}"}
    for page in PAGES:
        if not page.exists():
            continue
        for block in blocks(page):
            assert block.language in known, f"{page.name}:{block.line}: fence {block.language!r}"
