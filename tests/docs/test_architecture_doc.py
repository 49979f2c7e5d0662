"""docs/ARCHITECTURE.md stays true of the tree: every package is on its map, every module and
package it names exists, and every path in its prose does too."""

from __future__ import annotations

import re

from paths import ROOT

PACKAGE = ROOT / "src" / "npsummary"
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
TREE = DOC.split("## The tree", 1)[1].split("```")[1]


def _named_in_tree() -> set[str]:
    """Paths (relative to the package) of the entries of the tree block: the names in its first
    column, under the packages their indentation puts them in."""
    names: set[str] = set()
    parents: list[tuple[int, str]] = []
    for line in TREE.splitlines()[2:]:  # skip the empty line and "src/npsummary/"
        match = re.match(r"( *)(\S.*?)(?:  |$)", line)
        if not match or not re.fullmatch(r"[\w.]+/?(, [\w.]+/?)*", match.group(2)):
            continue  # a description's continuation
        indent = len(match.group(1))
        while parents and parents[-1][0] >= indent:
            parents.pop()
        prefix = parents[-1][1] if parents else ""
        for name in match.group(2).split(", "):
            names.add((prefix + name).rstrip("/"))
            if name.endswith("/"):
                parents.append((indent, prefix + name))
    return names


def test_every_package_is_on_the_map() -> None:
    named = _named_in_tree()
    packages = {
        str(init.parent.relative_to(PACKAGE))
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE
    }
    assert packages - named == set(), "packages missing from docs/ARCHITECTURE.md"


def test_every_name_on_the_map_exists() -> None:
    named = _named_in_tree()
    assert {"_common/convert.py", "_frontends/tbx/base.py", "_sinks/segments.py"} <= named
    missing = sorted(name for name in named if not (PACKAGE / name).exists())
    assert missing == [], "docs/ARCHITECTURE.md names modules that do not exist"
    modules = {path.name for path in PACKAGE.rglob("*.py")}
    mentioned = set(re.findall(r"\b(\w+\.py)\b", TREE))
    assert mentioned - modules == set(), "docs/ARCHITECTURE.md mentions modules that do not exist"


def test_every_path_in_the_prose_exists() -> None:
    prose = DOC.replace(TREE, "")
    paths = set(re.findall(r"`((?:_\w+|reader|proto)/[\w/]+\.py)`", prose))
    paths |= {f"tests/{p}" for p in re.findall(r"`tests/([\w/]+\.py)`", prose)}
    assert len(paths) > 10
    missing = sorted(
        p for p in paths if not ((ROOT / p) if p.startswith("tests/") else PACKAGE / p).exists()
    )
    assert missing == [], "docs/ARCHITECTURE.md mentions paths that do not exist"
