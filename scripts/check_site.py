"""Crawl the built documentation site and report what a reader would trip on.

    sphinx-build -W --keep-going -n -c docs . docs/_build/html
    python scripts/check_site.py docs/_build/html

Every page is checked for:

* broken internal links: an ``href``/``src`` to a file that is not in the site, or to an
  anchor (``#id``) that its page does not have;
* empty API entries: an object of the reference (``<dl class="py ...">``) whose description
  holds no text;
* signatures that hide the real one: ``(*args, **kwargs)`` where ``inspect.signature`` of the
  object has other parameters;
* private types in public signatures: a name of a class defined in a private module of
  npsummary that no public module exports and ``docs/api/types.md`` does not describe;
* signatures Sphinx could not parse, shown as plain text (``~module.Name``, ``<factory>``);
* raw Markdown links printed as text (``[text](page.md)`` in a page, outside code).

Prints one line per problem and a summary; exits 1 if there is any problem. Standard library
only (and npsummary, importable, for the signature checks).
"""

from __future__ import annotations

import argparse
import html.parser
import importlib
import inspect
import pkgutil
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
RAW_MARKDOWN_LINK = re.compile(r"\]\([^)\s]+\)")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PRIVATE_PATH = re.compile(r"\bnpsummary(?:\.\w+)*\._(?!_)")


@dataclass
class Entry:
    """One API object: its id, signature text and description text."""

    id: str
    signature: str = ""
    description: str = ""


@dataclass
class Page:
    path: Path
    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    raw_links: list[str] = field(default_factory=list)


class _Parser(html.parser.HTMLParser):
    """Ids, links, API entries and prose text of one page."""

    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.code = 0  # depth inside <pre>/<code>
        self.stack: list[str] = []
        self.api_dl: list[int] = []  # stack depths of open <dl class="py ...">
        self.dt: Entry | None = None  # the signature being read
        self.dd: list[tuple[int, Entry]] = []  # open descriptions: (stack depth, entry)
        self.last_entry: Entry | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.page.ids.add(a[key])
        for key in ("href", "src"):
            if key in a and tag in ("a", "img", "link", "script", "source"):
                self.page.links.append(a[key])
        if tag in ("br", "img", "meta", "link", "input", "hr", "source", "wbr"):
            return
        self.stack.append(tag)
        depth = len(self.stack)
        classes = a.get("class", "").split()
        if tag in ("pre", "code"):
            self.code += 1
        if tag == "dl" and "py" in classes:
            self.api_dl.append(depth)
        elif tag == "dt" and self.api_dl and self.api_dl[-1] == depth - 1 and "sig" in classes:
            self.dt = Entry(a.get("id", ""))
        elif tag == "dd" and self.api_dl and self.api_dl[-1] == depth - 1 and self.last_entry:
            self.dd.append((depth, self.last_entry))
            self.last_entry = None

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.stack:
            return
        while self.stack:
            depth = len(self.stack)
            open_tag = self.stack.pop()
            if open_tag in ("pre", "code"):
                self.code -= 1
            if open_tag == "dt" and self.dt is not None:
                self.page.entries.append(self.dt)
                self.last_entry, self.dt = self.dt, None
            if open_tag == "dd" and self.dd and self.dd[-1][0] == depth:
                self.dd.pop()
            if open_tag == "dl" and self.api_dl and self.api_dl[-1] == depth:
                self.api_dl.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.dt is not None:
            self.dt.signature += data
        for _, entry in self.dd:
            entry.description += data
        if not self.code:
            self.page.raw_links += RAW_MARKDOWN_LINK.findall(data)


def read_page(path: Path) -> Page:
    page = Page(path)
    parser = _Parser(page)
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return page


def _resolve(dotted: str) -> Any:
    """The object a dotted public name documents, or None when it cannot be imported."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                obj = getattr(obj, attribute)
        except (AttributeError, ImportError):
            return None
        return obj
    return None


def _hidden_signature(entry: Entry) -> str | None:
    """The real parameters, where the page shows ``(*args, **kwargs)`` and they differ."""
    text = " ".join(entry.signature.split())
    if not re.search(r"\(\*args\b[^)]*\*\*kwargs\b[^)]*\)", text):
        return None
    obj = _resolve(entry.id)
    if obj is None:
        return None
    try:
        real = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    if [p.name for p in real.parameters.values()] in (
        ["args", "kwargs"],
        ["self", "args", "kwargs"],
    ):
        return None
    return str(real)


def private_type_names() -> set[str]:
    """Classes defined in npsummary's private modules that no public module exports and that
    docs/api/types.md does not describe: names a reader cannot look up."""
    import npsummary

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from public_api import PUBLIC_MODULES

    public: set[int] = set()
    for name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attribute in getattr(module, "__all__", ()):
            try:
                public.add(id(getattr(module, attribute)))
            except ImportError:
                continue
    described = set(re.findall(r"^`(\w+)`$", (ROOT / "docs/api/types.md").read_text(), re.M))
    private: set[str] = set()
    for info in pkgutil.walk_packages(npsummary.__path__, "npsummary.", onerror=lambda _: None):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and obj.__module__ == info.name
                and not name.startswith("_")
                and id(obj) not in public
                and name not in described
            ):
                private.add(name)
    return private


def check(site: Path, private: set[str]) -> tuple[list[str], dict[str, int]]:
    pages = {p.resolve(): read_page(p) for p in sorted(site.rglob("*.html"))}
    problems: list[str] = []
    counts = {"pages": len(pages), "links": 0, "entries": 0}
    for path, page in pages.items():
        where = path.relative_to(site.resolve())
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue
            counts["links"] += 1
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{where}: broken link {link!r} (no file {target.name})")
            elif parts.fragment and target.suffix == ".html":
                anchors = pages[target].ids if target in pages else set()
                if unquote(parts.fragment) not in anchors:
                    problems.append(f"{where}: broken link {link!r} (no anchor on that page)")
        for entry in page.entries:
            counts["entries"] += 1
            name = entry.id or " ".join(entry.signature.split())[:60]
            if not entry.description.strip():
                problems.append(f"{where}: empty API entry {name}")
            real = _hidden_signature(entry)
            if real is not None:
                problems.append(f"{where}: {name} shows (*args, **kwargs); its signature is {real}")
            shown = set(IDENTIFIER.findall(entry.signature.partition("(")[2]))
            for private_name in sorted(shown & private):
                problems.append(f"{where}: private type {private_name} in the signature of {name}")
            if "~" in entry.signature or "<factory>" in entry.signature:
                problems.append(f"{where}: the signature of {name} is shown unparsed, as text")
            if PRIVATE_PATH.search(entry.signature):
                problems.append(f"{where}: a private module path in the signature of {name}")
        for raw in page.raw_links:
            problems.append(f"{where}: a Markdown link printed as text: {raw}")
    return problems, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site, e.g. docs/_build/html")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").exists():
        parser.error(f"{args.site} holds no index.html: build the site first")
    problems, counts = check(args.site, private_type_names())
    for problem in problems:
        print(problem)
    print(
        f"{counts['pages']} pages, {counts['links']} internal links, {counts['entries']} API "
        f"entries: {len(problems)} problem{'' if len(problems) == 1 else 's'}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
