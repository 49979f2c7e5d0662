"""``add_image`` and ``add_images`` write the pixels tensorboardX 2.6.5 and torch 2.13 write
(issue 21, item 3): every dtype but uint8 multiplied by 255 (an int64 0/1 mask is black and
white), one channel written as RGB, the same size and colorspace. PNG bytes differ (another
encoder); the decoded pixels are compared. Calls: ``image_program``; golden files:
``gen_image_golden.py``. tensorboardX wraps out-of-range values where torch clips: those calls
(``image_program.TBX_WRAPS``) are compared with torch only.
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


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    logdir = tmp_path_factory.mktemp("images")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with npsummary.SummaryWriter(str(logdir)) as writer:
            image_program.run(writer)
    return image_program.read_pixels(str(logdir))


def _golden(library: str) -> dict[str, dict[str, Any]]:
    with open(GOLDEN / f"{library}.json") as f:
        data: dict[str, dict[str, Any]] = json.load(f)["images"]
    return data


@pytest.mark.parametrize("library", LIBRARIES)
def test_golden_file_covers_every_call(library: str) -> None:
    assert sorted(_golden(library)) == sorted(image_program.CALLS)


@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("tag", sorted(image_program.CALLS))
def test_same_pixels(library: str, tag: str, ours: dict[str, dict[str, Any]]) -> None:
    if library == "tensorboardX" and tag in image_program.TBX_WRAPS:
        pytest.skip("tensorboardX wraps values outside [0, 255] (docs/MIGRATION.md)")
    assert ours[tag] == _golden(library)[tag]


def test_wrapping_calls_do_differ_in_tensorboardx() -> None:
    # The exclusions above are real differences, not stale entries.
    tbx, torch = _golden("tensorboardX"), _golden("torch")
    for tag in image_program.TBX_WRAPS:
        assert tbx[tag]["pixels"] != torch[tag]["pixels"], tag
