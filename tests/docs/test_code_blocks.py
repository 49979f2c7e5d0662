"""Every code block of the README and of every page under docs/ runs, as written.

The blocks of one page run in document order as one session (Python blocks share one namespace;
shell blocks run their ``npsummary`` and ``python examples/...`` commands), where the page says
to start, as docs/guide/index.md tells the reader: an empty directory, or, on a page that says
``<!-- docs-test: start=clone -->`` (and tells its reader to start from the root of a clone),
a directory holding what the clone's root gives its commands (a copy of ``examples/``).
A block is preceded by a marker when it needs more than this directory:

* ``<!-- docs-test: s3 — reason -->``: runs on its own against a local S3 server (moto) holding
  the bucket ``my-bucket``, where moto and s3fs (or moto and boto3, then through boto3 alone)
  are installed (.ci/stages/50-remote.sh);
* ``<!-- docs-test: torchrun — reason -->``: a script whose first line says
  ``run with: torchrun ...``; saved under that name and run so, where torch is installed;
* ``<!-- docs-test: needs keras, jax — reason -->``: a complete program that needs the
  frameworks named: run on its own in a fresh interpreter, in an empty directory, where they are
  installed (marker ``tf_free``: .ci/stages/70-integrations.sh, a venv without TensorFlow);
* ``<!-- docs-test: skip — reason -->``: not run (it installs packages or starts a server); the
  reason names the test or CI stage that covers it instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
)
MARKER = re.compile(
    r"<!--\s*docs-test:\s*(?P<kind>skip|s3|torchrun|needs(?P<needs>(?:\s+[\w.]+,?)+))\s*[—-]+"
    r"\s*(?P<reason>.+?)\s*-->"
)
START_IN_CLONE = "<!-- docs-test: start=clone -->"
S3_BUCKET = "my-bucket"
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console"}


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    marker: str | None  # skip, s3, torchrun or needs: the block does not run in its session
    reason: str | None
    needs: tuple[str, ...] = ()  # the modules a "needs" block imports


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
        marker = MARKER.search(previous)
        code = "\n".join(body) + "\n"
        kind, reason = (marker["kind"], marker["reason"]) if marker else (None, None)
        needs = tuple(re.findall(r"[\w.]+", marker["needs"] or "")) if marker else ()
        if needs:
            kind = "needs"
        found.append(Block(page, start + 1, language, code, kind, reason, needs))
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
    return not block.marker and block.language in PYTHON | SHELL and bool(block.code.strip())


def _code_pages() -> list[Path]:
    return [p for p in PAGES if p.exists() and any(_runnable(b) for b in blocks(p))]


@pytest.mark.parametrize("page", _code_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_page_runs_as_written(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if START_IN_CLONE in page.read_text(encoding="utf-8"):
        shutil.copytree(ROOT / "examples", tmp_path / "examples")
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


def _marked(kind: str) -> list[Block]:
    return [b for p in PAGES if p.exists() for b in blocks(p) if b.marker == kind]


def test_every_marked_block_says_what_covers_it() -> None:
    marked = [b for p in PAGES if p.exists() for b in blocks(p) if b.marker]
    assert _marked("skip"), "the marker is used (README's set-up commands)"
    for block in marked:
        assert re.search(r"tests/|\.ci/|RESULTS\.md|RELIABILITY\.md", block.reason or ""), (
            f"{block.page.name}:{block.line}: the marker's reason names no test or CI stage"
        )


def _block_id(block: Block) -> str:
    return f"{block.page.relative_to(ROOT)}:{block.line}"


@pytest.mark.remote
@pytest.mark.parametrize("block", _marked("s3"), ids=_block_id)
def test_s3_block_runs_against_a_local_server(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from s3server import boto3_stack, s3_stack

    # Through s3fs where it is installed, else through boto3 alone (S3_ENDPOINT).
    stack = s3_stack if importlib.util.find_spec("s3fs") is not None else boto3_stack
    with stack() as (server, _):
        import boto3

        boto3.client("s3", endpoint_url=server.endpoint).create_bucket(Bucket=S3_BUCKET)
        monkeypatch.chdir(tmp_path)
        exec(compile(block.code, _block_id(block), "exec"), {"__name__": "docs_s3"})


@pytest.mark.distributed
@pytest.mark.parametrize("block", _marked("torchrun"), ids=_block_id)
def test_torchrun_block_runs_under_torchrun(block: Block, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torchrun blocks need torch (pip install torch==2.13.0)")
    match = re.search(
        r"^# (?P<script>\S+\.py)\b.*run with: torchrun (?P<args>.+)$", block.code, re.M
    )
    assert match, f"{_block_id(block)}: the first line says '# NAME.py — run with: torchrun ...'"
    (tmp_path / match["script"]).write_text(block.code, encoding="utf-8")
    argv = [sys.executable, "-m", "torch.distributed.run", *shlex.split(match["args"])]
    launcher = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    env = {k: v for k, v in os.environ.items() if k not in launcher}
    env["OMP_NUM_THREADS"] = "1"
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]


def test_every_code_block_has_a_language() -> None:
    """A fence without a language (or an unknown one) would silently escape this test."""
    known = PYTHON | SHELL | {"text", "{toctree}", "{npsummary-cli}", "{include}"}
    for page in PAGES:
        if not page.exists():
            continue
        for block in blocks(page):
            assert block.language in known, f"{page.name}:{block.line}: fence {block.language!r}"


@pytest.mark.tf_free
@pytest.mark.parametrize("block", _marked("needs"), ids=_block_id)
def test_program_runs_where_its_frameworks_are(block: Block, tmp_path: Path) -> None:
    for module in block.needs:
        pytest.importorskip(module, reason=f"{_block_id(block)} needs {module} (CI stage 70)")
    script = tmp_path / "program.py"
    script.write_text(block.code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{_block_id(block)}\n{result.stderr[-4000:]}"


def test_a_page_starts_where_it_says() -> None:
    """A page whose commands need the clone says so to its reader and to this test."""
    for page in _code_pages():
        text = page.read_text(encoding="utf-8")
        uses_clone = any(
            "examples/" in b.code for b in blocks(page) if _runnable(b) and b.language in SHELL
        )
        assert uses_clone == (START_IN_CLONE in text), page.name
        if uses_clone:
            assert "root of a clone" in text, f"{page.name}: tell the reader where to start"
