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


def test_readme_and_guide_quote_no_measured_speed() -> None:
    """Speed figures live where the benchmarks put them (benchmarks/RESULTS.md, with the
    command and machine): the README and the guide link there instead of copying numbers that
    go stale."""
    import re

    measured = re.compile(r"\d[\d.,]*\s*(?:µs|ms\b|× (?:faster|slower)|x faster)")
    pages = [ROOT / "README.md", *(ROOT / "docs" / "guide").glob("*.md")]
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not measured.search(line), f"{page.name}:{number}: {line.strip()}"
