"""The fenced code blocks of README.md and of every page under docs/, with the ``docs-test``
marker before each (tests/docs/test_code_blocks.py describes the markers).

Standard library only: CI also runs it as a script before any test dependency is installed,
to take out the blocks it runs itself as written (``docs-test: install`` and ``ci-run``)::

    python3 tests/support/docblocks.py KIND --out DIR

writes each block of that kind to ``DIR/<page>-L<line>.sh`` and prints the files' paths, one a
line, in page order.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

from paths import ROOT

PAGES = sorted(
    [ROOT / "README.md", *(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
)
MARKER = re.compile(
    r"<!--\s*docs-test:\s*(?P<kind>skip|s3|torchrun|install|ci-run|needs(?P<needs>(?:\s+[\w.]+,?)+))"
    r"\s*[—-]+\s*(?P<reason>.+?)\s*-->"
)
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    marker: str | None  # skip, s3, torchrun, install, ci-run or needs: not run in its session
    reason: str | None
    needs: tuple[str, ...] = ()  # the modules a "needs" block imports

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a Markdown page, with the marker before each, if any."""
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


def marked(kind: str) -> list[Block]:
    """Every block of every page that the marker ``kind`` precedes, in page order."""
    return [b for p in PAGES if p.exists() for b in blocks(p) if b.marker == kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=["install", "ci-run"])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the blocks to")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    found = marked(args.kind)
    if not found:
        parser.error(f"no block is marked docs-test: {args.kind}")
    for block in found:
        name = str(block.page.relative_to(ROOT)).replace("/", "-")
        path = args.out / f"{name}-L{block.line}.sh"
        path.write_text(block.code, encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
