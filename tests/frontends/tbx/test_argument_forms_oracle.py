"""Every argument form tensorboardX's and torch's ``SummaryWriter`` take, ours take (issue 29: each
replaced library's accepted forms, with the library as the oracle where it is installed).

Each entry is one call; it runs on the library's writer and on ours of its flavour
(``TensorboardXSummaryWriter``, ``SummaryWriter``), each into its own logdir. Where the library
writes, we must write; where it fails, we may write (a superset: lists and tuples, Fractions,
empty histograms) or raise TypeError/ValueError naming the tag. The one form we refuse on
purpose is listed in ``REFUSED_ON_PURPOSE``."""

from __future__ import annotations

import fractions
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter, TensorboardXSummaryWriter

_R = np.random.default_rng(0)
_IMG = _R.random((3, 8, 8))

CALLS: dict[str, Callable[[Any], Any]] = {
    # add_scalar values
    "scalar int": lambda w: w.add_scalar("t", 3, 1),
    "scalar np.bool_": lambda w: w.add_scalar("t", np.bool_(True), 1),
    "scalar np.uint64": lambda w: w.add_scalar("t", np.uint64(7), 1),
    "scalar np.float16": lambda w: w.add_scalar("t", np.float16(0.5), 1),
    "scalar 0-d": lambda w: w.add_scalar("t", np.array(0.5), 1),
    "scalar (1, 1)": lambda w: w.add_scalar("t", np.array([[0.5]]), 1),
    "scalar list of one": lambda w: w.add_scalar("t", [0.5], 1),
    "scalar object 0-d": lambda w: w.add_scalar("t", np.array(0.5, dtype=object), 1),
    "scalar Fraction": lambda w: w.add_scalar("t", fractions.Fraction(1, 2), 1),
    "scalar nan": lambda w: w.add_scalar("t", float("nan"), 1),
    "scalar walltime int": lambda w: w.add_scalar("t", 1.0, 1, walltime=5),
    # global_step
    "step float": lambda w: w.add_scalar("t", 1.0, 2.7),
    "step np.float32": lambda w: w.add_scalar("t", 1.0, np.float32(3)),
    "step bool": lambda w: w.add_scalar("t", 1.0, True),
    # add_histogram values and bins
    "histogram list": lambda w: w.add_histogram("t", [1.0, 2.0, 3.0], 1),
    "histogram nested": lambda w: w.add_histogram("t", [[1, 2], [3, 4]], 1),
    "histogram bool": lambda w: w.add_histogram("t", np.array([True, False]), 1),
    "histogram float16": lambda w: w.add_histogram("t", np.ones(3, np.float16), 1),
    "histogram scalar": lambda w: w.add_histogram("t", 3.0, 1),
    "histogram uint8": lambda w: w.add_histogram("t", np.arange(5, dtype=np.uint8), 1),
    "histogram object": lambda w: w.add_histogram("t", np.array([1.0, 2.0], dtype=object), 1),
    "histogram nan": lambda w: w.add_histogram("t", np.array([np.nan, 1.0]), 1),
    "histogram complex": lambda w: w.add_histogram("t", np.array([1 + 1j]), 1),
    "histogram bins auto": lambda w: w.add_histogram("t", _R.random(100), 1, bins="auto"),
    "histogram bins int": lambda w: w.add_histogram("t", _R.random(100), 1, bins=10),
    "histogram bins list": lambda w: w.add_histogram("t", _R.random(100), 1, bins=[0, 0.5, 1]),
    "histogram max_bins": lambda w: w.add_histogram("t", _R.random(100), 1, bins=50, max_bins=5),
    "histogram_raw NumPy": lambda w: w.add_histogram_raw(
        "t",
        np.float32(0),
        np.float32(3),
        np.int64(4),
        6.0,
        14.0,
        np.array([1, 2, 3]),
        np.array([1, 2, 1]),
        1,
    ),
    # images
    "image HW": lambda w: w.add_image("t", _R.random((8, 8)), 1, dataformats="HW"),
    "image WH": lambda w: w.add_image("t", _R.random((8, 6)), 1, dataformats="WH"),
    "image lower-case chw": lambda w: w.add_image("t", _IMG, 1, dataformats="chw"),
    "image bool": lambda w: w.add_image("t", np.ones((3, 8, 8), bool), 1),
    "image int64": lambda w: w.add_image("t", np.ones((3, 8, 8), np.int64), 1),
    "image list": lambda w: w.add_image("t", [[0.1, 0.2], [0.3, 0.4]], 1, dataformats="HW"),
    "image 2 channels": lambda w: w.add_image("t", _R.random((2, 8, 8)), 1),
    "image NCHW": lambda w: w.add_image("t", _R.random((1, 3, 8, 8)), 1, dataformats="NCHW"),
    "images NHWC": lambda w: w.add_images("t", _R.random((2, 8, 8, 3)), 1, dataformats="NHWC"),
    "images one CHW image": lambda w: w.add_images("t", _IMG, 1, dataformats="CHW"),
    "images one HWC image": lambda w: w.add_images("t", _IMG.T, 1, dataformats="HWC"),
    "images one HW image": lambda w: w.add_images("t", _IMG[0], 1, dataformats="HW"),
    # text, scalars, PR curves, embeddings, video, mesh, hparams, boxes, custom scalars
    "text np.str_": lambda w: w.add_text("t", np.str_("hi"), 1),
    "scalars NumPy values": lambda w: w.add_scalars(
        "m", {"a": np.float32(1), "b": np.array(2.0)}, 1
    ),
    "pr_curve bool labels": lambda w: w.add_pr_curve(
        "t", np.array([True, False, True]), np.array([0.1, 0.5, 0.9]), 1
    ),
    "pr_curve lists": lambda w: w.add_pr_curve("t", [1, 0, 1], [0.1, 0.5, 0.9], 1),
    "pr_curve 2-D": lambda w: w.add_pr_curve(
        "t", np.array([[1, 0], [1, 0]]), np.array([[0.1, 0.5], [0.9, 0.2]]), 1
    ),
    "pr_curve weights": lambda w: w.add_pr_curve(
        "t", [1, 0, 1], [0.1, 0.5, 0.9], 1, weights=[1, 2, 1]
    ),
    "pr_curve float num_thresholds": lambda w: w.add_pr_curve(
        "t", [1, 0, 1], [0.1, 0.5, 0.9], 1, num_thresholds=10.0
    ),
    "embedding list metadata": lambda w: w.add_embedding(_R.random((3, 4)), metadata=[1, 2, 3]),
    "embedding columns": lambda w: w.add_embedding(
        _R.random((3, 4)), metadata=[["a", "1"], ["b", "2"], ["c", "3"]], metadata_header=["x", "y"]
    ),
    "embedding label_img": lambda w: w.add_embedding(
        _R.random((3, 4)), label_img=_R.random((3, 3, 4, 4))
    ),
    "embedding list mat": lambda w: w.add_embedding([[1.0, 2.0], [3.0, 4.0]]),
    "embedding int mat": lambda w: w.add_embedding(np.arange(6).reshape(3, 2)),
    "video uint8": lambda w: w.add_video(
        "t", (_R.random((1, 2, 3, 8, 8)) * 255).astype(np.uint8), 1
    ),
    "video one channel": lambda w: w.add_video("t", _R.random((1, 2, 1, 8, 8)), 1),
    "video float fps": lambda w: w.add_video("t", _R.random((1, 2, 3, 8, 8)), 1, fps=2.5),
    "mesh": lambda w: w.add_mesh("t", _R.random((1, 4, 3)), global_step=1),
    "mesh 2-D vertices": lambda w: w.add_mesh("t", _R.random((4, 3)), global_step=1),
    "hparams NumPy": lambda w: w.add_hparams({"lr": np.float32(0.1), "n": np.int64(3)}, {"m": 1.0}),
    "hparams None": lambda w: w.add_hparams({"lr": None}, {"m": 1.0}),
    "hparams list value": lambda w: w.add_hparams({"lr": [1, 2]}, {"m": 1.0}),
    "hparams callable value": lambda w: w.add_hparams({"act": np.tanh}, {"m": 1.0}),
    "hparams 0-d metric": lambda w: w.add_hparams({"lr": 0.1}, {"m": np.array(1.0)}),
    "boxes list": lambda w: w.add_image_with_boxes("t", _IMG, [[0, 0, 4, 4]], 1),
    "boxes labels": lambda w: w.add_image_with_boxes(
        "t", _IMG, np.array([[0, 0, 4, 4]]), 1, labels=["x"]
    ),
    "boxes none": lambda w: w.add_image_with_boxes("t", _IMG, np.zeros((0, 4)), 1),
    "custom scalars tuples": lambda w: w.add_custom_scalars({"c": {"t": ("Multiline", ("a",))}}),
}

