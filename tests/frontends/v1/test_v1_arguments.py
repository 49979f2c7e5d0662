"""``npsummary.v1`` arguments against TF1's documented types and treatment (issue 13, item 10).

One row per argument of each ``tf.compat.v1.summary`` function: a value TF1 accepts and what TF1
makes of it, or a value TF1 refuses (its op's type or attribute constraints) and the error we
raise instead, which names the tag. Each row was checked against TF 1.15 / 2.x ``compat.v1``
semantics (``summary_op_util.summary_scope``, ``gen_logging_ops`` attribute minimums, the
``ScalarSummary``/``HistogramSummary``/``ImageSummary``/``AudioSummaryV2``/``MergeSummary``
kernels).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npsummary import proto, v1
from npsummary._frontends import context as _context


@pytest.fixture(autouse=True)
def _fresh_graph() -> None:
    _context.reset()


def values(summary: bytes) -> list[Any]:
    return list(proto.Summary.FromString(summary).value)


ACCEPTED: dict[str, tuple[Callable[[], bytes], Callable[[list[Any]], bool]]] = {
    # scalar(name, tensor, collections, family): a real number -> simple_value (float32)
    "scalar.tensor=int": (lambda: v1.scalar("s", 3), lambda v: v[0].simple_value == 3.0),
    "scalar.tensor=np.float64": (
        lambda: v1.scalar("s", np.float64(0.1)),
        lambda v: v[0].simple_value == np.float32(0.1),
    ),
    "scalar.tensor=0-d array": (
        lambda: v1.scalar("s", np.array(2, np.int16)),
        lambda v: v[0].simple_value == 2.0,
    ),
    "scalar.family": (
        lambda: v1.scalar("s", 1.0, family="fam"),
        lambda v: v[0].tag == "fam/fam/s",  # summary_scope: family/scope, scope = family/name
    ),
    "scalar.tensor=2**63-1": (  # the largest int TF1 converts (to int64), then cast to float32
        lambda: v1.scalar("s", 2**63 - 1),
        lambda v: v[0].simple_value == np.float32(2.0**63),
    ),
    "scalar.collections": (lambda: v1.scalar("s", 1.0, collections=["c"]), lambda v: len(v) == 1),
    "scalar.name=invalid chars": (lambda: v1.scalar("a b:c", 1.0), lambda v: v[0].tag == "a_b_c"),
    "scalar.name=twice": (
        lambda: v1.merge([v1.scalar("s", 1.0), v1.scalar("s", 2.0)]),
        lambda v: [x.tag for x in v] == ["s", "s_1"],  # graph op names are made unique
    ),
    # histogram(name, values, collections, family): any shape of real numbers, as doubles
    "histogram.values=int64 matrix": (
        lambda: v1.histogram("h", np.arange(6, dtype=np.int64).reshape(2, 3)),
        lambda v: (v[0].histo.num, v[0].histo.sum, v[0].histo.max) == (6.0, 15.0, 5.0),
    ),
    "histogram.family": (
        lambda: v1.histogram("h", [1.0], family="f"),
        lambda v: v[0].tag == "f/f/h",
    ),
    # image(name, tensor, max_outputs=3, collections, family)
    "image.tensor=uint8": (
        lambda: v1.image("i", np.zeros((2, 3, 4, 3), np.uint8)),
        lambda v: (
            [x.tag for x in v] == ["i/image/0", "i/image/1"]
            and (v[0].image.height, v[0].image.width, v[0].image.colorspace) == (3, 4, 3)
        ),
    ),
    "image.max_outputs=1": (
        lambda: v1.image("i", np.zeros((2, 3, 4, 1), np.float32), max_outputs=1),
        lambda v: [x.tag for x in v] == ["i/image"],
    ),
    "image.max_outputs=np.int64": (
        lambda: v1.image("i", np.zeros((3, 2, 2, 4), np.float16), max_outputs=np.int64(2)),
        lambda v: len(v) == 2 and v[0].image.colorspace == 4,
    ),
    # audio(name, tensor, sample_rate, max_outputs=3, collections, family)
    "audio.tensor=2-D": (
        lambda: v1.audio("a", np.zeros((2, 10), np.float32), 8000),
        lambda v: [x.audio.num_channels for x in v] == [1, 1],
    ),
    "audio.sample_rate=float": (
        lambda: v1.audio("a", np.zeros((1, 10, 2), np.float32), 8000.7, max_outputs=1),
        # float32 in the proto; truncated to an int in the WAV header, as the kernel does
        lambda v: (
            v[0].tag == "a/audio"
            and v[0].audio.sample_rate == np.float32(8000.7)
            and struct.unpack("<I", v[0].audio.encoded_audio_string[24:28])[0] == 8000
        ),
    ),
    "audio.sample_rate=0-d tensor": (
        lambda: v1.audio("a", np.zeros((1, 4), np.float32), np.array(16000.0)),
        lambda v: v[0].audio.sample_rate == 16000.0,
    ),
    # text(name, tensor, collections): strings of any shape, bytes kept as they are
    "text.tensor=bytes not UTF-8": (
        lambda: v1.text("t", np.array([b"a", b"\xff"])),
        lambda v: (
            list(v[0].tensor.string_val) == [b"a", b"\xff"]
            and v[0].metadata.plugin_data.plugin_name == "text"
        ),
    ),
    # tensor_summary(name, tensor, summary_description, collections, summary_metadata, family,
    # display_name): description and display name go into the (given) metadata
    "tensor_summary.all": (
        lambda: v1.tensor_summary(
            "ts",
            [1.5, 2.5],
            summary_description="desc",
            summary_metadata=proto.SummaryMetadata(display_name="old"),
            family="f",
            display_name="shown",
        ),
        lambda v: (
            v[0].tag == "f/f/ts"
            and v[0].metadata.summary_description == "desc"
            and v[0].metadata.display_name == "shown"
            and v[0].tensor.dtype == proto.DT_FLOAT
        ),  # a Python float list is float32, as in TF
    ),
    # merge(inputs, collections, name): the values of every input, in order
    "merge.inputs": (
        lambda: v1.merge([v1.scalar("x", 1.0), v1.histogram("y", [1.0])]),
        lambda v: [x.tag for x in v] == ["x", "y"],
    ),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_v1_treats_each_argument_as_tf1(case: str) -> None:
    make, check = ACCEPTED[case]
    assert check(values(make())), case


REFUSED: dict[str, tuple[Callable[[], Any], type[Exception], str]] = {
    # ImageSummary's max_images and AudioSummaryV2's max_outputs are attrs with minimum 1.
    "image.max_outputs=0": (
        lambda: v1.image("img", np.zeros((1, 2, 2, 3), np.uint8), max_outputs=0),
        ValueError,
        "'img': max_outputs",
    ),
    "audio.max_outputs=0": (
        lambda: v1.audio("snd", np.zeros((1, 4), np.float32), 8000, max_outputs=0),
        ValueError,
        "'snd': max_outputs",
    ),
    "image.max_outputs=float": (
        lambda: v1.image(
            "img",
            np.zeros((1, 2, 2, 3), np.uint8),
            max_outputs=1.0,  # type: ignore[arg-type]
        ),
        TypeError,
        "'img",
    ),
    # AudioSummaryV2 takes a 2-D or 3-D float tensor.
    "audio.tensor=1-D": (
        lambda: v1.audio("snd", np.zeros(4, np.float32), 8000),
        ValueError,
        "'snd",
    ),
    "audio.sample_rate=str": (
        lambda: v1.audio("snd", np.zeros((1, 4), np.float32), "8000"),
        TypeError,
        "snd",
    ),
    # ImageSummary: channels 1, 3 or 4.
    "image.tensor=2 channels": (
        lambda: v1.image("img", np.zeros((1, 2, 2, 2), np.uint8)),
        ValueError,
        "'img",
    ),
    # The text plugin summarizes string tensors only.
    "text.tensor=int": (lambda: v1.text("txt", 3), TypeError, "'txt'"),
    # HistogramSummary fails on NaN or Inf values.
    "histogram.values=inf": (lambda: v1.histogram("hist", [1.0, np.inf]), ValueError, "hist"),
    "scalar.name=None": (lambda: v1.scalar(None, 1.0), TypeError, "name"),  # type: ignore[arg-type]
    "merge.inputs=None": (lambda: v1.merge(None), TypeError, "merge"),  # type: ignore[arg-type]
    # ScalarSummary: "tags and values are not the same shape" for any tensor but a scalar.
    "scalar.tensor=shape [1]": (
        lambda: v1.scalar("s1", np.array([2.0])),
        ValueError,
        r"'s1'.*\[1\]",
    ),
    "scalar.tensor=list of one": (lambda: v1.scalar("s1", [2.0]), ValueError, "'s1'"),
    "scalar.tensor=shape [1, 1]": (lambda: v1.scalar("s1", np.ones((1, 1))), ValueError, "'s1'"),
    # The scalar op takes real numeric dtypes only: no bool.
    "scalar.tensor=True": (lambda: v1.scalar("sb", True), TypeError, "'sb'.*bool"),
    "scalar.tensor=np.bool_": (lambda: v1.scalar("sb", np.bool_(False)), TypeError, "'sb'.*bool"),
    "scalar.tensor=0-d bool array": (lambda: v1.scalar("sb", np.array(True)), TypeError, "'sb'"),
    # A Python int converts to int32, else int64, else fails (TF1 stores no inf).
    "scalar.tensor=2**200": (lambda: v1.scalar("si", 2**200), ValueError, "'si'.*int64"),
    "scalar.tensor=-2**63-1": (lambda: v1.scalar("si", -(2**63) - 1), ValueError, "'si'"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_v1_refuses_what_tf1_refuses_naming_the_tag(case: str) -> None:
    call, kind, words = REFUSED[case]
    with pytest.raises(kind, match=words):
        call()


def test_a_refused_scalar_collects_nothing() -> None:
    with pytest.raises(ValueError):
        v1.scalar("bad", np.array([1.0]))
    assert v1.merge_all() is None


# -- get_summary_description ----------------------------------------------------------------


def _node_def(op: str, description: bytes | None) -> Any:
    node_def_pb2 = pytest.importorskip("tensorboard.compat.proto.node_def_pb2")
    node = node_def_pb2.NodeDef(name="t", op=op)
    if description is not None:
        node.attr["description"].s = description
    return node


@pytest.mark.parametrize("form", ["message", "bytes"])
@pytest.mark.parametrize("key", ["type_hint", "typeHint"])
def test_get_summary_description_reads_the_description_attr(form: str, key: str) -> None:
    node = _node_def("TensorSummary", f'{{"{key}": "scalar"}}'.encode())
    arg = node if form == "message" else node.SerializeToString()
    assert v1.get_summary_description(arg) == v1.SummaryDescription(type_hint="scalar")
    assert v1.get_summary_description(arg).type_hint == "scalar"


def test_get_summary_description_of_an_empty_json_object() -> None:
    node = _node_def("TensorSummary", b"{}")
    assert v1.get_summary_description(node.SerializeToString()).type_hint == ""


@pytest.mark.parametrize(
    ("op", "description", "words"),
    [
        ("ScalarSummary", b"{}", "Can't get_summary_description on ScalarSummary"),
        ("TensorSummary", None, "missing or not JSON"),
        ("TensorSummary", b"not json", "missing or not JSON"),
        ("TensorSummary", b"[1]", "not a JSON object"),
        ("TensorSummary", b'{"other": "x"}', "no field 'other'"),
        ("TensorSummary", b'{"type_hint": 3}', "type_hint must be a string"),
    ],
)
@pytest.mark.parametrize("form", ["message", "bytes"])
def test_get_summary_description_refuses_as_tf1(
    op: str, description: bytes | None, words: str, form: str
) -> None:
    node = _node_def(op, description)
    arg = node if form == "message" else node.SerializeToString()
    with pytest.raises(ValueError, match=words):
        v1.get_summary_description(arg)


@pytest.mark.parametrize("junk", [b"\x12\x05abc", b"\x0f", b"\xff" * 12])
def test_get_summary_description_refuses_bytes_that_are_no_node_def(junk: bytes) -> None:
    with pytest.raises(ValueError, match="get_summary_description"):
        v1.get_summary_description(junk)


@pytest.mark.parametrize("arg", [None, "TensorSummary", 3])
def test_get_summary_description_refuses_other_types(arg: Any) -> None:
    with pytest.raises(TypeError, match="NodeDef"):
        v1.get_summary_description(arg)


@pytest.mark.fuzz
@given(st.binary(max_size=64))
def test_get_summary_description_of_any_bytes_is_a_description_or_a_value_error(
    data: bytes,
) -> None:
    try:
        result = v1.get_summary_description(data)
    except ValueError as exc:
        assert "get_summary_description" in str(exc)
    else:
        assert isinstance(result.type_hint, str)
