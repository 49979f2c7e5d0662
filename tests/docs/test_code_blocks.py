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
* ``<!-- docs-test: install — reason -->``: a shell block that installs packages, to run from
  the root of a clone: .ci/stages/80-wheel-docs.sh runs each with bash, as written, in a fresh
  venv in a fresh copy of the clone (network to PyPI);
* ``<!-- docs-test: ci-run — reason -->``: the README's test command, which .ci/run runs as
  written as its main job;
* ``<!-- docs-test: skip — reason -->``: not run (it starts a server, or is code of another
  library or of the project's tooling); the reason names the test or CI stage that covers it.

The blocks and their markers are read by ``docblocks`` (tests/support/), which CI also runs as a
script to take out the ``install`` and ``ci-run`` blocks.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docblocks import PAGES, Block, blocks, marked
from paths import ROOT

START_IN_CLONE = "<!-- docs-test: start=clone -->"
S3_BUCKET = "my-bucket"
PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console"}


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


def test_every_marked_block_says_what_covers_it() -> None:
    """Each marker's reason names the test or CI stage covering its block, and what it names is
    there (a renamed test leaves no reason pointing nowhere)."""
    assert marked("skip") and marked("install") and marked("ci-run"), "the markers are used"
    for block in (b for p in PAGES if p.exists() for b in blocks(p) if b.marker):
        reason = block.reason or ""
        assert re.search(r"tests/|\.ci/|RESULTS\.md|RELIABILITY\.md", reason), (
            f"{block.id}: the marker's reason names no test or CI stage"
        )
        for named in re.findall(r"(?<![\w.])(?:tests|\.ci)/[\w./*-]*[\w*]", reason):
            assert list(ROOT.glob(named)), f"{block.id}: the marker names {named}, not there"


@pytest.mark.remote
@pytest.mark.parametrize("block", marked("s3"), ids=lambda b: b.id)
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
        exec(compile(block.code, block.id, "exec"), {"__name__": "docs_s3"})


@pytest.mark.distributed
@pytest.mark.parametrize("block", marked("torchrun"), ids=lambda b: b.id)
def test_torchrun_block_runs_under_torchrun(block: Block, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torchrun blocks need torch (pip install torch==2.13.0)")
    match = re.search(
        r"^# (?P<script>\S+\.py)\b.*run with: torchrun (?P<args>.+)$", block.code, re.M
    )
    assert match, f"{block.id}: the first line says '# NAME.py — run with: torchrun ...'"
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
@pytest.mark.parametrize("block", marked("needs"), ids=lambda b: b.id)
def test_program_runs_where_its_frameworks_are(block: Block, tmp_path: Path) -> None:
    for module in block.needs:
        pytest.importorskip(module, reason=f"{block.id} needs {module} (CI stage 70)")
    script = tmp_path / "program.py"
    script.write_text(block.code, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, script.name], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{block.id}\n{result.stderr[-4000:]}"


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