#: Forms tensorboardX takes that we refuse, each with the reason.
REFUSED_ON_PURPOSE = {
    # np.histogram of complex values drops the imaginary parts with a ComplexWarning.
    "histogram complex": "a histogram of complex values would silently drop their imaginary parts",
}


def _outcome(writer_class: Any, logdir: Path, call: Callable[[Any], Any]) -> Exception | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        writer = writer_class(str(logdir))
        try:
            call(writer)
        except Exception as exc:
            return exc
        finally:
            # Closed here even after a failed call: tensorboardX's writer left open fails in its
            # atexit hook on Python 3.12+ (it starts a queue thread at interpreter shutdown).
            writer.close()
    return None


def _writers(library: str) -> tuple[Any, Any]:
    """(the library's SummaryWriter, ours of its flavour)."""
    if library == "torch":
        pytest.importorskip("torch")
        tensorboard = pytest.importorskip("torch.utils.tensorboard")
        return tensorboard.SummaryWriter, SummaryWriter
    return pytest.importorskip("tensorboardX").SummaryWriter, TensorboardXSummaryWriter


@pytest.mark.parametrize(
    "library", ["tensorboardX", pytest.param("torch", marks=pytest.mark.torch)]
)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_form_the_library_takes_is_taken(tmp_path: Path, library: str, name: str) -> None:
    their_class, our_class = _writers(library)
    theirs = _outcome(their_class, tmp_path / "theirs", CALLS[name])
    ours = _outcome(our_class, tmp_path / "ours", CALLS[name])
    if ours is not None:
        assert isinstance(ours, (TypeError, ValueError)), repr(ours)
    if theirs is None and name not in REFUSED_ON_PURPOSE:
        assert ours is None, f"{library} takes it, we raise {ours!r}"
    if name in REFUSED_ON_PURPOSE and library == "tensorboardX":
        assert theirs is None and ours is not None, "no longer a deliberate difference"
