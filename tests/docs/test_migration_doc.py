"""docs/MIGRATION.md covers the whole public API, and its SummaryWriter table tells the truth."""

from __future__ import annotations

import re
from typing import Any

import pytest

import npsummary
from npsummary import SummaryWriter, experimental, v1
from paths import ROOT

DOC = ROOT / "docs" / "MIGRATION.md"

# Public names that are infrastructure rather than part of a migrated API.
NOT_MIGRATED = {"__version__", "EventSink", "EventWriteError", "FileSink", "MemorySink", "v1"}


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _summary_writer_rows() -> dict[str, str]:
    """``method name -> status cell`` of the SummaryWriter table (section 3)."""
    section = _doc().split("## 3.", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`(\w+)\(", cells[0]) + re.findall(r"`(\w+)`", cells[0]):
            rows[name] = cells[-1]
    return rows


@pytest.mark.parametrize(
    ("module", "prefix"),
    [(npsummary, "npsummary."), (experimental, "npsummary.experimental."), (v1, "npsummary.v1.")],
)
def test_every_public_function_is_in_the_guide(module: Any, prefix: str) -> None:
    doc = _doc()
    names = [n for n in module.__all__ if n not in NOT_MIGRATED]
    missing = [n for n in names if f"{prefix}{n}" not in doc and f"`{n}" not in doc]
    assert not missing, f"docs/MIGRATION.md does not mention {missing}"


def test_every_summary_writer_method_is_in_the_table() -> None:
    rows = _summary_writer_rows()
    public = {n for n in dir(SummaryWriter) if not n.startswith("_")}
    assert public - set(rows) == set(), "SummaryWriter methods missing from the table"


def test_summary_writer_table_matches_the_code() -> None:
    for name, status in _summary_writer_rows().items():
        supported = not status.startswith("not supported")
        if name in ("__init__", "SummaryWriter"):
            continue
        assert hasattr(SummaryWriter, name) == supported or (
            not supported and _raises_not_implemented(name)
        ), f"table says {name!r} is {status.split('.')[0]!r}"


def _raises_not_implemented(name: str) -> bool:
    method = getattr(SummaryWriter, name, None)
    if method is None:
        return True
    writer = SummaryWriter(npsummary.MemorySink())
    try:
        getattr(writer, name)("tag", None)
    except NotImplementedError:
        return True
    except Exception:
        return False
    finally:
        writer.close()
    return False
