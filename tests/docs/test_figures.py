"""The figures of RELIABILITY.md's "Last run" come from the reports the suite wrote
(docs/figures/*.jsonl), through scripts/reliability_figures.py: an edit by hand fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reliability_figures_are_the_reports() -> None:
    spec = importlib.util.spec_from_file_location(
        "reliability_figures", ROOT / "scripts" / "reliability_figures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    doc = (ROOT / "RELIABILITY.md").read_text(encoding="utf-8")
    assert module.BEGIN in doc and module.END in doc
    assert module.rendered(doc) == doc, "run: python scripts/reliability_figures.py --write"
