"""Every public function and method that takes float data, with each float dtype (issue 19).

The README promises that extension floats (ml_dtypes ``bfloat16``: JAX's, and a torch bfloat16
tensor through it) are read as float32 wherever floats are accepted, and that float16, float64
and either byte order are accepted everywhere. For each callable below, every float argument
(data, weights, vertices, bucket limits, ...) is given in ``bfloat16``, ``float16``,
``float64``, big-endian ``>f4`` and ``>f8``; the call must succeed and write what the same
values in float32 or float64 write. The values are multiples of 1/8 in [-1, 1] (or small
integers), exact in every one of these dtypes, so "the same" is exact: events are compared
after their wall time is cleared and each tensor is decoded to float64 values (a float16
tensor keeps its DT_HALF, as TensorFlow's does; its values are the same).

``test_every_float_callable_is_listed`` fails when a public callable that takes array data is
added without a line here (the list of such callables is that of the option fuzzer).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, v1
from npsummary import proto as pb
from npsummary.reader._tensor import tensor_to_array

ml_dtypes = pytest.importorskip("ml_dtypes")

TAG = "float_tag"
Cast = Callable[[Any], np.ndarray]

_RAMP = np.arange(-8, 9) / 8  # 17 values, exact in bfloat16 and float16
_UNIT = np.arange(0, 9) / 8
_IMAGE = np.resize(_UNIT, 2 * 4 * 6 * 3).reshape(2, 4, 6, 3)  # NHWC in [0, 1]
_CLIPS = (np.resize(_RAMP, 2 * 16) / 2).reshape(2, 16, 1)  # [N, T, C] in [-0.5, 0.5]
_VIDEO = np.resize(_UNIT, 1 * 2 * 3 * 4 * 4).reshape(1, 2, 3, 4, 4)  # NTCHW
_BOXES = np.array([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 4.0, 3.0]])
_VERTICES = np.resize(_RAMP, 4 * 3).reshape(1, 4, 3)
_KERNEL = np.resize(_RAMP, 3 * 3 * 2 * 4).reshape(3, 3, 2, 4)  # HWIO
_LABELS = np.array([0, 1, 1, 0, 1, 0, 1, 1])
_PREDICTIONS = np.resize(_UNIT, 8)


def _writer_call(method: str, *args: Any, **kwargs: Any) -> Callable[[], list[Any]]:
    def run() -> list[Any]:
        sink = MemorySink()
        writer = SummaryWriter(sink)
        getattr(writer, method)(*args, **kwargs)
        writer.close()
        return _payloads(sink)

    return run


def _tf2_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], list[Any]]:
    def run() -> list[Any]:
        sink = MemorySink()
        writer = npsummary.create_file_writer(sink)
        with writer.as_default(step=1):
            assert function(*args, **kwargs) is True
        writer.close()
        return _payloads(sink)

    return run


def _v1_call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], list[Any]]:
    def run() -> list[Any]:
        summary = function(*args, **kwargs)
        v1.merge_all()  # v1 functions register their summary; keep the collection empty
        return [pb.Summary.FromString(summary)]

    return run


def _payloads(sink: MemorySink) -> list[Any]:
    out = list(sink.payloads)
    for name in sorted(sink.children):
        out += _payloads(sink.children[name])
    return out


def calls(cast: Cast, tmp: Path) -> dict[str, Callable[[], list[Any]]]:
    """Every public callable taking float data, its float arguments given through ``cast``."""
    ramp2d = cast(_RAMP[:16].reshape(4, 4))
    return {
        # SummaryWriter (tensorboardX / torch.utils.tensorboard)
        "add_scalar": _writer_call("add_scalar", TAG, cast(np.array(0.375)), 1, walltime=1.0),
        "add_scalar(double)": _writer_call(
            "add_scalar", TAG, cast(np.array(0.375)), 1, walltime=1.0, double_precision=True
        ),
        "add_scalar(new_style)": _writer_call(
            "add_scalar", TAG, cast(np.array(0.375)), 1, walltime=1.0, new_style=True
        ),
        "add_scalars": _writer_call(
            "add_scalars",
            TAG,
            {"a": cast(np.array(0.5)), "b": cast(np.array(-1.0))},
            1,
            walltime=1.0,
        ),
        "add_histogram": _writer_call("add_histogram", TAG, ramp2d, 1, walltime=1.0),
        "add_histogram(auto)": _writer_call(
            "add_histogram", TAG, ramp2d, 1, bins="auto", walltime=1.0
        ),
        "add_histogram(edges)": _writer_call(
            "add_histogram",
            TAG,
            ramp2d,
            1,
            bins=cast(np.array([-1.0, 0.0, 0.5, 1.0])),
            walltime=1.0,
        ),
        "add_histogram_raw": _writer_call(
            "add_histogram_raw",
            TAG,
            cast(np.array(0.0)),
            cast(np.array(2.0)),
            8,
            cast(np.array(7.0)),
            cast(np.array(9.0)),
            cast(np.array([0.5, 1.5, 2.0])),
            cast(np.array([4.0, 3.0, 1.0])),
            1,
            walltime=1.0,
        ),
        "add_distribution": _writer_call("add_distribution", TAG, ramp2d, 1, walltime=1.0),
        "add_variable_summaries": _writer_call(
            "add_variable_summaries", TAG, ramp2d, 1, walltime=1.0
        ),
        "add_image": _writer_call(
            "add_image", TAG, cast(_IMAGE[0]), 1, walltime=1.0, dataformats="HWC"
        ),
        "add_images": _writer_call(
            "add_images", TAG, cast(_IMAGE), 1, walltime=1.0, dataformats="NHWC"
        ),
        "add_filters": _writer_call("add_filters", TAG, cast(_KERNEL), 1, walltime=1.0),
        "add_feature_maps": _writer_call(
            "add_feature_maps", TAG, cast(_IMAGE), 1, walltime=1.0, dataformats="NHWC"
        ),
        "add_audio": _writer_call("add_audio", TAG, cast(_CLIPS[0, :, 0]), 1, walltime=1.0),
        "add_video": _writer_call("add_video", TAG, cast(_VIDEO), 1, fps=4, walltime=1.0),
        "add_image_with_boxes": _writer_call(
            "add_image_with_boxes",
            TAG,
            cast(_IMAGE[0]),
            cast(_BOXES),
            1,
            walltime=1.0,
            dataformats="HWC",
        ),
        "add_pr_curve": _writer_call(
            "add_pr_curve",
            TAG,
            _LABELS,
            cast(_PREDICTIONS),
            1,
            num_thresholds=9,
            weights=cast(np.resize([1.0, 0.5], 8)),
            walltime=1.0,
        ),
        "add_pr_curve(float labels)": _writer_call(
            "add_pr_curve",
            TAG,
            cast(_LABELS.astype(float)),
            cast(_PREDICTIONS),
            1,
            num_thresholds=9,
            walltime=1.0,
        ),
        "add_pr_curve_raw": _writer_call(
            "add_pr_curve_raw",
            TAG,
            cast(np.array([2.0, 1.0])),
            cast(np.array([2.0, 0.0])),
            cast(np.array([0.0, 2.0])),
            cast(np.array([0.0, 1.0])),
            cast(np.array([0.5, 1.0])),
            cast(np.array([1.0, 0.5])),
            1,
            num_thresholds=2,
            walltime=1.0,
        ),
        "add_mesh": _writer_call(
            "add_mesh",
            TAG,
            cast(_VERTICES),
            colors=cast(np.ones((1, 4, 3)) * 0.5 * 255),
            faces=np.array([[[0, 1, 2]]]),
            global_step=1,
            walltime=1.0,
        ),
        "add_tensor": _writer_call("add_tensor", TAG, ramp2d, 1, walltime=1.0),
        "add_embedding": lambda: _embedding(cast, tmp),
        "add_hparams": _writer_call(
            "add_hparams",
            {"lr": cast(np.array(0.125))},
            {"loss": cast(np.array(0.5))},
            run_name=".",
        ),
        # tf.summary
        "scalar": _tf2_call(npsummary.scalar, TAG, cast(np.array(0.375))),
        "histogram": _tf2_call(npsummary.histogram, TAG, ramp2d),
        "distribution": _tf2_call(npsummary.distribution, TAG, ramp2d),
        "image": _tf2_call(npsummary.image, TAG, cast(_IMAGE), max_outputs=2),
        "audio": _tf2_call(npsummary.audio, TAG, cast(_CLIPS), 8000),
        "write": _tf2_call(npsummary.write, TAG, ramp2d),
        # tf.compat.v1.summary
        "v1.scalar": _v1_call(v1.scalar, TAG, cast(np.array(0.375))),
        "v1.histogram": _v1_call(v1.histogram, TAG, ramp2d),
        "v1.image": _v1_call(v1.image, TAG, cast(_IMAGE), max_outputs=2),
        "v1.audio": _v1_call(v1.audio, TAG, cast(_CLIPS[:, :, 0]), 8000),
        "v1.tensor_summary": _v1_call(v1.tensor_summary, TAG, ramp2d),
    }


def _embedding(cast: Cast, tmp: Path) -> list[Any]:
    logdir = tmp / "embedding"
    writer = SummaryWriter(logdir)
    mat = cast(np.resize(_RAMP, 3 * 4).reshape(3, 4))
    writer.add_embedding(mat, label_img=cast(np.resize(_UNIT, 3 * 3 * 4 * 4).reshape(3, 3, 4, 4)),
                         tag=TAG, global_step=1)  # fmt: skip
    writer.close()
    files = sorted(p for p in logdir.rglob("*") if p.is_file() and "tfevents" not in p.name)
    return [(p.relative_to(logdir).as_posix(), p.read_bytes()) for p in files]


def _normalized(payload: Any) -> Any:
    """An event (or a v1 summary) as comparable data: no wall time, and each tensor as its
    shape and float64 values; a projector file (name, bytes) as it is."""
    if isinstance(payload, tuple):
        return payload
    if isinstance(payload, bytes):
        event = pb.Event.FromString(payload)
        summary = event.summary
    else:
        event, summary = None, payload
    if event is not None and not event.HasField("summary"):
        event.wall_time = 0
        return event.SerializeToString(deterministic=True)
    values = []
    for value in summary.value:
        decoded: Any = None
        if value.HasField("tensor"):
            array = _tensor_values(value)
            if array.dtype.kind in "biuf" or array.dtype.isbuiltin == 2:
                decoded = (array.shape, array.astype(np.float64).tolist())
            else:
                decoded = value.tensor.SerializeToString(deterministic=True)
            value.ClearField("tensor")
        values.append((value.SerializeToString(deterministic=True), decoded))
    return (None if event is None else event.step), values


def _tensor_values(value: Any) -> np.ndarray:
    """A value's tensor; torch's ``add_tensor`` stores float16 and bfloat16 in ``half_val`` as
    the bits of the value as float32 (see _summaries/torch_tensor.py)."""
    tensor = value.tensor
    torch_half = tensor.dtype in (pb.DT_HALF, pb.DT_BFLOAT16) and tensor.half_val
    if torch_half and value.metadata.plugin_data.plugin_name == "tensor":
        bits = np.asarray(tensor.half_val, np.int64).astype(np.int32)
        return bits.view(np.float32).reshape([d.size for d in tensor.tensor_shape.dim])
    return tensor_to_array(tensor)


def _cast(dtype: Any) -> Cast:
    return lambda values: np.asarray(values).astype(dtype)


VARIANTS = {
    "bfloat16": ml_dtypes.bfloat16,
    "float16": np.float16,
    "float64": np.float64,
    ">f4": ">f4",
    ">f8": ">f8",
}


def _run(call: Callable[[], list[Any]]) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [_normalized(p) for p in call()]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_float_callable_accepts_each_float_dtype(variant: str, tmp_path: Path) -> None:
    variant_calls = calls(_cast(VARIANTS[variant]), tmp_path / variant)
    float32_calls = calls(_cast(np.float32), tmp_path / "float32")
    float64_calls = calls(_cast(np.float64), tmp_path / "float64")
    failures = []
    for name, call in variant_calls.items():
        try:
            got = _run(call)
        except Exception as exc:  # collect every callable's answer before failing
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if got != _run(float32_calls[name]) and got != _run(float64_calls[name]):
            failures.append(f"{name}: writes other data than float32 and float64 do")
    assert not failures, "\n".join(failures)


# Public callables whose arguments hold no float data (or only as options, not arrays).
NO_FLOAT_DATA = {
    "add_text", "add_custom_scalars", "add_custom_scalars_multilinechart",
    "add_custom_scalars_marginchart", "set_step", "use_metadata", "add_graph", "add_figure",
    "text", "name_scope", "record_if", "flush", "trace_on", "trace_export", "graph",
    "create_file_writer", "summary_scope", "write_raw_pb", "v1.text", "v1.merge",
    "v1.merge_all", "v1.clean_tag", "v1.get_summary_description", "v1.FileWriter",
    "SummaryWriter",
}  # fmt: skip


def test_every_float_callable_is_listed(tmp_path: Path) -> None:
    from reliability.test_reliability_options import VALID_CALLS

    listed = {name.split("(")[0] for name in calls(_cast(np.float32), tmp_path)}
    missing = []
    for key, call in VALID_CALLS.items():
        if call.family not in ("writer", "tf2", "v1"):
            continue
        name = key.removeprefix("SummaryWriter.").removeprefix("npsummary.")
        name = name.removeprefix("experimental.")
        if name not in listed and name not in NO_FLOAT_DATA:
            missing.append(key)
    assert not missing, f"callables that take data but are not tested with each dtype: {missing}"


@pytest.mark.torch
@pytest.mark.parametrize("requires_grad", [False, True])
def test_torch_bfloat16_tensors_write_what_float32_writes(
    requires_grad: bool, tmp_path: Path
) -> None:
    """A torch bfloat16 tensor (which NumPy cannot hold) is read as float32 by every callable;
    ``add_tensor`` still writes it as torch does (DT_BFLOAT16, compared in the torch tests)."""
    torch = pytest.importorskip("torch")

    def bfloat16(values: Any) -> Any:
        tensor = torch.tensor(np.asarray(values, np.float32), dtype=torch.bfloat16)
        return tensor.requires_grad_(requires_grad) if tensor.is_floating_point() else tensor

    variant_calls = calls(bfloat16, tmp_path / "torch")
    float32_calls = calls(_cast(np.float32), tmp_path / "float32")
    failures = []
    for name, call in variant_calls.items():
        try:
            if _run(call) != _run(float32_calls[name]):
                failures.append(f"{name}: writes other data than float32 does")
        except Exception as exc:
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures)
