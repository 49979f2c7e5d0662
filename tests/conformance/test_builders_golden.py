""":mod:`npsummary.tensorboardx_summary` and :mod:`npsummary.torch_summary` return what
tensorboardX 2.6.5's and torch 2.13's module-level builders return, or raise where they raise
(issue 21, item 6): one-threshold and capped PR curves, ``histogram`` refusing
``bins='tensorflow'`` and empty input, images, boxed images and videos beyond [0, 1]
(tensorboardX wraps, torch clips), torch's ``tensor_proto``. Images are compared by their
decoded pixels (another PNG and GIF encoder). Calls: ``builders_program``; golden files:
``gen_builders_golden.py``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

from conformance import builders_program
from npsummary import tensorboardx_summary, torch_summary
from paths import TESTS

GOLDEN = TESTS / "conformance" / "golden" / "builders"
MODULES = {"tensorboardX": tensorboardx_summary, "torch": torch_summary}
# torch's make_np refuses any list with NotImplementedError before bins are looked at;
# npsummary's builders take a list (as tensorboardX's and both writers do), so the list with
# bins='tensorflow' fails on the bins, with a ValueError.
OTHER_TYPE = {("torch", "histogram list bins tensorflow")}


def _golden(library: str) -> dict[str, Any]:
    with open(GOLDEN / f"{library}.json") as f:
        data: dict[str, Any] = json.load(f)["results"]
    return data


def _cases() -> list[tuple[str, str]]:
    return [
        (library, name)
        for library in sorted(MODULES)
        for name in sorted(builders_program.CALLS)
        + (sorted(builders_program.TENSORS) if library == "torch" else [])
    ]


@pytest.mark.parametrize("library", sorted(MODULES))
def test_golden_file_covers_every_call(library: str) -> None:
    expected = set(builders_program.CALLS)
    if library == "torch":
        expected |= set(builders_program.TENSORS)
    assert set(_golden(library)) == expected


@pytest.mark.parametrize(("library", "name"), _cases())
def test_same_result_as_the_library(library: str, name: str) -> None:
    pytest.importorskip("tensorboard")
    pytest.importorskip("PIL")
    module = MODULES[library]
    if name in builders_program.TENSORS:
        array = builders_program.TENSORS[name]
        ours = builders_program.record(lambda: module.tensor_proto("t", array))
    else:
        call = builders_program.CALLS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ours = builders_program.record(lambda: call(module))
    theirs = _golden(library)[name]
    if isinstance(theirs, dict):  # the library raises: ours too, a TypeError or ValueError
        assert isinstance(ours, dict), f"{name}: npsummary returned {ours}"
        assert {"TypeError", "ValueError"} & set(ours["raises"])
        if (library, name) not in OTHER_TYPE:
            assert set(theirs["raises"]) <= set(ours["raises"])
    else:
        assert ours == theirs


def test_the_flavours_do_differ() -> None:
    # The tensorboardX calls beyond [0, 1] wrap, torch's clip: each module follows its library.
    tbx, torch = _golden("tensorboardX"), _golden("torch")
    for name in ("image beyond [0, 1]", "image_boxes beyond [0, 1]", "video beyond [0, 1]"):
        assert tbx[name] != torch[name], name


def test_the_torch_only_list_difference_is_real() -> None:
    (library, name) = next(iter(OTHER_TYPE))
    assert _golden(library)[name] == {"raises": ["NotImplementedError"]}
