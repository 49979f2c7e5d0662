"""``add_image`` and ``add_images`` write the pixels tensorboardX 2.6.5 and torch 2.13 write
(issue 21, item 3): every dtype but uint8 multiplied by 255 (an int64 0/1 mask is black and
white), one channel written as RGB, the same size and colorspace. PNG bytes differ (another
encoder); the decoded pixels are compared. Calls: ``image_program``; golden files:
``gen_image_golden.py``. tensorboardX wraps out-of-range values where torch clips: each flavour
of the writer (``TensorboardXSummaryWriter``, ``SummaryWriter``) writes its library's pixels.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

import npsummary
from conformance import image_program
from paths import TESTS

GOLDEN = TESTS / "conformance" / "golden" / "images"
LIBRARIES = ("tensorboardX", "torch")


WRITERS = {"tensorboardX": "TensorboardXSummaryWriter", "torch": "SummaryWriter"}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """library -> tag -> what its flavour of npsummary's writer wrote."""
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    out = {}
    for library, name in WRITERS.items():
        logdir = tmp_path_factory.mktemp(f"images_{library}")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with getattr(npsummary, name)(str(logdir)) as writer:
                image_program.run(writer)
        out[library] = image_program.read_pixels(str(logdir))
    return out


def _golden(library: str) -> dict[str, dict[str, Any]]:
    with open(GOLDEN / f"{library}.json") as f:
        data: dict[str, dict[str, Any]] = json.load(f)["images"]
    return data


@pytest.mark.parametrize("library", LIBRARIES)
def test_golden_file_covers_every_call(library: str) -> None:
    assert sorted(_golden(library)) == sorted(image_program.CALLS)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tag", sorted(image_program.CALLS))
def test_same_pixels(library: str, tag: str, ours: dict[str, dict[str, dict[str, Any]]]) -> None:
    assert ours[library][tag] == _golden(library)[tag]


def test_wrapping_calls_do_differ_in_tensorboardx() -> None:
    # The flavours have something to choose between.
    tbx, torch = _golden("tensorboardX"), _golden("torch")
    for tag in image_program.TBX_WRAPS:
        assert tbx[tag]["pixels"] != torch[tag]["pixels"], tag
