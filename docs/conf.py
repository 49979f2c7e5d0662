"""Sphinx configuration of npsummary's documentation site.

Build (from the repository root, after ``pip install '.[docs]'``)::

    sphinx-build -W --keep-going -n -c docs . docs/_build/html

The source directory is the repository root, so that README.md, RELIABILITY.md, CHANGELOG.md,
benchmarks/RESULTS.md and docs/*.md are pages as they are (included, never copied) and their
relative links work on the site as they do on GitHub; ``include_patterns`` keeps the rest out.

The build needs no network: intersphinx reads the inventories committed in ``docs/_intersphinx``
(made by ``docs/_intersphinx/make_inventories.py``), and the API pages list the public modules
named in ``docs/_ext/public_api.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import npsummary  # noqa: E402  (the installed package, or the checkout's src/ via pip -e)

project = "npsummary"
author = "the npsummary developers"
copyright = "2026, the npsummary developers"
release = npsummary.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.intersphinx",
    "npsummary_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "docs/index"
include_patterns = [
    "README.md",
    "RELIABILITY.md",
    "CHANGELOG.md",
    "benchmarks/RESULTS.md",
    "docs/*.md",
    "docs/api/*",
    "docs/guide/*",
    "docs/_static/**",
]
exclude_patterns = ["docs/_build/**", "**/.venv*/**"]
templates_path: list[str] = []
html_static_path: list[str] = []
html_theme = "furo"
html_title = f"npsummary {release}"

# Every cross-reference must resolve (sphinx-build -n); a name that cannot is a docs bug.
nitpicky = True

# --- MyST: the Markdown pages (FORMAT.md, MIGRATION.md, ...) are sources as they are ---------
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# --- autodoc + napoleon: Google-style docstrings ---------------------------------------------
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"member-order": "bysource"}

# --- intersphinx, offline ---------------------------------------------------------------------
# The inventories are small committed subsets of Python's and NumPy's (the names our docstrings
# use), with the real documentation URLs, so the build needs no network. Set
# NPSUMMARY_DOCS_ONLINE=1 to use the full inventories downloaded from the sites instead.
_ONLINE = os.environ.get("NPSUMMARY_DOCS_ONLINE") == "1"
intersphinx_mapping = {
    "python": (
        "https://docs.python.org/3",
        None if _ONLINE else str(DOCS / "_intersphinx" / "python.inv"),
    ),
    "numpy": (
        "https://numpy.org/doc/stable",
        None if _ONLINE else str(DOCS / "_intersphinx" / "numpy.inv"),
    ),
}
