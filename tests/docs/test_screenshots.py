"""The pictures of the docs (issue 33 item 6): every screenshot scripts/screenshots.py makes is
committed, small, and shown; the landing page and every section of the gallery show one."""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "_static" / "screenshots"
IMAGE = re.compile(r"!\[[^\]]+\]\((?P<path>[^)]*_static/screenshots/(?P<name>[\w-]+)\.png)\)")


def _script_shots() -> dict[str, list[str]]:
    spec = importlib.util.spec_from_file_location(
        "screenshots", ROOT / "scripts" / "screenshots.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["screenshots"] = module
    spec.loader.exec_module(module)
    return {page: [s.name for s in shots] for page, shots in module.PAGES.items()}


def _shown() -> dict[str, set[str]]:
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    return {
        str(p.relative_to(ROOT)): {m["name"] for m in IMAGE.finditer(p.read_text(encoding="utf-8"))}
        for p in pages
        if "_build" not in p.parts
    }


def test_every_shot_is_committed_small_and_shown() -> None:
    made = {name for names in _script_shots().values() for name in names}
    committed = {p.stem for p in SHOTS.glob("*.png")}
    assert made == committed, (
        "run python scripts/screenshots.py and commit docs/_static/screenshots"
    )
    shown = set().union(*_shown().values())
    assert made <= shown, f"screenshots no page shows: {sorted(made - shown)}"
    total = sum(p.stat().st_size for p in SHOTS.glob("*.png"))
    assert total < 600_000, f"{total} bytes of screenshots: keep them small (crop, quantise)"
    for png in SHOTS.glob("*.png"):
        head = png.read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", png.name
        width, _ = struct.unpack(">II", head[16:24])
        assert width <= 1000, f"{png.name}: {width} px wide"


def test_each_page_shows_the_shots_made_from_it() -> None:
    shown = _shown()
    for page, names in _script_shots().items():
        assert set(names) <= shown[page], f"{page} does not show {set(names) - shown[page]}"


def test_every_gallery_section_has_its_call_and_its_picture() -> None:
    text = (ROOT / "docs" / "guide" / "gallery.md").read_text(encoding="utf-8")
    for section in text.split("\n## ")[1:]:
        title = section.splitlines()[0]
        assert "```python" in section, f"gallery: {title} has no program"
        assert IMAGE.search(section), f"gallery: {title} has no screenshot"


def test_every_screenshot_link_resolves() -> None:
    for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]:
        if "_build" in page.parts:
            continue
        for match in IMAGE.finditer(page.read_text(encoding="utf-8")):
            assert (page.parent / match["path"]).resolve().exists(), f"{page.name}: {match['path']}"
