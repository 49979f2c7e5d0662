"""The same data gets the same answer from every front end (issue 13, items 11-13).

For each kind of data (scalars, histograms, images, audio, tensors) and each dtype, byte order,
memory layout and array subclass, every function of the three APIs that takes that kind either
accepts it, or refuses it with a ``TypeError``/``ValueError`` naming the tag; and all functions
of one kind agree. Extension floats (ml_dtypes ``bfloat16``, ``float8_*``: JAX's, and torch's
bfloat16 through them) are accepted everywhere. Documented exception, as TensorFlow does: TF2
and TF1 image summaries refuse ``bool`` images, which tensorboardX's ``add_image`` accepts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, v1

ml_dtypes = pytest.importorskip("ml_dtypes")

TAG = "probe_tag"


def _with_tf2(call: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with npsummary.create_file_writer(MemorySink()).as_default(step=1):
            return call()

    return run


def calls(kind: str, make: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
    """Every public function taking data of ``kind``, applied to ``make()``."""
    w = SummaryWriter(MemorySink())
    if kind == "scalar":
        return {
            "add_scalar": lambda: w.add_scalar(TAG, make(), 1),
            "add_scalars": lambda: w.add_scalars(TAG, {"k": make()}, 1),
            "scalar": _with_tf2(lambda: npsummary.scalar(TAG, make())),
            "v1.scalar": lambda: v1.scalar(TAG, make()),
        }
    if kind == "histogram":
        return {
            "add_histogram": lambda: w.add_histogram(TAG, make(), 1),
            "histogram": _with_tf2(lambda: npsummary.histogram(TAG, make())),
            "v1.histogram": lambda: v1.histogram(TAG, make()),
        }
    if kind == "image":  # make() gives [N, H, W, C]
        return {
            "add_image": lambda: w.add_image(TAG, make()[0], 1, dataformats="HWC"),
            "add_images": lambda: w.add_images(TAG, make(), 1, dataformats="NHWC"),
            "image": _with_tf2(lambda: npsummary.image(TAG, make())),
            "v1.image": lambda: v1.image(TAG, make()),
        }
    if kind == "audio":  # make() gives [N, T, C]
        return {
            "add_audio": lambda: w.add_audio(TAG, _mono(make())[0], 1),
            "audio": _with_tf2(lambda: npsummary.audio(TAG, make(), 8000)),
            "v1.audio": lambda: v1.audio(TAG, _mono(make()), 8000),
        }
    return {
        "write": _with_tf2(lambda: npsummary.write(TAG, make())),
        "v1.tensor_summary": lambda: v1.tensor_summary(TAG, make()),
    }


def _mono(clips: Any) -> Any:
    """``clips[:, :, 0]`` of an array or of nested lists, keeping its kind."""
    if isinstance(clips, list):
        return [[frame[0] for frame in clip] for clip in clips]
    return clips[:, :, 0]


def outcome(call: Callable[[], Any]) -> str:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NaN warnings etc. are not the point here
            call()
    except (TypeError, ValueError) as exc:
        assert TAG in str(exc), f"the error does not name the tag: {exc}"
        return "refused"
    return "accepted"


def base(kind: str) -> np.ndarray:
    return {
        "scalar": np.array(0.5),
        "histogram": np.linspace(-1, 1, 24).reshape(4, 6),
        "image": np.linspace(0, 1, 2 * 4 * 6 * 3).reshape(2, 4, 6, 3),
        "audio": np.linspace(-0.5, 0.5, 2 * 16).reshape(2, 16, 1),
        "tensor": np.linspace(-1, 1, 12).reshape(3, 4),
    }[kind]


DTYPES = [
    "float16",
    "float32",
    "float64",
    "longdouble",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    ">f4",
    ">f8",
    ">i4",
    "<f4",
    "bfloat16",
    "float8_e4m3fn",
    "float8_e5m2",
    "timedelta64[s]",
    "datetime64[s]",
    "complex64",
    "object",
]


def convert(array: np.ndarray, dtype: str) -> np.ndarray:
    dt = np.dtype(getattr(ml_dtypes, dtype)) if hasattr(ml_dtypes, dtype) else np.dtype(dtype)
    out: np.ndarray
    if dt.kind in "mM":
        out = (array * 10).astype(np.int64).astype(dt)
    elif dt.kind in "iu":
        out = (np.abs(array) * 100).astype(dt)
    else:
        out = array.astype(dt)
    return out


KINDS = ["scalar", "histogram", "image", "audio", "tensor"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_every_front_end_agrees_on_each_dtype(kind: str, dtype: str) -> None:
    results = {
        name: outcome(call)
        for name, call in calls(kind, lambda: convert(base(kind), dtype)).items()
    }
    if kind == "image" and dtype == "bool":  # TensorFlow refuses bool images; tensorboardX not
        assert results == {
            "add_image": "accepted",
            "add_images": "accepted",
            "image": "refused",
            "v1.image": "refused",
        }
        return
    if kind == "image" and np.dtype(dtype).kind in "iu" and dtype != "uint8":
        # TF1's image summary takes uint8 or float images only (its documented contract).
        assert results.pop("v1.image") == "refused"
    if kind == "scalar" and dtype == "bool":
        # TF1's scalar op takes real numeric dtypes only (tensorboardX and tf.summary: 0/1).
        assert results.pop("v1.scalar") == "refused"
    assert len(set(results.values())) == 1, results
    expected_refused = dtype in ("timedelta64[s]", "datetime64[s]", "complex64", "object")
    if kind in ("scalar", "histogram") and dtype == "object":
        expected_refused = False  # numbers in an object array: tensorboardX and torch take them
    if kind == "tensor" and dtype == "complex64":
        expected_refused = False  # a tensor may hold complex numbers
    if kind == "tensor" and dtype == "longdouble":
        expected_refused = True  # no TensorFlow dtype holds it
    assert set(results.values()) == {"refused" if expected_refused else "accepted"}, results


LAYOUTS: dict[str, Callable[[np.ndarray], Any]] = {
    "fortran": np.asfortranarray,
    "strided": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "reversed": lambda a: a[::-1],
    "readonly": lambda a: _readonly(a),
    "masked": lambda a: np.ma.masked_array(a, mask=np.zeros(a.shape, bool)),
    "list": lambda a: a.tolist(),
    "0-strided": lambda a: np.broadcast_to(a.reshape(-1)[:1], a.shape) if a.size else a,
}


def _readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("kind", KINDS)
def test_every_front_end_accepts_each_layout(kind: str, layout: str) -> None:
    data = base(kind).reshape(1) if kind == "scalar" else base(kind)  # a size-1 array
    results = {
        name: outcome(call) for name, call in calls(kind, lambda: LAYOUTS[layout](data)).items()
    }
    if kind == "scalar":  # TF1's ScalarSummary takes shape [] only ("not the same shape")
        assert results.pop("v1.scalar") == "refused"
    assert set(results.values()) == {"accepted"}, results


def test_numpy_matrix_scalar_is_a_scalar() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        one = np.matrix([[0.5]])
    results = {name: outcome(call) for name, call in calls("scalar", lambda: one).items()}
    assert results.pop("v1.scalar") == "refused"  # shape [1, 1]: TF1's ScalarSummary refuses
    assert set(results.values()) == {"accepted"}, results


@pytest.mark.parametrize(
    "value", [np.timedelta64(3, "s"), np.datetime64(3, "s")], ids=["timedelta", "datetime"]
)
def test_dates_and_durations_are_refused_naming_the_tag(value: Any) -> None:
    w = SummaryWriter(MemorySink())
    calls: tuple[Callable[[], object], ...] = (
        lambda: w.add_scalar(TAG, 1.0, value),
        lambda: w.add_scalar(TAG, value, 1),
        lambda: w.add_histogram(TAG, np.array([value] * 3), 1),
    )
    for call in calls:
        with pytest.raises(TypeError, match=TAG):
            call()


def test_overflowing_numbers_are_value_errors_naming_the_tag() -> None:
    w = SummaryWriter(MemorySink())
    with pytest.raises(ValueError, match=TAG):
        w.add_scalar(TAG, 1.0, 1, walltime=10**400)
    with pytest.raises(ValueError, match=TAG):
        v1.audio(TAG, np.zeros((1, 10)), sample_rate=float("inf"))
    # A sum beyond float64 saturates to inf (as a float64 sum would), never OverflowError.
    w.add_histogram_raw(TAG, 0, 1, 2, 2**1024, 1, [0.5, 1.0], [1, 1], 1)
