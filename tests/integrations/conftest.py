"""Real frameworks driven with npsummary's writer (issue 10). The tests need torch and the
frameworks, which the main venv does not have: each module skips there (``_harness.REASON``)
and runs in ``.ci/stages/40-frameworks.sh``, which builds ``.venv-frameworks``."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _unpatched() -> Iterator[None]:
    """Every test starts and ends with the real torch/tensorboardX writers."""
    import npsummary

    npsummary.unpatch()
    yield
    npsummary.unpatch()
