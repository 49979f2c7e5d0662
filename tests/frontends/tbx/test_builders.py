"""The module-level builders (issue 21, item 6): ``npsummary.tensorboardx_summary`` and
``npsummary.torch_summary`` return the ``Summary`` protos ``tensorboardX.summary`` and
``torch.utils.tensorboard.summary`` return, compared field by field with the libraries where they
are installed (images by decoded pixels: another PNG encoder), and ``patch()`` binds them.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from types import ModuleType
from typing import Any, cast

import numpy as np
import pytest

import npsummary
from npsummary import EventSink, MemorySink, SummaryWriter
from npsummary import tensorboardx_summary as tbx_builders
from npsummary import torch_summary as torch_builders
from npsummary._frontends.tbx.file_writer import RunFileWriter
from npsummary.proto import Event

_X = np.linspace(-1.0, 1.0, 101)
_LABELS = np.array([0, 1, 1, 0, 1])
_PREDICTIONS = np.array([0.1, 0.9, 0.6, 0.4, 0.8])
_LAYOUT = {"c": {"t": ["Multiline", ["a", "b"]], "m": ["Margin", ["v", "lo", "hi"]]}}
_HPARAMS = ({"lr": 0.1, "use_bn": True, "opt": "sgd"}, {"hp/metric": 1.0})


def _payloads(sink: EventSink) -> list[bytes]:
    """What a writer built on a MemorySink wrote (its ``sink`` property is typed EventSink)."""
    return cast(MemorySink, sink).payloads


def _file_writer(writer: SummaryWriter) -> RunFileWriter:
    """``writer.file_writer``, which is None only after ``close()``."""
    file_writer = writer.file_writer
    assert file_writer is not None
    return file_writer


def _edges() -> list[float]:
    return SummaryWriter(MemorySink()).default_bins


# name -> call(module): both libraries' builders take these arguments.
CALLS: dict[str, Callable[[Any], Any]] = {
    "scalar": lambda m: m.scalar("loss (train)", 0.5),
    "histogram default bins": lambda m: m.histogram("weights [0]", _X, _edges()),
    "histogram grouped": lambda m: m.histogram("h", _X, 10, 4),
    "histogram_raw": lambda m: m.histogram_raw("r", 0, 3, 4, 6, 14, [1, 2, 3], [1, 2, 1]),
    "text": lambda m: m.text("notes", "hello **world**"),
    "pr_curve": lambda m: m.pr_curve("pr", _LABELS, _PREDICTIONS),
    "custom_scalars": lambda m: m.custom_scalars(_LAYOUT),
    "hparams": lambda m: m.hparams(*_HPARAMS),
}


def _their_module(library: str) -> Any:
    if library == "torch":
        pytest.importorskip("torch")
        return pytest.importorskip("torch.utils.tensorboard.summary")
    return pytest.importorskip("tensorboardX.summary")


def _as_tensorboard(summary: Any) -> Any:
    summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
    return summary_pb2.Summary.FromString(summary.SerializeToString())


@pytest.mark.parametrize("library", ["tensorboardX", "torch"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_same_summary_as_the_library(library: str, name: str) -> None:
    theirs = CALLS[name](_their_module(library))
    ours = CALLS[name](tbx_builders if library == "tensorboardX" else torch_builders)
    if name == "hparams":
        assert len(ours) == len(theirs) == 3
        for mine, other in zip(ours, theirs, strict=True):
            assert _as_tensorboard(mine) == _as_tensorboard(other)
    else:
        assert _as_tensorboard(ours) == _as_tensorboard(theirs)


@pytest.mark.parametrize("library", ["tensorboardX", "torch"])
def test_image_has_the_librarys_pixels(library: str) -> None:
    pil = pytest.importorskip("PIL.Image")
    image = np.linspace(0.0, 1.0, 3 * 4 * 5).reshape(1, 3, 4, 5)
    args = (image[0], 1, "CHW") if library == "tensorboardX" else (image, 1, "NCHW")
    theirs = _their_module(library).image("img", *args).value[0].image
    builders = tbx_builders if library == "tensorboardX" else torch_builders
    ours = builders.image("img", *args).value[0].image
    assert (ours.height, ours.width, ours.colorspace) == (theirs.height, theirs.width, 3)

    def pixels(encoded: bytes) -> np.ndarray:
        with pil.open(io.BytesIO(encoded)) as png:
            return np.asarray(png)

    assert (pixels(ours.encoded_image_string) == pixels(theirs.encoded_image_string)).all()


@pytest.mark.parametrize("library", ["tensorboardX", "torch"])
@pytest.mark.parametrize(
    "extra",
    [(), (2,), (1, "CHW", ["cat", "dog"])],
    ids=["plain", "rescaled", "labelled"],
)
def test_image_boxes_has_the_librarys_pixels(library: str, extra: tuple[Any, ...]) -> None:
    pil = pytest.importorskip("PIL.Image")
    image = np.linspace(0.0, 1.0, 3 * 32 * 40).reshape(3, 32, 40)
    boxes = np.array([[10, 5, 30, 25], [2, 2, 8, 9]])
    theirs = _their_module(library).image_boxes("img box", image, boxes, *extra).value[0]
    builders = tbx_builders if library == "tensorboardX" else torch_builders
    ours = builders.image_boxes("img box", image, boxes, *extra).value[0]
    assert ours.tag == theirs.tag
    assert (ours.image.height, ours.image.width, ours.image.colorspace) == (
        theirs.image.height,
        theirs.image.width,
        theirs.image.colorspace,
    )

    def pixels(encoded: bytes) -> np.ndarray:
        with pil.open(io.BytesIO(encoded)) as png:
            return np.asarray(png)

    assert (
        pixels(ours.image.encoded_image_string) == pixels(theirs.image.encoded_image_string)
    ).all()


def test_image_boxes_bad_boxes_are_the_writers_error() -> None:
    with pytest.raises(ValueError, match="'img'"):
        torch_builders.image_boxes("img", np.zeros((3, 8, 8)), np.zeros((2, 3)))


def test_builders_feed_file_writer_add_summary() -> None:
    writer = SummaryWriter(MemorySink())
    for summary in (*torch_builders.hparams(*_HPARAMS), torch_builders.scalar("hp/metric", 1.0)):
        _file_writer(writer).add_summary(summary, global_step=3)
    events = [Event.FromString(p) for p in _payloads(writer.sink)]
    tags = [event.summary.value[0].tag for event in events]
    assert tags == [
        "_hparams_/experiment",
        "_hparams_/session_start_info",
        "_hparams_/session_end_info",
        "hp/metric",
    ]
    assert all(event.step == 3 for event in events)


def test_tensorboardx_builders_clean_tags_torch_builders_do_not() -> None:
    assert tbx_builders.scalar("a b", 1.0).value[0].tag == "a_b"
    assert torch_builders.scalar("a b", 1.0).value[0].tag == "a b"


def test_bad_input_is_the_writers_error() -> None:
    with pytest.raises(NotImplementedError):
        torch_builders.scalar("s", {"a": 1})
    with pytest.raises(TypeError, match="'s'"):
        tbx_builders.scalar("s", {"a": 1})


def test_patch_binds_the_builders_where_they_were_imported() -> None:
    summary = pytest.importorskip("tensorboardX.summary")
    original = summary.hparams
    namespace: dict[str, Any] = {"hparams": original}
    module = type(npsummary)("some_framework_module")
    module.__dict__.update(namespace)
    import sys

    sys.modules["some_framework_module"] = module
    try:
        patched = npsummary.patch()
        assert "tensorboardX.summary.hparams" in patched
        # Bound as wrappers of npsummary's builders that return tensorboardX's class.
        assert summary.hparams.__wrapped__ is tbx_builders.hparams
        assert module.hparams is summary.hparams
        assert summary.image_boxes.__wrapped__ is tbx_builders.image_boxes
        assert npsummary.patch() == []  # a second patch() wraps nothing again
        assert summary.hparams.__wrapped__ is tbx_builders.hparams
    finally:
        npsummary.unpatch()
        del sys.modules["some_framework_module"]
    assert summary.hparams is original and module.hparams is original


@pytest.mark.parametrize("builders", [tbx_builders, torch_builders], ids=["tbx", "torch"])
def test_histogram_refuses_tensorflow_bins_and_no_values_naming_the_tag(builders: Any) -> None:
    # Both libraries' module-level histogram() hand bins to np.histogram and refuse an empty
    # input ("The input has no element."); their tests expect an error for both.
    with pytest.raises(ValueError, match=r"'dummy'.*'tensorflow'"):
        builders.histogram("dummy", [1, 3, 4, 5, 6], "tensorflow")
    with pytest.raises(ValueError, match=r"'dummy'.*no values"):
        builders.histogram("dummy", np.ndarray(0), 10)
    with pytest.raises(ValueError, match="'dummy'"):
        builders.histogram("dummy", np.ndarray(0), "tensorflow")
    assert builders.histogram("dummy", [1, 3, 4, 5, 6], _edges()).value[0].histo.num == 5


def test_the_writer_keeps_tensorflow_bins_and_empty_histograms() -> None:
    writer = SummaryWriter(MemorySink())
    writer.add_histogram("h", [1.0, 2.0], 0, bins="tensorflow")
    writer.add_histogram("empty", np.zeros(0), 0)
    histos = [Event.FromString(p).summary.value[0].histo for p in _payloads(writer.sink)]
    assert [h.num for h in histos[-2:]] == [2, 0]


@pytest.mark.parametrize("builders", [tbx_builders, torch_builders], ids=["tbx", "torch"])
def test_pr_curve_builders_take_one_threshold_and_cap_at_127(builders: Any) -> None:
    def width(summary: Any) -> int:
        return int(summary.value[0].tensor.tensor_shape.dim[1].size)

    assert width(builders.pr_curve("pr", _LABELS, _PREDICTIONS, 1)) == 1
    assert width(builders.pr_curve("pr", _LABELS, _PREDICTIONS, 300)) == 127
    rows = [[3.0, 1.0]] * 6
    raw = builders.pr_curve_raw("raw", *rows, 1)
    assert width(raw) == 2  # the rows' length; num_thresholds goes into the metadata
    with pytest.raises(ValueError, match=r"'pr'.*num_thresholds"):
        builders.pr_curve("pr", _LABELS, _PREDICTIONS, 0)
    with pytest.raises(TypeError, match=r"'raw'.*num_thresholds"):
        builders.pr_curve_raw("raw", *rows, "1")
    # The writers take the same rule (tests/summaries/test_pr_curve.py).
    with pytest.raises(ValueError, match="num_thresholds"):
        SummaryWriter(MemorySink()).add_pr_curve("pr", _LABELS, _PREDICTIONS, 0, 0)


def test_torch_tensor_proto_is_add_tensors_value() -> None:
    summary = torch_builders.tensor_proto("t", np.array([1.0, 2.0, 3.0], np.float32))
    (value,) = summary.value
    assert value.tag == "t" and value.metadata.plugin_data.plugin_name == "tensor"
    assert list(value.tensor.float_val) == [1.0, 2.0, 3.0]
    writer = SummaryWriter(MemorySink())
    writer.add_tensor("t", np.array([1.0, 2.0, 3.0], np.float32), 0)
    assert Event.FromString(_payloads(writer.sink)[-1]).summary == summary
    with pytest.raises(ValueError, match="'t'"):
        torch_builders.tensor_proto("t", np.array(["a"]))


@pytest.mark.parametrize("library", ["tensorboardX", "torch"])
def test_patched_builders_return_the_librarys_summary_class(library: str) -> None:
    ours: ModuleType
    if library == "torch":
        pytest.importorskip("torch")
        module = pytest.importorskip("torch.utils.tensorboard.summary")
        ours = torch_builders
    else:
        module = pytest.importorskip("tensorboardX.summary")
        ours = tbx_builders
    their_class = module.Summary
    try:
        npsummary.patch()
        scalar = module.scalar("loss", 0.5)
        triple = module.hparams(*_HPARAMS)
        assert type(scalar) is their_class
        assert [type(s) for s in triple] == [their_class] * 3
        assert scalar.SerializeToString() == ours.scalar("loss", 0.5).SerializeToString()
        # npsummary's own modules keep npsummary's class.
        assert type(ours.scalar("loss", 0.5)) is npsummary.proto.Summary
        # The patched writer's file_writer takes the library's class.
        writer = npsummary.TensorboardXSummaryWriter(MemorySink())
        _file_writer(writer).add_summary(scalar, global_step=2)
        event = Event.FromString(_payloads(writer.sink)[-1])
        assert event.step == 2 and event.summary.value[0].simple_value == 0.5
        with pytest.raises(ValueError, match="'h'"):
            module.histogram("h", np.zeros(0), "tensorflow")
    finally:
        npsummary.unpatch()
    assert type(module.scalar("loss", 0.5)) is their_class  # the library's own again


_EVERY_RANK_CALL: dict[str, Callable[[Any], Any]] = {
    **CALLS,
    "image": lambda m: m.image("img", np.zeros((3, 4, 4)), dataformats="CHW"),
    "audio": lambda m: m.audio("snd", np.zeros(64), 8000),
    "video": lambda m: m.video("vid", np.zeros((1, 2, 3, 8, 8))),
    "mesh": lambda m: m.mesh("m", np.zeros((1, 3, 3)), None, None, None),
}


@pytest.mark.parametrize("variable", ["RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"])
@pytest.mark.parametrize("builders", [tbx_builders, torch_builders], ids=["tbx", "torch"])
@pytest.mark.parametrize("name", sorted(_EVERY_RANK_CALL))
def test_builders_return_their_summary_on_every_rank(
    monkeypatch: pytest.MonkeyPatch, variable: str, builders: Any, name: str
) -> None:
    """Builders are pure functions: on a rank whose writers are silent they still return the
    Summary, as torch's and tensorboardX's do (issue 29, item 3: IndexError before)."""

    def summaries() -> list[Any]:
        result = _EVERY_RANK_CALL[name](builders)
        return list(result) if isinstance(result, tuple) else [result]  # hparams: three

    expected = summaries()
    monkeypatch.setenv(variable, "1")
    got = summaries()
    assert [s.SerializeToString() for s in got] == [s.SerializeToString() for s in expected]
    assert all(len(s.value) >= 1 for s in got)
