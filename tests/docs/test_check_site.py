"""scripts/check_site.py, the crawl of the built site (CI stage 80 runs it on the real one),
finds each kind of problem it promises on a small site made here, and none on a clean one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _crawler() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "scripts" / "check_site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_site"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _entry(id_: str, signature: str, description: str) -> str:
    return (
        f'<dl class="py class"><dt class="sig sig-object py" id="{id_}">'
        f"<em>class</em> <span>{signature}</span></dt><dd><p>{description}</p></dd></dl>"
    )


CLEAN = (
    '<html><body><h1 id="top">Top</h1><a href="#top">up</a> <a href="other.html#there">o</a>'
    '<a href="https://example.com/x.md">ext</a><pre>[code](stays.md)</pre>'
    + _entry("npsummary.FileSink", "FileSink(directory: str)", "A sink.")
    + "</body></html>"
)


def _site(tmp_path: Path, page: str) -> Path:
    (tmp_path / "index.html").write_text(page, encoding="utf-8")
    (tmp_path / "other.html").write_text('<p id="there">x</p>', encoding="utf-8")
    return tmp_path


def test_a_clean_site_has_no_problem(tmp_path: Path) -> None:
    problems, counts = _crawler().check(_site(tmp_path, CLEAN), {"EventWriter"})
    assert problems == [] and counts == {"pages": 2, "links": 2, "entries": 1}


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<a href="missing.html">x</a>', "broken link 'missing.html'"),
        ('<a href="other.html#nowhere">x</a>', "no anchor on that page"),
        ('<img src="_images/gone.png">', "broken link '_images/gone.png'"),
        (
            _entry("npsummary.MemorySink", "MemorySink()", ""),
            "empty API entry npsummary.MemorySink",
        ),
        (
            _entry("npsummary.SummaryWriter", "SummaryWriter(*args: Any, **kwargs: Any)", "W."),
            "shows (*args, **kwargs); its signature is (logdir",
        ),
        (
            _entry("npsummary.SummaryFileWriter", "SummaryFileWriter(writer: EventWriter)", "W."),
            "private type EventWriter in the signature of npsummary.SummaryFileWriter",
        ),
        (
            _entry("npsummary.x", "x(a: ~npsummary.reader._series.Series = <factory>)", "X."),
            "shown unparsed",
        ),
        ("<p>see the [guide](../integrations.md)</p>", "a Markdown link printed as text"),
    ],
)
def test_each_problem_is_found(tmp_path: Path, html: str, expected: str) -> None:
    problems, _ = _crawler().check(
        _site(tmp_path, f"<html><body>{html}</body></html>"), {"EventWriter"}
    )
    assert any(expected in p for p in problems), problems


def test_private_types_are_those_no_public_module_exports() -> None:
    private = _crawler().private_type_names()
    assert "EventWriter" in private  # npsummary._core.event_writer, exported by nothing
    assert not {"SummaryWriter", "FileSink", "ScalarSeries", "RunFileWriter"} & private
