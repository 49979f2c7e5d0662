"""The API boundary: user objects whose conversion hooks raise, in the data and in every argument.

Whatever a user's ``__array__``, ``__float__``, ``__index__``, ``__len__``/``__getitem__`` or
``__iter__`` raises, the public functions raise a TypeError that names the tag and the argument,
write nothing, and leave the writer usable (issue 15).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import npsummary
from npsummary import MemorySink, SummaryWriter, v1
from npsummary._common.convert import _describe, as_array, as_list, as_real_array, to_float, to_step


class Boom(Exception):
    """Not a TypeError, ValueError or RuntimeError: the boundary must not care which."""


def _hostile(*hooks: str) -> Any:
    def raiser(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise Boom("the user's hook failed")

    return type("Hostile", (), {hook: raiser for hook in hooks})()


HOSTILE = {
    "__array__": _hostile("__array__"),
    "__float__": _hostile("__float__"),
    "__index__": _hostile("__index__"),
    "__len__": _hostile("__len__", "__getitem__"),
    "__iter__": _hostile("__iter__"),
    "__repr__": _hostile("__array__", "__repr__"),
}

_RAMP = np.linspace(-1.0, 1.0, 11)


def _writer_call(method: str, **kwargs: Any) -> Callable[[SummaryWriter, Any], Any]:
    def call(w: SummaryWriter, x: Any) -> Any:
        return getattr(w, method)(**{k: (x if v is None else v) for k, v in kwargs.items()})

    return call


# (argument named in the error, call(writer, hostile object))
WRITER_ARGUMENTS: dict[str, tuple[str, Callable[[SummaryWriter, Any], Any]]] = {
    "add_histogram(bins)": ("bins", lambda w, x: w.add_histogram("my_tag", _RAMP, 0, bins=x)),
    "add_histogram(bins=[edges])": (
        "bins",
        lambda w, x: w.add_histogram("my_tag", _RAMP, 0, bins=[-1.0, x, 1.0]),
    ),
    "add_histogram(max_bins)": (
        "max_bins",
        lambda w, x: w.add_histogram("my_tag", _RAMP, 0, bins=10, max_bins=x),
    ),
    "add_histogram(tensorflow, max_bins)": (
        "max_bins",
        lambda w, x: w.add_histogram("my_tag", _RAMP, 0, max_bins=x),
    ),
    "add_distribution(buckets)": (
        "buckets",
        lambda w, x: w.add_distribution("my_tag", _RAMP, 0, buckets=x),
    ),
    "add_histogram_raw(min)": (
        "min",
        lambda w, x: w.add_histogram_raw("my_tag", x, 1, 2, 1, 1, [1.0], [2.0], 0),
    ),
    "add_histogram_raw(bucket_limits)": (
        "bucket_limits",
        lambda w, x: w.add_histogram_raw("my_tag", 0, 1, 2, 1, 1, x, [2.0], 0),
    ),
    "add_histogram_raw(bucket_counts)": (
        "bucket_counts",
        lambda w, x: w.add_histogram_raw("my_tag", 0, 1, 2, 1, 1, [1.0], x, 0),
    ),
    "add_scalar(global_step)": ("step", lambda w, x: w.add_scalar("my_tag", 1.0, x)),
    "add_scalar(walltime)": ("walltime", lambda w, x: w.add_scalar("my_tag", 1.0, 0, x)),
}


def _tf2(call: Callable[[Any], Any]) -> Callable[[SummaryWriter, Any], Any]:
    def run(_: SummaryWriter, x: Any) -> Any:
        with npsummary.create_file_writer(MemorySink()).as_default(step=0):
            return call(x)

    return run


OTHER_ARGUMENTS: dict[str, tuple[str, Callable[[SummaryWriter, Any], Any]]] = {
    "tf2.histogram(buckets)": (
        "buckets",
        _tf2(lambda x: npsummary.histogram("my_tag", _RAMP, buckets=x)),
    ),
    "tf2.distribution(buckets)": (
        "buckets",
        _tf2(lambda x: npsummary.distribution("my_tag", _RAMP, buckets=x)),
    ),
    "tf2.scalar(step)": ("step", _tf2(lambda x: npsummary.scalar("my_tag", 1.0, step=x))),
    "tf2.write_raw_pb(tensor)": (
        "tensor",
        _tf2(lambda x: npsummary.experimental.write_raw_pb(x, name="my_tag")),
    ),
    "v1.merge(inputs)": ("inputs", lambda _, x: v1.merge(x, name="my_tag")),
    "v1.audio(sample_rate)": (
        "sample_rate",
        lambda _, x: v1.audio("my_tag", np.zeros((1, 4, 1), np.float32), x),
    ),
}


# The hook each argument is converted through: when that one raises, the error is chained to it.
PROTOCOL = {
    "bins": "__array__",
    "bucket_limits": "__array__",
    "bucket_counts": "__array__",
    "max_bins": "__index__",
    "buckets": "__index__",
    "step": "__index__",
    "min": "__float__",
    "walltime": "__float__",
    "sample_rate": "__float__",
    "tensor": "__iter__",
    "inputs": "__iter__",
}


def _applicable(argument: str, hook: str) -> bool:
    """Hostile objects worth trying for an argument: all of them for array-likes and counts,
    the number protocols for numbers, the sequence protocols for sequences."""
    if argument in ("step", "walltime"):
        return hook == PROTOCOL[argument]
    if argument in ("tensor", "inputs"):
        return hook in ("__iter__", "__len__")
    if argument in ("min", "sample_rate"):
        return hook in ("__array__", "__float__", "__repr__")
    return True


def _causes(exc: BaseException | None) -> list[BaseException]:
    out = []
    while exc is not None:
        out.append(exc)
        exc = exc.__cause__
    return out


CASES = [
    pytest.param(name, argument, call, hook, id=f"{name}-{hook}")
    for name, (argument, call) in {**WRITER_ARGUMENTS, **OTHER_ARGUMENTS}.items()
    for hook in HOSTILE
    if _applicable(argument, hook)
]


@pytest.mark.parametrize(("name", "argument", "call", "hook"), CASES)
def test_a_raising_hook_in_an_argument_is_a_type_error_naming_tag_and_argument(
    name: str, argument: str, call: Callable[[SummaryWriter, Any], Any], hook: str
) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    before = len(sink.payloads)
    with pytest.raises(TypeError, match="my_tag") as info:
        call(writer, HOSTILE[hook])
    assert argument in str(info.value)
    if hook == PROTOCOL[argument]:
        assert any(isinstance(e, Boom) for e in _causes(info.value)), "the cause is chained"
    assert len(sink.payloads) == before, "a refused call wrote nothing"
    writer.add_scalar("probe", 1.0, 0)
    assert len(sink.payloads) == before + 1, "the writer stays usable"


def test_issue_15_reproducer() -> None:
    class Lying:
        def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
            raise RuntimeError("no")

    w = SummaryWriter(MemorySink())
    with pytest.raises(TypeError, match=r"'t'.*bins"):
        w.add_histogram("t", np.random.default_rng(0).standard_normal(100), 0, bins=Lying())


@pytest.mark.parametrize("hook", ["__array__", "__float__"])
def test_raising_hook_in_the_data_is_a_type_error(hook: str) -> None:
    for call in (
        lambda x: SummaryWriter(MemorySink()).add_scalar("my_tag", x, 0),
        lambda x: SummaryWriter(MemorySink()).add_histogram("my_tag", x, 0),
        lambda x: v1.scalar("my_tag", x),
        lambda x: _tf2(lambda y: npsummary.scalar("my_tag", y))(SummaryWriter(MemorySink()), x),
    ):
        with pytest.raises(TypeError, match="my_tag"):
            call(HOSTILE[hook])


# -- the helpers themselves -----------------------------------------------------------------------


def test_as_real_array_converts_object_elements_at_the_boundary() -> None:
    class Real:
        def __float__(self) -> float:
            return 0.5

    edges = as_real_array([0, Real(), 2**70], "t", "bins")  # NumPy makes an object array
    assert edges.dtype == np.float64 and edges.tolist() == [0.0, 0.5, 2.0**70]
    ints = as_real_array([0, 1, 2], "t", "bins")
    assert ints.dtype.kind == "i"
    with pytest.raises(TypeError, match=r"'t': bins: cannot convert .* real numbers: Boom"):
        as_real_array([1.0, HOSTILE["__float__"]], "t", "bins")


def test_helpers_name_tag_and_argument() -> None:
    with pytest.raises(TypeError, match="'t': edges: cannot convert"):
        as_array(HOSTILE["__array__"], "t", "edges")
    with pytest.raises(TypeError, match="'t': items: cannot convert"):
        as_list(HOSTILE["__iter__"], "t", "items")
    with pytest.raises(TypeError, match="'t'"):
        to_float(HOSTILE["__float__"], "t")
    with pytest.raises(TypeError, match=r"'t'.*step"):
        to_step(HOSTILE["__index__"], "t")


def test_describe_never_raises() -> None:
    assert _describe(HOSTILE["__repr__"]) == "a Hostile object"
    assert _describe(np.zeros((2, 3))) == "ndarray of shape (2, 3)"


# -- array dtypes: every front end refuses what is no real number, in the one wording ------------

TAG = "dtype_tag"
_BITS = np.arange(24) % 2  # 0/1: valid labels, pixels, samples and vertices for every call


def _dtype_array(name: str) -> np.ndarray:
    """24 values of ``_BITS`` in the dtype ``name``."""
    if name == "bfloat16":
        return _BITS.astype(pytest.importorskip("ml_dtypes").bfloat16)
    return {
        "object": _BITS.astype(object),  # numbers in an object array
        "object of str": np.array(["a"] * 24, dtype=object),
        "V8": np.zeros(24, "V8"),
        "structured": np.zeros(24, [("a", "f4"), ("b", "i4")]),
        "str": np.array(["ab"] * 24),
        "bytes": np.array([b"ab"] * 24),
        "datetime64": _BITS.astype("M8[s]"),
        "timedelta64": _BITS.astype("m8[s]"),
        "complex": _BITS.astype(np.complex64),
        "bool": _BITS.astype(bool),
        "float16": _BITS.astype(np.float16),
    }[name]


#: Dtypes holding no real numbers: refused with a TypeError by every call below.
NOT_REAL = ("object of str", "V8", "structured", "str", "bytes", "datetime64", "timedelta64")
DTYPES = (*NOT_REAL, "complex", "object", "bool", "float16", "bfloat16")


def _in_tf2(call: Callable[[np.ndarray], Any]) -> Callable[[SummaryWriter, np.ndarray], Any]:
    def run(_: SummaryWriter, x: np.ndarray) -> Any:
        with npsummary.create_file_writer(MemorySink()).as_default(step=1):
            return call(x)

    return run


def _first(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1)[:1].reshape(())


# Every public call that takes an array of numbers, given the array (reshaped as it needs).
NUMERIC_CALLS: dict[str, Callable[[SummaryWriter, np.ndarray], Any]] = {
    "add_scalar": lambda w, x: w.add_scalar(TAG, _first(x), 1),
    "add_scalars": lambda w, x: w.add_scalars(TAG, {"k": _first(x)}, 1),
    "add_histogram": lambda w, x: w.add_histogram(TAG, x, 1),
    "add_histogram(bins=5)": lambda w, x: w.add_histogram(TAG, x, 1, bins=5),
    "add_histogram(bins='fd')": lambda w, x: w.add_histogram(TAG, x, 1, bins="fd"),
    "add_distribution": lambda w, x: w.add_distribution(TAG, x, 1),
    "add_variable_summaries": lambda w, x: w.add_variable_summaries(TAG, x, 1),
    "add_histogram_raw(bucket_limits)": lambda w, x: w.add_histogram_raw(
        TAG, 0, 1, 2, 1, 1, np.sort(x.reshape(-1)[:2]), [1, 1], 1
    ),
    "add_image": lambda w, x: w.add_image(TAG, x.reshape(4, 6, 1), 1, dataformats="HWC"),
    "add_images": lambda w, x: w.add_images(TAG, x.reshape(1, 4, 6, 1), 1, dataformats="NHWC"),
    "add_filters": lambda w, x: w.add_filters(TAG, x.reshape(2, 3, 1, 4), 1),
    "add_feature_maps": lambda w, x: w.add_feature_maps(TAG, x.reshape(1, 2, 3, 4), 1),
    "add_video": lambda w, x: w.add_video(TAG, x.reshape(1, 2, 1, 3, 4), 1),
    "add_image_with_boxes(img_tensor)": lambda w, x: w.add_image_with_boxes(
        TAG, x.reshape(1, 4, 6), np.array([[0, 0, 1, 1.0]]), 1
    ),
    "add_image_with_boxes(box_tensor)": lambda w, x: w.add_image_with_boxes(
        TAG, np.zeros((3, 4, 6)), x.reshape(-1)[:4].reshape(1, 4), 1
    ),
    "add_mesh(vertices)": lambda w, x: w.add_mesh(TAG, x.reshape(1, 8, 3), global_step=1),
    "add_mesh(colors)": lambda w, x: w.add_mesh(
        TAG, np.zeros((1, 8, 3)), colors=x.reshape(1, 8, 3), global_step=1
    ),
    "add_mesh(faces)": lambda w, x: w.add_mesh(
        TAG, np.zeros((1, 8, 3)), faces=x.reshape(1, 8, 3), global_step=1
    ),
    "add_pr_curve(labels)": lambda w, x: w.add_pr_curve(TAG, x, np.linspace(0, 1, 24), 1),
    "add_pr_curve(predictions)": lambda w, x: w.add_pr_curve(TAG, np.ones(24), x, 1),
    "add_pr_curve_raw(true_positive_counts)": lambda w, x: w.add_pr_curve_raw(
        TAG, x.reshape(-1)[:3], *([1, 1, 1],) * 5, 1, num_thresholds=3
    ),
    "add_embedding(mat)": lambda w, x: w.add_embedding(x.reshape(4, 6), global_step=1, tag=TAG),
    "add_audio": lambda w, x: w.add_audio(TAG, x, 1),
    "tf2.scalar": _in_tf2(lambda x: npsummary.scalar(TAG, _first(x))),
    "tf2.histogram": _in_tf2(lambda x: npsummary.histogram(TAG, x)),
    "tf2.distribution": _in_tf2(lambda x: npsummary.distribution(TAG, x)),
    "tf2.image": _in_tf2(lambda x: npsummary.image(TAG, x.reshape(1, 4, 6, 1))),
    "tf2.audio": _in_tf2(lambda x: npsummary.audio(TAG, x.reshape(1, 24, 1), 8000)),
    "v1.scalar": lambda _, x: v1.scalar(TAG, _first(x)),
    "v1.histogram": lambda _, x: v1.histogram(TAG, x),
    "v1.image": lambda _, x: v1.image(TAG, x.reshape(1, 4, 6, 1)),
    "v1.audio": lambda _, x: v1.audio(TAG, x.reshape(1, 24), 8000),
}

# A refusal names the tag (v1 makes it unique: "dtype_tag_3"; add_scalars: "dtype_tag/k"), then
# what was expected: "<argument> must be <expected>, got an array of dtype <dtype>" (the one
# wording of a dtype refusal), or a scalar's "expected a real number, got ...", or, for an
# object array whose elements are no numbers, "cannot convert ... to real numbers: ...".
_REFUSAL = re.compile(
    rf"^'{TAG}(_\d+)?(/k)?': ([\w ]+: )?("
    r"[\w ]+ must be (numeric \(real numbers: [\w ,]+\)|uint8 or float), got an array of dtype "
    r"|expected a real number, got "
    r"|[\w ]+: cannot convert .* to real numbers: )"
)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(NUMERIC_CALLS))
def test_every_array_dtype_is_taken_or_refused_naming_tag_and_expectation(
    name: str, dtype: str, tmp_path: Any
) -> None:
    """No NumPy error leaks (a raw V8 array once gave ``ValueError: setting an array element
    with a sequence``): each call takes the array, or raises a TypeError/ValueError in the
    boundary's wording; what holds no real numbers is a TypeError everywhere."""
    writer = SummaryWriter(str(tmp_path))  # on disk: add_embedding writes files
    try:
        NUMERIC_CALLS[name](writer, _dtype_array(dtype))
    except (TypeError, ValueError) as exc:
        assert _REFUSAL.match(str(exc)), str(exc)
        if dtype in NOT_REAL:
            assert type(exc) is TypeError, str(exc)
        if "got an array of dtype" in str(exc):
            assert str(exc).endswith(f"got an array of dtype {_dtype_array(dtype).dtype}")
    else:
        assert dtype not in NOT_REAL, f"{name} took an array of {dtype}"
    finally:
        writer.close()
