"""Sphinx glue for npsummary's site: the CLI reference, public names for private paths, and
optional pages contributed by other parts of the tree.

* ``.. npsummary-cli::`` renders ``npsummary --help`` and every command's ``--help`` from the
  argument parser itself (found through the ``npsummary`` console script), so the reference
  cannot drift from the CLI.
* Type hints name the module where an object is defined (``npsummary._sink.EventSink``); the
  ``missing-reference`` handler resolves such a name to the public name that documents the same
  object (``npsummary.EventSink``), so moving private modules never breaks the docs. A private
  name with no public one, in a signature, is a warning (an error under ``-W``): users cannot
  name it.
* Signatures are the real ones: a class whose ``__new__`` takes ``(*args, **kwargs)`` (rank
  gating) shows ``inspect.signature``'s, a ``Protocol`` shows none, and a default that names a
  module constant shows its value. A constant's entry never shows its type's docstring
  (``str``'s for ``__version__``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import inspect
import os
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from public_api import PUBLIC_MODULES
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.inspect import signature as sphinx_signature
from sphinx.util.inspect import stringify_signature
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


#: Argument-type aliases of the signatures (``_types.py``) and the private types they name that
#: users need not import (a Protocol argument, a returned object), described on ``api/types.md``.
TYPE_ALIASES = {
    "ArrayLike",
    "DataFormats",
    "GlobalStepLike",
    "KernelLayout",
    "LegacyLike",
    "LogTarget",
    "NonFinitePolicy",
    "NormalizeMode",
    "Ranks",
    "RunFileWriter",
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
        signature = node.parent
        while signature is not None and not isinstance(signature, addnodes.desc_signature):
            signature = signature.parent
        if signature is not None:
            logging.getLogger(__name__).warning(
                f"private type {target} in the public signature of "
                f"{signature.get('fullname', '?')}: users cannot name it",
                location=node,
            )
        return contnode
    return None


#: Classes users get from a factory, never construct: no constructor signature (it takes
#: private objects).
MADE_BY_FACTORY = {"npsummary.SummaryFileWriter": "npsummary.create_file_writer"}

_VARARGS = re.compile(r"^\(\*args(: ~?(typing\.)?Any)?, \*\*kwargs(: ~?(typing\.)?Any)?\)$")


def _real_signature(
    app: Sphinx,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    ret: str | None,
) -> tuple[str | None, str | None] | None:
    """The signature a user calls, where autodoc's is not it; constants' names by their values."""
    if what == "class" and name in MADE_BY_FACTORY:
        return "", None
    if what == "class" and signature and _VARARGS.match(signature):
        if getattr(obj, "_is_protocol", False):
            return "", None  # a Protocol is implemented, not called
        # __new__ only forwards (rank gating): __init__ is what users call, read as autodoc
        # reads one (annotations evaluated where they can be, kept as written where not).
        real = sphinx_signature(
            obj.__init__, bound_method=True, type_aliases=app.config.autodoc_type_aliases
        )
        text = stringify_signature(
            real,
            show_return_annotation=False,
            unqualified_typehints=app.config.autodoc_typehints_format == "short",
        )
        if text != signature:
            return text, ret
    if signature and what in ("class", "function", "method", "exception"):
        shown = _factories_by_call(obj, _constants_by_value(obj, signature))
        if shown != signature:
            return shown, ret
    return None


_CONSTANT_DEFAULT = re.compile(r"(?:(?<== )|(?<==))[A-Z][A-Z0-9_]+\b(?=\s*[,)])")


def _constants_by_value(obj: Any, signature: str) -> str:
    """``flush_secs=DEFAULT_FLUSH_SECS`` -> ``flush_secs=2.0``: the value of each default that
    names an upper-case constant of the module the callable is defined in."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    module = inspect.getmodule(target)

    def value(match: re.Match[str]) -> str:
        name = match[0]
        if module is None or not hasattr(module, name):
            return name
        constant = getattr(module, name)
        if isinstance(constant, (int, float, str, bytes, bool)) or constant is None:
            return repr(constant)
        return name

    return _CONSTANT_DEFAULT.sub(value, signature)


def _factories_by_call(obj: Any, signature: str) -> str:
    """A dataclass field's ``= <factory>`` (which the signature parser cannot read, so the whole
    signature would be shown as plain text) as the call that makes it: ``= list()``."""
    if "<factory>" not in signature or not dataclasses.is_dataclass(obj):
        return signature
    for f in dataclasses.fields(obj):
        factory = f.default_factory
        if factory is not dataclasses.MISSING:
            call = f"{getattr(factory, '__name__', 'factory')}()"
            signature = re.sub(rf"(\b{f.name}: [^=]*= )<factory>", rf"\g<1>{call}", signature)
    return signature


def _no_type_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """A constant (``__version__``) has no docstring of its own: ``str.__doc__`` is not one."""
    if what in ("data", "attribute") and lines:
        doc = getattr(type(obj), "__doc__", None)
        if isinstance(doc, str) and inspect.cleandoc(doc).splitlines()[:1] == lines[:1]:
            lines.clear()


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
    app.connect("autodoc-process-signature", _real_signature)
    app.connect("autodoc-process-docstring", _no_type_docstring)
    app.connect("build-finished", _root_redirect)
    app.connect("build-finished", _report_private)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
