"""Sphinx glue for npsummary's site: the CLI reference, public names for private paths, and
optional pages contributed by other parts of the tree.

* ``.. npsummary-cli::`` renders ``npsummary --help`` and every command's ``--help`` from the
  argument parser itself (found through the ``npsummary`` console script), so the reference
  cannot drift from the CLI.
* Type hints name the module where an object is defined (``npsummary._sink.EventSink``); the
  ``missing-reference`` handler resolves such a name to the public name that documents the same
  object (``npsummary.EventSink``), so moving private modules never breaks the docs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from public_api import PUBLIC_MODULES
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.nodes import make_refnode


def cli_parser() -> argparse.ArgumentParser:
    """The parser of the ``npsummary`` console script: ``<module of main>._parser()``."""
    (script,) = [
        e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "npsummary"
    ]
    module = importlib.import_module(script.value.split(":")[0])
    parser: argparse.ArgumentParser = module._parser()
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


class CliDirective(Directive):
    """``npsummary --help`` and each command's help, as sections with literal blocks."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        old = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: fix the width
        try:
            parser = cli_parser()
            pages = [("npsummary", parser.format_help())]
            pages += [(f"npsummary {n}", p.format_help()) for n, p in _subparsers(parser).items()]
        finally:
            if old is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = old
        sections: list[nodes.Node] = []
        for title, text in pages:
            section = nodes.section(
                ids=[nodes.make_id(title)], names=[nodes.fully_normalize_name(title)]
            )
            section += nodes.title("", "", nodes.literal(title, title))
            section += nodes.literal_block(text, text, language="text")
            self.state.document.note_implicit_target(section)
            sections.append(section)
        return sections


def _public_names() -> dict[str, str]:
    """``defining module.qualname -> public dotted name`` for every documented public object."""
    found: dict[str, str] = {}
    for module_name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # an integration whose framework the docs build does not install
            continue
        for name in getattr(module, "__all__", ()):
            try:
                obj = getattr(module, name, None)
            except ImportError:  # a name the integration takes from a framework (CLU's)
                continue
            qualname = getattr(obj, "__qualname__", None)
            defined_in = getattr(obj, "__module__", None)
            if qualname and defined_in and defined_in != module_name:
                found.setdefault(f"{defined_in}.{qualname}", f"{module_name}.{name}")
    return found


def _resolve_private(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    public = _PUBLIC.get(target)
    if public is None:
        # A method of a public class named by its defining mixin: _tbx_scalars.ScalarMethods.x
        head, _, attr = target.rpartition(".")
        owner = _PUBLIC.get(head)
        public = f"{owner}.{attr}" if owner and attr else None
    if public is None:
        return _alias_or_private(app, env, node, contnode, target)
    domain = env.get_domain("py")
    builder = app.builder
    return domain.resolve_xref(
        env, node["refdoc"], builder, node["reftype"], public, node, contnode
    )


_PUBLIC: dict[str, str] = {}


#: Argument-type aliases of the signatures (``_types.py``), described on ``api/types.md``.
TYPE_ALIASES = {
    "ArrayLike",
    "DataFormats",
    "KernelLayout",
    "LogTarget",
    "NonFinitePolicy",
    "NormalizeMode",
    "Ranks",
    "ScalarLike",
    "StepLike",
}
#: Private objects that public signatures or docstrings name, shown as text: they are not part
#: of the API (a name here that users need is a candidate for a public export).
PRIVATE_AS_TEXT: set[str] = set()


def _alias_or_private(app: Sphinx, env: Any, node: Any, contnode: Any, target: str) -> Any:
    name = target.rpartition(".")[2]
    if name in TYPE_ALIASES and (target == name or target.startswith("npsummary.")):
        std = env.get_domain("std")
        docname, labelid = std.anonlabels.get(f"type-{name.lower()}", (None, None))
        if docname is not None:
            return make_refnode(app.builder, node["refdoc"], docname, labelid, contnode)
    if target.startswith("numpy._typing."):  # numpy.typing.ArrayLike, expanded by typing
        return None if "ArrayLike" in target else contnode
    parts = target.split(".")
    if parts[0] == "npsummary" and any(p.startswith("_") and p != "__version__" for p in parts):
        PRIVATE_AS_TEXT.add(target)
        return contnode
    return None


def _on_config(app: Sphinx, config: Any) -> None:
    _PUBLIC.update(_public_names())


def _report_private(app: Sphinx, exception: Exception | None) -> None:
    if PRIVATE_AS_TEXT:
        names = ", ".join(sorted(PRIVATE_AS_TEXT))
        logging.getLogger(__name__).info(f"private names shown as text, not links: {names}")


def _root_redirect(app: Sphinx, exception: Exception | None) -> None:
    """The site's root page is docs/index (the source directory is the repository root):
    index.html at the top of the output sends a browser there."""
    if exception is None and app.builder.format == "html":
        target = app.builder.get_target_uri(app.config.root_doc)
        page = f'<!DOCTYPE html><meta http-equiv="refresh" content="0; url={target}">'
        (Path(app.outdir) / "index.html").write_text(page, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("npsummary-cli", CliDirective)
    app.connect("config-inited", _on_config)
    app.connect("missing-reference", _resolve_private)
    app.connect("build-finished", _root_redirect)
    app.connect("build-finished", _report_private)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
