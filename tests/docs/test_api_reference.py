"""The API reference documents every public name: each public module of the package has a page
(listed in docs/_ext/public_api.py), and each name of its ``__all__`` a directive on that page.
``sphinx-build -W -n`` (CI stage 80-wheel-docs) then checks that every directive resolves."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import npsummary

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
from public_api import PUBLIC_MODULES, SUBMODULES  # noqa: E402

DIRECTIVE = re.compile(
    r"^\s*\.\. (?:auto(?:class|function|exception|data|attribute|module)|"
    r"py:(?:class|function|exception|data|attribute|module))::\s*(?P<target>[\w.]+)",
    re.M,
)


def documented(page: str) -> set[str]:
    """Last components of every object directive's target on a page."""
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return {m["target"].rpartition(".")[2] for m in DIRECTIVE.finditer(text)}


def public_modules() -> set[str]:
    """``npsummary`` and every importable submodule with no private component in its path."""
    found = {"npsummary"}
    for info in pkgutil.walk_packages(npsummary.__path__, "npsummary.", onerror=lambda _: None):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            found.add(info.name)
    return found - {"npsummary.proto"}  # the generated messages: documented as v1's classes


def test_every_public_module_has_a_page() -> None:
    missing = sorted(public_modules() - set(PUBLIC_MODULES))
    assert not missing, f"add these to docs/_ext/public_api.py and give them a page: {missing}"
    for page in set(PUBLIC_MODULES.values()):
        assert (ROOT / "docs" / page).exists(), page


def declared_names(module_name: str) -> set[str]:
    """The module's ``__all__``, read from its source: the integrations import their framework
    (Keras, Optuna, ...), which the docs need not install."""
    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None, module_name
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    value: ast.expr | None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert value is not None
            return set(ast.literal_eval(value))
    return set()


@pytest.mark.parametrize("module_name", sorted(PUBLIC_MODULES))
def test_every_public_name_is_documented(module_name: str) -> None:
    names = declared_names(module_name) - SUBMODULES
    missing = sorted(names - documented(PUBLIC_MODULES[module_name]))
    assert not missing, f"{module_name}: no directive on {PUBLIC_MODULES[module_name]}: {missing}"


def test_submodules_in_all_have_their_own_page() -> None:
    for name in SUBMODULES:
        assert f"npsummary.{name}" in PUBLIC_MODULES
        assert name in npsummary.__all__


def _hand_written(page: str) -> list[tuple[str, str, str]]:
    """``(module, name, parameters)`` of each ``py:class``/``py:function`` written with its
    signature on a page (the integrations', whose frameworks the docs build does not install)."""
    found, module = [], ""
    for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines():
        if m := re.match(r"\.\. py:module:: (\S+)", line):
            module = m[1]
        elif m := re.match(r"\.\. py:(?:class|function):: (\w+)(\(.*\))$", line):
            found.append((module, m[1], m[2]))
    return found


REQUIRED = "<required>"


def _default(node: ast.expr | None) -> object:
    return REQUIRED if node is None else ast.literal_eval(node)


def _shape(parameters: str) -> list[tuple[str, str, object]]:
    """Names, kinds and defaults of a parameter list, annotations left out."""
    tree = ast.parse(f"def f{parameters}: pass").body[0]
    assert isinstance(tree, ast.FunctionDef)
    args = tree.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    shape = [(a.arg, "positional", _default(d)) for a, d in zip(positional, defaults, strict=True)]
    if args.vararg:
        shape.append((args.vararg.arg, "*", REQUIRED))
    shape += [
        (a.arg, "keyword", _default(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        shape.append((args.kwarg.arg, "**", REQUIRED))
    return shape


@pytest.mark.tf_free
@pytest.mark.parametrize(
    ("module_name", "name", "parameters"),
    _hand_written("api/integrations.rst"),
    ids=lambda v: str(v)[:40],
)
def test_hand_written_signatures_are_the_real_ones(
    module_name: str, name: str, parameters: str
) -> None:
    """The signatures written by hand on api/integrations.rst are inspect.signature's, where
    the framework is installed (CI stage 70)."""
    import inspect

    try:
        obj = getattr(importlib.import_module(module_name), name)
    except ImportError as exc:
        pytest.skip(f"{module_name}.{name} needs its framework (CI stage 70): {exc}")
    real = inspect.signature(obj)
    kinds: dict[inspect._ParameterKind, str] = {
        inspect.Parameter.VAR_POSITIONAL: "*",
        inspect.Parameter.VAR_KEYWORD: "**",
        inspect.Parameter.KEYWORD_ONLY: "keyword",
    }
    expected = [
        (
            p.name,
            kinds.get(p.kind, "positional"),
            REQUIRED if p.default is inspect.Parameter.empty else p.default,
        )
        for p in real.parameters.values()
    ]
    assert _shape(parameters) == expected, f"{module_name}.{name}: the page says {parameters}"
