"""The public modules the API reference documents: the one list to extend.

Each entry maps a public module to the page (under ``docs/``) that documents every name in its
``__all__`` with an ``auto*``/``py:*`` directive. ``tests/docs/test_api_reference.py`` checks
both ways: every public module of the installed package has an entry here, and every name of
each entry's ``__all__`` has a directive on its page.
"""

from __future__ import annotations

PUBLIC_MODULES: dict[str, str] = {
    "npsummary": "api/npsummary.rst",
    "npsummary.writer": "api/npsummary.rst",
    "npsummary.experimental": "api/experimental.rst",
    "npsummary.v1": "api/v1.rst",
    "npsummary.reader": "api/reader.rst",
    "npsummary.hparams": "api/hparams.rst",
    "npsummary.tensorboardx_summary": "api/tensorboardx_summary.rst",
    "npsummary.torch_summary": "api/torch_summary.rst",
    "npsummary.integrations": "api/integrations.rst",
    "npsummary.integrations.keras": "api/integrations.rst",
    "npsummary.integrations.flax": "api/integrations.rst",
    "npsummary.integrations.clu": "api/integrations.rst",
    "npsummary.integrations.optuna": "api/integrations.rst",
}

#: Names of ``__all__`` that are submodules: documented by their own module's page.
SUBMODULES = {"experimental", "reader", "v1"}
