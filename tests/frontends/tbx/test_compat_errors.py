"""Bad input raises an exception that is npsummary's TypeError/ValueError AND the type tensorboardX
and torch raise for the same call, so code catching theirs keeps working (issue 21, item 1).

``CASES`` records, for each call, the type tensorboardX 2.6.5 and torch 2.13 raise (read from
their sources; ``None``: that library accepts the input or has no such method). Where the library
is installed, the same call is made on its writer and the recorded type is checked, so the table
cannot go stale; npsummary's error must be an instance of every recorded type.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter


def _nested_metadata(writer: Any, _tensor: Any) -> None:
    with writer.use_metadata(global_step=1), writer.use_metadata(global_step=2):
        pass


def _empty_metadata(writer: Any, _tensor: Any) -> None:
    with writer.use_metadata():
        pass


# A call takes the writer and the function turning an array into the library's tensor (torch
# reads label_img with torch.Tensor methods).
Call = Callable[[Any, Callable[[np.ndarray], Any]], Any]
_MAT = np.zeros((4, 3), dtype=np.float32)

# name -> (call, npsummary's documented type, tensorboardX's type, torch's type)
# A list or tuple of several numbers stays a ValueError (its documented type, and what TF says
# for a non-scalar); a dict or another object is a TypeError.
CASES: dict[str, tuple[Call, type, type | None, type | None]] = {
    "scalar list of two": (
        lambda w, t: w.add_scalar("s", [0.5, 0.25], 0),
        ValueError,
        AssertionError,
        NotImplementedError,
    ),
    "scalar tuple": (
        lambda w, t: w.add_scalar("s", (0.5, 0.25), 0),
        ValueError,
        NotImplementedError,
        NotImplementedError,
    ),
    "scalar dict": (
        lambda w, t: w.add_scalar("s", {"a": 0.5}, 0),
        TypeError,
        NotImplementedError,
        NotImplementedError,
    ),
    "scalar object": (
        lambda w, t: w.add_scalar("s", object(), 0),
        TypeError,
        NotImplementedError,
        NotImplementedError,
    ),
    "scalar array of three": (
        lambda w, t: w.add_scalar("s", np.zeros(3), 0),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "embedding non-square label_img": (
        lambda w, t: w.add_embedding(_MAT, label_img=t(np.zeros((4, 3, 8, 6))), global_step=0),
        ValueError,
        AssertionError,
        ValueError,  # torch: its sprite cannot be reshaped
    ),
    "embedding label_img count": (
        lambda w, t: w.add_embedding(_MAT, label_img=t(np.zeros((3, 3, 8, 8))), global_step=0),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "embedding metadata count": (
        lambda w, t: w.add_embedding(_MAT, metadata=["a", "b", "c"], global_step=0),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "embedding header width": (
        lambda w, t: w.add_embedding(
            _MAT, metadata=[["a", "b"]] * 4, metadata_header=["x"], global_step=0
        ),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "embedding mat 3-D": (
        lambda w, t: w.add_embedding(np.zeros((4, 3, 2)), global_step=0),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "margin chart of two tags": (
        lambda w, t: w.add_custom_scalars_marginchart(["a", "b"]),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "margin chart in a layout": (
        lambda w, t: w.add_custom_scalars({"c": {"t": ["Margin", ["a", "b"]]}}),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "dataformats shorter than the image": (
        lambda w, t: w.add_image("i", np.zeros((3, 8, 8)), 0, dataformats="HW"),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "dataformats with a repeated letter": (
        lambda w, t: w.add_image("i", np.zeros((8, 8)), 0, dataformats="HH"),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "audio of three dimensions": (
        lambda w, t: w.add_audio("a", np.zeros((2, 2, 10)), 0),
        ValueError,
        AssertionError,
        AssertionError,
    ),
    "hparams value of no supported type": (
        lambda w, t: w.add_hparams({"layers": [1, 2]}, {"m": 1.0}),
        TypeError,
        None,  # tensorboardX records the hparam with DATA_TYPE_UNSET
        ValueError,
    ),
    "hparams not a dict": (
        lambda w, t: w.add_hparams("lr", {"m": 1.0}),
        TypeError,
        TypeError,
        TypeError,
    ),
    "histogram_raw of mismatched lengths": (
        lambda w, t: w.add_histogram_raw("h", 0, 1, 2, 1.0, 1.0, [0.5, 1.0], [2], 0),
        ValueError,
        ValueError,
        ValueError,
    ),
    "use_metadata nested": (_nested_metadata, RuntimeError, AssertionError, None),
    "use_metadata without step or walltime": (_empty_metadata, ValueError, AssertionError, None),
}


def _anchor_writer(module_name: str, logdir: str) -> tuple[Any, Callable[[np.ndarray], Any]]:
    if module_name == "torch":
        torch = pytest.importorskip("torch")
        module = pytest.importorskip("torch.utils.tensorboard")
        return module.SummaryWriter(logdir), torch.from_numpy
    module = pytest.importorskip(module_name)
    return module.SummaryWriter(logdir), np.asarray


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # The anchors print or warn on the way (tensorboardX's check_nan, torch's deprecations).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("name", sorted(CASES))
def test_npsummary_raises_both_types(name: str, tmp_path: Any) -> None:
    call, ours, tbx_type, torch_type = CASES[name]
    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(ours) as raised:
            call(writer, np.asarray)
        for anchor_type in (tbx_type, torch_type):
            if anchor_type is not None:
                assert isinstance(raised.value, anchor_type), (name, anchor_type, raised.value)
        writer.add_scalar("still/usable", 1.0, 0)  # the writer stays usable


@pytest.mark.parametrize("library", ["tensorboardX", "torch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_types_are_the_anchors(library: str, name: str, tmp_path: Any) -> None:
    call, _ours, tbx_type, torch_type = CASES[name]
    expected = tbx_type if library == "tensorboardX" else torch_type
    writer, tensor = _anchor_writer(library, str(tmp_path))
    try:
        with _quiet():
            if expected is None:
                with contextlib.suppress(AttributeError):  # no such method in this library
                    call(writer, tensor)
                return
            try:
                with pytest.raises(expected):
                    call(writer, tensor)
            except ModuleNotFoundError as exc:  # tensorboardX's audio imports soundfile first
                pytest.skip(f"{library} needs {exc.name} for this call")
    finally:
        writer.close()


def test_skorch_style_catch_skips_a_list(tmp_path: Any) -> None:
    # skorch's TensorBoard callback: `except NotImplementedError: pass` around add_scalar.
    with SummaryWriter(str(tmp_path)) as writer:
        logged: list[object] = []
        for value in (0.5, [0.1, 0.2], {"a": 1}, 0.25):
            try:
                writer.add_scalar("loss", value, len(logged))  # type: ignore[arg-type]
                logged.append(value)
            except NotImplementedError:
                pass
    assert logged == [0.5, 0.25]
