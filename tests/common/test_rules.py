"""The rules written once (issue 19, step 2): numeric arrays, layouts, protobuf messages,
dicts of tag -> number and file name suffixes, each checked here at its one definition."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from npsummary import proto
from npsummary._common.convert import (
    REAL_NOT_BOOL,
    UINT8_OR_FLOAT,
    Dtypes,
    as_numeric_array,
    check_filename_suffix,
    check_numeric,
    is_numeric,
    scalar_dict,
)
from npsummary._common.messages import message_bytes, parse_message
from npsummary._imaging.dataformats import parse_layout

ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint64", "float16", ">f4", ">f8", "longdouble", "bfloat16"]
)
def test_numeric_dtypes(dtype: str) -> None:
    dt = np.dtype(getattr(ml_dtypes, dtype, dtype))
    assert is_numeric(dt)
    array = np.zeros(3, dt)
    assert check_numeric(array, "x", tag="t") is array  # extension floats pass unchanged
    converted = as_numeric_array(array, "t", "x")
    assert converted.dtype == (np.float32 if dtype == "bfloat16" else dt)


@pytest.mark.parametrize("dtype", ["complex64", "U1", "S1", "O", "m8[s]", "M8[s]"])
def test_other_dtypes_are_refused_naming_tag_and_argument(dtype: str) -> None:
    assert not is_numeric(np.dtype(dtype))
    with pytest.raises(TypeError, match=r"^'t': x must be numeric \(real numbers: bool"):
        check_numeric(np.zeros(2, dtype), "x", tag="t")
    with pytest.raises(TypeError, match=r"^x must be numeric"):
        check_numeric(np.zeros(2, dtype), "x")


@pytest.mark.parametrize(
    ("accepted", "taken", "refused"),
    [
        (REAL_NOT_BOOL, ["int8", "uint64", ">f4", "bfloat16"], ["bool", "complex64", "O"]),
        (UINT8_OR_FLOAT, ["uint8", "float16", ">f8", "bfloat16"], ["bool", "int8", "uint16"]),
    ],
    ids=["REAL_NOT_BOOL", "UINT8_OR_FLOAT"],
)
def test_narrower_dtype_sets_refuse_in_the_one_wording(
    accepted: Dtypes, taken: list[str], refused: list[str]
) -> None:
    for dtype in taken:
        array = np.zeros(2, np.dtype(getattr(ml_dtypes, dtype, dtype)))
        assert check_numeric(array, "x", tag="t", accepted=accepted) is array
    for dtype in refused:
        expected = re.escape(f"'t': x must be {accepted.expected}, got an array of dtype ")
        with pytest.raises(TypeError, match=f"^{expected}{re.escape(str(np.dtype(dtype)))}$"):
            check_numeric(np.zeros(2, dtype), "x", tag="t", accepted=accepted)


def test_parse_layout() -> None:
    assert parse_layout("nhwc", ("NCHW", "NHW"), kind="images", tag="b") == "NHWC"
    assert parse_layout("hw", ("CHW", "HW"), kind="image", tag="", shape=(2, 3)) == "HW"
    with pytest.raises(TypeError, match=r"^image 'a': dataformats must be a str such as 'CHW'"):
        parse_layout(3, ("CHW",), kind="image", tag="a")
    for bad in ("CHH", "CHX", "", "NCHWC", "TCHW"):
        with pytest.raises(ValueError, match=r"must be a permutation of 'CHW' or 'HW', one"):
            parse_layout(bad, ("CHW", "HW"), kind="image", tag="a")
    with pytest.raises(ValueError, match=r"^video 'v': dataformats 'CHW' .* got shape \(2, 3\)$"):
        parse_layout("CHW", ("CHW", "HW"), kind="video", tag="v", shape=(2, 3))
    with pytest.raises(ValueError, match=r"^kernel: layout 'OIH' must be a permutation of 'OIHW'"):
        parse_layout("OIH", ("OIHW",), kind="kernel", tag="", name="layout")


class _Serializable:
    """An object with SerializeToString and no descriptor (taken at its word)."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def SerializeToString(self) -> bytes:
        if isinstance(self.result, BaseException):
            raise self.result
        return bytes(self.result)


def test_message_bytes() -> None:
    summary = proto.Summary()
    summary.value.add(tag="a", simple_value=1.0)
    data = summary.SerializeToString()
    assert message_bytes(summary, "Summary", "s") == data
    for raw in (data, bytearray(data), memoryview(data)):
        assert message_bytes(raw, "Summary", "s") == data
    assert message_bytes(_Serializable(b"\x08\x01"), "Event", "e") == b"\x08\x01"
    with pytest.raises(TypeError, match=r"^add_summary: expected a Summary protobuf message "):
        message_bytes(proto.Event(), "Summary", "add_summary")  # another message type
    with pytest.raises(TypeError, match=r"expected a Summary protobuf message .* builtins\.int"):
        message_bytes(3, "Summary", "add_summary")
    with pytest.raises(ValueError, match=r"^e: cannot serialize _Serializable: boom"):
        message_bytes(_Serializable(RuntimeError("boom")), "Event", "e")
    with pytest.raises(ValueError, match=r"^s is not a serialized Summary"):
        parse_message(proto.Summary, b"\xff\xff", "s")


def test_scalar_dict() -> None:
    assert scalar_dict({"a": 1, "b": np.float32(0.5), "c": 1e300}, "d", tag="m") == [
        ("a", 1.0),
        ("b", 0.5),
        ("c", float("inf")),  # saturated to float32's range, as add_scalar stores it
    ]
    with pytest.raises(TypeError, match=r"^'m': d must be a dict of tag -> number, got list"):
        scalar_dict([1], "d", tag="m")
    with pytest.raises(TypeError, match=r"^'m': d key must be a str"):
        scalar_dict({1: 1.0}, "d", tag="m")
    with pytest.raises(TypeError, match=r"^'m/k': d value: expected a real number"):
        scalar_dict({"k": "x"}, "d", tag="m")
    with pytest.raises(TypeError, match=r"^'k': metric_dict value: expected a real number"):
        scalar_dict({"k": None}, "metric_dict")


def test_filename_suffix() -> None:
    assert check_filename_suffix(None) == ""
    assert check_filename_suffix(".v2") == ".v2"
    with pytest.raises(TypeError, match="filename_suffix must be a str"):
        check_filename_suffix(b".x")
    for bad in ("a/b", "a\\b", "a\0b"):
        with pytest.raises(ValueError, match="must not contain a path separator"):
            check_filename_suffix(bad)
