"""Image conversions: TF golden files, value rules, layouts, grids, kernels, figures, errors."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary._imaging.grid import feature_map_grid, figure_to_hwc, kernel_grid, make_grid
from npsummary._imaging.layout import to_hwc, to_nhwc
from npsummary._imaging.pixels import (
    tensorboardx_to_uint8,
    tf1_normalize_image,
    tf2_convert_image_dtype,
    to_uint8,
)
from paths import TESTS

GOLDEN = TESTS / "golden" / "image"


def load(name: str) -> dict[str, np.ndarray]:
    with np.load(GOLDEN / name) as data:
        return {key: data[key] for key in data.files}


TF2 = load("tf2_convert.npz")
TF1 = load("tf1_image.npz")
TF2_DTYPES = sorted(k[:-3] for k in TF2 if k.endswith("_in"))
TF1_CASES = sorted(k[:-3] for k in TF1 if k.endswith("_in"))


# --------------------------------------------------------------------------- TF goldens


def test_golden_coverage() -> None:
    assert set(TF2_DTYPES) == {
        "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    }  # fmt: skip
    assert len(TF1_CASES) >= 25
    assert TF2["float16_in"].size == 2**16  # every float16 bit pattern
    assert sum(os.path.getsize(p) for p in GOLDEN.iterdir()) < 2 * 2**20


@pytest.mark.parametrize("dtype", TF2_DTYPES)
def test_tf2_convert_matches_tensorflow(dtype: str) -> None:
    x, expected = TF2[f"{dtype}_in"], TF2[f"{dtype}_out"]
    assert x.dtype == np.dtype(dtype)
    got = tf2_convert_image_dtype(x)
    assert got.dtype == np.uint8
    mismatch = np.flatnonzero(got != expected)
    assert mismatch.size == 0, [(x[i], got[i], expected[i]) for i in mismatch[:5]]
    if x.size % 4 == 0:  # any shape, chunked
        np.testing.assert_array_equal(
            tf2_convert_image_dtype(x.reshape(2, -1, 2)), expected.reshape(2, -1, 2)
        )


def test_tf2_convert_documented_examples() -> None:
    x = np.array([0, 0.001, 0.5, 0.998, 0.999, 1, 1.5, -0.2, np.nan, np.inf, -np.inf], np.float32)
    assert tf2_convert_image_dtype(x).tolist() == [0, 0, 127, 254, 255, 255, 255, 0, 0, 255, 0]
    ints = np.array([2**24, 2**31 - 1, -5, 2**23 - 1], np.int32)
    assert tf2_convert_image_dtype(ints).tolist() == [2, 255, 0, 0]


def test_tf2_convert_unsigned_beyond_tf_kernels() -> None:
    u32 = np.array([0, 2**24 - 1, 2**24, 2**31, 2**32 - 1], np.uint32)
    assert tf2_convert_image_dtype(u32).tolist() == [0, 0, 1, 128, 255]
    u64 = np.array([0, 2**56 - 1, 2**56, 2**63, 2**64 - 1], np.uint64)
    assert tf2_convert_image_dtype(u64).tolist() == [0, 0, 1, 128, 255]


def test_tf2_convert_uint8_is_identity_and_bool_rejected() -> None:
    x = np.arange(256, dtype=np.uint8).reshape(16, 16)
    assert tf2_convert_image_dtype(x) is x
    with pytest.raises(TypeError, match="bool"):
        tf2_convert_image_dtype(np.array([True, False]))
    with pytest.raises(TypeError, match="complex"):
        tf2_convert_image_dtype(np.zeros(3, np.complex64))


@pytest.mark.parametrize("case", TF1_CASES)
def test_tf1_normalize_matches_tensorflow(case: str) -> None:
    x, expected, bad = TF1[f"{case}_in"], TF1[f"{case}_out"], TF1[f"{case}_bad"]
    got = tf1_normalize_image(x, bad)
    assert got.dtype == np.uint8 and got.shape == x.shape
    diff = np.argwhere(got != expected)
    assert diff.size == 0, [(x[tuple(i)], got[tuple(i)], expected[tuple(i)]) for i in diff[:4]]
    for i in range(x.shape[0]):  # one image at a time, [H, W, C]
        np.testing.assert_array_equal(tf1_normalize_image(x[i], bad), expected[i])


def test_tf1_normalize_default_bad_color_and_rules() -> None:
    x = np.array([[[-1.0], [0.5]], [[np.nan], [2.0]]], np.float32)  # [2, 2, 1]
    assert tf1_normalize_image(x)[..., 0].tolist() == [[64, 159], [255, 255]]
    rgb = np.zeros((1, 2, 3), np.float32)
    rgb[0, 1, 2] = np.inf
    assert tf1_normalize_image(rgb).tolist() == [[[0, 0, 0], [255, 0, 0]]]
    positive = np.array([[[0.0], [1.0], [2.0]]], np.float64)
    assert tf1_normalize_image(positive)[..., 0].tolist() == [[0, 127, 255]]
    u8 = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)
    assert tf1_normalize_image(u8) is u8


def test_tf1_normalize_large_image_in_chunks() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(700, 600, 3)).astype(np.float32)
    x[5, 5, 1] = np.nan
    got = tf1_normalize_image(x)
    finite = np.isfinite(x).all(-1)
    scale = np.float32(127) / np.abs(x[finite]).max()
    expected = (x * scale + np.float32(128)).astype(np.float32)
    expected[~finite] = 0
    expected = expected.astype(np.uint8)
    expected[~finite] = (255, 0, 0)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("data", "bad_color", "error"),
    [
        (np.zeros((2, 2, 2, 3), np.int32), (255, 0, 0, 255), TypeError),
        (np.zeros((2, 2, 3), np.bool_), (255, 0, 0, 255), TypeError),
        (np.zeros((2, 2), np.float32), (255, 0, 0, 255), ValueError),
        (np.zeros((1, 2, 2, 5), np.float32), (255, 0, 0, 255), ValueError),
        (np.zeros((1, 2, 2, 4), np.float32), (255, 0, 0), ValueError),
        (np.zeros((1, 2, 2, 3), np.float32), (255, 0, 300), ValueError),
    ],
)
def test_tf1_normalize_errors(data: np.ndarray, bad_color: Any, error: type) -> None:
    with pytest.raises(error):
        tf1_normalize_image(data, bad_color)


# --------------------------------------------------------------------------- value rules


def test_to_uint8_float_rules() -> None:
    x = np.array([0, 2**-8, 0.5, 0.998, 0.999, 1, 1.5, -0.2, np.nan, np.inf, -np.inf, 1e30, -1e30])
    for dtype in (np.float16, np.float32, np.float64):
        with np.errstate(over="ignore"):  # 1e30 is inf in float16
            typed = x.astype(dtype)
        got, nans = to_uint8(typed)
        assert nans == 1
        assert got.dtype == np.uint8
        # float16(0.998) is 0.99805, which rounds up to 255
        high = 255 if dtype == np.float16 else 254
        assert got.tolist() == [0, 1, 128, high, 255, 255, 255, 0, 0, 255, 0, 255, 0], dtype


def test_tensorboardx_conversion_wraps_as_tensorboardx_does() -> None:
    # tensorboardX's image(): (x * 255.0).astype(np.uint8), no clipping; NaN and inf give 0.
    x = np.array([0, 0.5, 1, 1.5, -0.2, 2.0, np.nan, np.inf, -np.inf])
    got, nans = tensorboardx_to_uint8(x)
    assert nans == 1
    assert got.tolist() == [0, 127, 255, 126, 205, 254, 0, 0, 0]
    # An int64 0/1 mask is multiplied in float64; int levels beyond 1 wrap too.
    assert tensorboardx_to_uint8(np.array([0, 1, 2, -1]))[0].tolist() == [0, 255, 254, 1]
    assert tensorboardx_to_uint8(np.array([True, False]))[0].tolist() == [255, 0]
    # float16 products are rounded in float16, as there: 0.998 -> 254.5 -> 254.
    assert tensorboardx_to_uint8(np.array([0.998], np.float16))[0].tolist() == [254]
    u8 = np.arange(256, dtype=np.uint8)
    assert tensorboardx_to_uint8(u8)[0] is u8
    # to_uint8's tensorboardX mode is the same conversion.
    assert to_uint8(x, floor=True, wrap=True)[0].tolist() == got.tolist()


@pytest.mark.fuzz
@settings(max_examples=examples(100), deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.float16, np.float32, np.float64, np.int64, np.int32]),
        hnp.array_shapes(max_dims=3, max_side=6),
        elements={"allow_nan": False, "allow_infinity": False, "min_value": -1e4, "max_value": 1e4},
    )
)
def test_tensorboardx_conversion_equals_its_expression(array: np.ndarray) -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        expected = (array * 255.0).astype(np.uint8)
        finite = np.isfinite(array * 255.0)
    got, nans = tensorboardx_to_uint8(array)
    assert nans == 0
    np.testing.assert_array_equal(got[finite], expected[finite])
    assert not got[~finite].any()  # float16 products beyond 65504 are inf: drawn as 0


def test_to_uint8_integer_bool_and_uint8_rules() -> None:
    assert to_uint8(np.array([-5, 0, 200, 255, 256, 2**40], np.int64))[0].tolist() == [
        0, 0, 200, 255, 255, 255,
    ]  # fmt: skip
    assert to_uint8(np.array([-128, -1, 0, 127], np.int8))[0].tolist() == [0, 0, 0, 127]
    assert to_uint8(np.array([0, 255, 1000, 65535], np.uint16))[0].tolist() == [0, 255, 255, 255]
    assert to_uint8(np.array([0, 2**64 - 1], np.uint64))[0].tolist() == [0, 255]
    assert to_uint8(np.array([True, False]))[0].tolist() == [255, 0]
    u8 = np.arange(256, dtype=np.uint8)
    got, nans = to_uint8(u8)
    assert got is u8 and nans == 0


@pytest.mark.fuzz
@settings(max_examples=examples(100), deadline=None)
@given(
    hnp.arrays(
        np.float32,
        hnp.array_shapes(min_dims=1, max_dims=3, max_side=12),
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    )
)
def test_to_uint8_is_exact_round_half_up(x: np.ndarray) -> None:
    got, nans = to_uint8(x)
    assert nans == int(np.isnan(x).sum())
    for value, pixel in zip(x.ravel().tolist(), got.ravel().tolist(), strict=True):
        if math.isnan(value):
            expected = 0
        elif math.isinf(value):
            expected = 255 if value > 0 else 0
        else:
            expected = min(255, max(0, math.floor(Fraction(value) * 255 + Fraction(1, 2))))
        assert pixel == expected, value


@pytest.mark.fuzz
@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.floats(-10, 10, width=16), min_size=2, max_size=50))
def test_to_uint8_is_monotone_never_wraps(values: list[float]) -> None:
    x = np.sort(np.array(values, np.float16))
    got = to_uint8(x)[0].astype(int)
    assert (np.diff(got) >= 0).all()


def test_to_uint8_chunked_and_strided() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-0.5, 1.5, (2, 700, 400, 3)).astype(np.float32)  # > one chunk per image
    x[1, 3, 4, 2] = np.nan
    got, nans = to_uint8(x)
    expected = np.floor(np.clip(x.astype(np.float64) * 255 + 0.5, 0, 255))
    expected[np.isnan(expected)] = 0
    np.testing.assert_array_equal(got, expected.astype(np.uint8))
    assert nans == 1
    view = x[:, ::-3, ::2].transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(to_uint8(view)[0], got[:, ::-3, ::2].transpose(0, 2, 1, 3))


def test_to_uint8_rejects_other_dtypes() -> None:
    for bad in (np.zeros(3, np.complex128), np.array(["a"]), np.array([object()])):
        with pytest.raises(TypeError, match="dtype"):
            to_uint8(bad)


class FakeTensor:
    """Duck-typed torch tensor: detach().cpu() then __array__."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.detached = False

    def detach(self) -> FakeTensor:
        self.detached = True
        return self

    def cpu(self) -> FakeTensor:
        return self

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if not self.detached:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad")
        return self.array


def test_array_likes() -> None:
    chw = np.random.default_rng(2).random((3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(to_hwc(FakeTensor(chw)), chw.transpose(1, 2, 0))
    np.testing.assert_array_equal(to_uint8(FakeTensor(chw))[0], to_uint8(chw)[0])
    np.testing.assert_array_equal(to_hwc(chw.tolist()), chw.transpose(1, 2, 0))
    batch = to_nhwc([chw, chw * 0.5])
    np.testing.assert_array_equal(batch[1], (chw * 0.5).transpose(1, 2, 0))


# --------------------------------------------------------------------------- layouts

LAYOUT_CASES = [
    ("CHW", (3, 4, 5), (1, 2, 0)),
    ("HWC", (4, 5, 3), (0, 1, 2)),
    ("CWH", (4, 5, 7), (2, 1, 0)),
    ("WHC", (5, 4, 1), (1, 0, 2)),
    ("hwc", (4, 5, 2), (0, 1, 2)),
]


@pytest.mark.parametrize(("fmt", "shape", "perm"), LAYOUT_CASES)
def test_to_hwc_permutations(fmt: str, shape: tuple[int, ...], perm: tuple[int, ...]) -> None:
    x = np.arange(math.prod(shape)).reshape(shape)
    if fmt.upper() == "CWH":
        x = x[:3]
    got = to_hwc(x, fmt)
    np.testing.assert_array_equal(got, x.transpose(perm))
    assert np.shares_memory(got, x)


def test_to_hwc_two_dimensional_stays_gray() -> None:
    x = np.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(to_hwc(x, "HW"), x[:, :, None])
    np.testing.assert_array_equal(to_hwc(x, "WH"), x.T[:, :, None])
    assert to_hwc(np.zeros((4, 5, 1)), "HWC").shape == (4, 5, 1)


def test_to_hwc_matches_tensorboardx() -> None:
    tbx = pytest.importorskip("tensorboardX.utils")
    rng = np.random.default_rng(3)
    for fmt in ("CHW", "HWC", "WHC", "CWH", "HWC"):
        shape = tuple({"C": 3, "H": 6, "W": 7}[c] for c in fmt)
        x = rng.random(shape)
        np.testing.assert_array_equal(to_hwc(x, fmt), tbx.convert_to_HWC(x, fmt))
    for fmt in ("HW", "WH"):
        x = rng.random((6, 7))
        np.testing.assert_array_equal(to_hwc(x, fmt)[..., 0], tbx.convert_to_HWC(x, fmt)[..., 0])
    for fmt in ("NCHW", "NHWC", "HWNC"):
        shape = tuple({"N": 11, "C": 3, "H": 5, "W": 4}[c] for c in fmt)
        x = rng.random(shape)
        np.testing.assert_array_equal(to_hwc(x, fmt), tbx.convert_to_HWC(x, fmt))


def test_to_nhwc_layouts() -> None:
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(to_nhwc(x, "NCHW"), x.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(to_nhwc(x.transpose(0, 2, 3, 1), "NHWC"), x.transpose(0, 2, 3, 1))
    gray = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(to_nhwc(gray, "NHW"), gray[..., None])
    np.testing.assert_array_equal(to_nhwc(gray, "HWN"), gray.transpose(2, 0, 1)[..., None])
    assert to_nhwc(np.zeros((0, 3, 4, 5)), "NCHW").shape == (0, 4, 5, 3)


def test_layout_error_message_names_shape_and_layout() -> None:
    with pytest.raises(ValueError) as info:
        to_hwc(np.zeros((5, 32, 32)), "CHW", tag="tag")
    assert str(info.value) == (
        "image 'tag': dataformats 'CHW' expects a 3-D array with C in {1, 2, 3, 4}, "
        "got shape (5, 32, 32)"
    )
    with pytest.raises(ValueError, match=r"pass dataformats='HWC'") as info:
        to_hwc(np.zeros((32, 32, 3)), "CHW", tag="x")
    assert "got shape (32, 32, 3)" in str(info.value)
    with pytest.raises(ValueError, match=r"expects a 3-D array .* got shape \(32, 32\)"):
        to_hwc(np.zeros((32, 32)), "CHW")
    with pytest.raises(ValueError, match=r"pass dataformats='NHWC'"):
        to_nhwc(np.zeros((2, 8, 8, 3)), "NCHW", tag="batch")


@pytest.mark.parametrize(
    ("fmt", "shape", "error"),
    [
        ("CHH", (3, 4, 4), ValueError),
        ("CHX", (3, 4, 4), ValueError),
        ("", (3, 4, 4), ValueError),
        ("NHW", (3, 4, 4), ValueError),  # to_hwc: a 3-D layout must be a permutation of HWC
        ("CHW", (3, 0, 4), ValueError),
        ("HWC", (4, 4, 5), ValueError),
        ("NCHWC", (1, 3, 4, 4, 3), ValueError),
        (3, (3, 4, 4), TypeError),
    ],
)
def test_to_hwc_errors(fmt: Any, shape: tuple[int, ...], error: type) -> None:
    with pytest.raises(error, match="image 'img'"):
        to_hwc(np.zeros(shape), fmt, tag="img")


def test_to_nhwc_errors() -> None:
    with pytest.raises(ValueError, match=r"images 'b'.*NCHW"):
        to_nhwc(np.zeros((3, 4, 4)), "CHW", tag="b")
    with pytest.raises(ValueError, match=r"got shape \(2, 3, 4, 4, 1\)"):
        to_nhwc(np.zeros((2, 3, 4, 4, 1)), "NCHW")
    with pytest.raises(ValueError, match="empty"):
        to_nhwc([], "NCHW")


# --------------------------------------------------------------------------- grids


def test_make_grid_exact_small_example() -> None:
    tiles = np.arange(1, 4, dtype=np.uint8).reshape(3, 1, 1, 1) * np.ones((3, 1, 2, 1), np.uint8)
    grid = make_grid(tiles, ncols=2, padding=1, pad_value=9)
    assert grid[..., 0].tolist() == [
        [9, 9, 9, 9, 9, 9, 9],
        [9, 1, 1, 9, 2, 2, 9],
        [9, 9, 9, 9, 9, 9, 9],
        [9, 3, 3, 9, 9, 9, 9],
        [9, 9, 9, 9, 9, 9, 9],
    ]
    assert grid.dtype == np.uint8


def test_make_grid_matches_tensorboardx_without_padding() -> None:
    tbx = pytest.importorskip("tensorboardX.utils")
    rng = np.random.default_rng(4)
    for n in (1, 3, 8, 9, 17):
        nchw = rng.random((n, 3, 5, 6))
        ours = make_grid(nchw.transpose(0, 2, 3, 1), ncols=8, padding=0)
        np.testing.assert_array_equal(ours, tbx.make_grid(nchw).transpose(1, 2, 0))


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    n=st.integers(1, 20),
    h=st.integers(1, 6),
    w=st.integers(1, 6),
    c=st.sampled_from([1, 3, 4]),
    ncols=st.integers(1, 10),
    padding=st.integers(0, 3),
)
def test_make_grid_places_every_tile(
    n: int, h: int, w: int, c: int, ncols: int, padding: int
) -> None:
    tiles = np.arange(1, n * h * w * c + 1, dtype=np.int64).reshape(n, h, w, c)
    grid = make_grid(tiles, ncols=ncols, padding=padding, pad_value=-1)
    cols = min(ncols, n)
    rows = math.ceil(n / cols)
    assert grid.shape == (rows * (h + padding) + padding, cols * (w + padding) + padding, c)
    mask = np.ones(grid.shape[:2], bool)
    for i in range(n):
        top = (i // cols) * (h + padding) + padding
        left = (i % cols) * (w + padding) + padding
        np.testing.assert_array_equal(grid[top : top + h, left : left + w], tiles[i])
        mask[top : top + h, left : left + w] = False
    assert (grid[mask] == -1).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"ncols": 0}, ValueError, "ncols must be >= 1, got 0"),
        ({"padding": -1}, ValueError, "padding must be >= 0, got -1"),
        ({"pad_value": 300}, ValueError, "make_grid: pad_value"),
        ({"ncols": 2.5}, TypeError, r"ncols must be an int, got 2\.5"),
        ({"ncols": True}, TypeError, "ncols must be an int, got True"),
        ({"padding": "1"}, TypeError, "padding must be an int, got"),
    ],
)
def test_make_grid_errors(kwargs: dict[str, Any], error: type, match: str) -> None:
    # One mistake, one exception type: a non-int is a TypeError, a bad int a ValueError.
    with pytest.raises(error, match=match):
        make_grid(np.zeros((2, 3, 3, 1), np.uint8), **kwargs)


def test_make_grid_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"got shape \(3, 3, 1\)"):
        make_grid(np.zeros((3, 3, 1)))
    with pytest.raises(ValueError, match="non-empty"):
        make_grid(np.zeros((0, 3, 3, 1)))


def test_to_hwc_four_dimensional_is_a_grid() -> None:
    x = np.random.default_rng(5).random((10, 3, 4, 5))
    np.testing.assert_array_equal(
        to_hwc(x, "NCHW"), make_grid(x.transpose(0, 2, 3, 1), ncols=8, padding=0)
    )


def random_kernel(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_kernel_grid_layouts_agree() -> None:
    oihw = random_kernel((6, 4, 3, 5))
    hwio = oihw.transpose(2, 3, 1, 0)
    a = kernel_grid(hwio, "HWIO")
    b = kernel_grid(oihw, "OIHW")
    c = kernel_grid(oihw.transpose(1, 0, 2, 3), "IOHW")
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    # one row per output filter, one column per input channel, padding 1
    assert a.shape == (6 * (3 + 1) + 1, 4 * (5 + 1) + 1, 1)
    assert a.dtype == np.uint8


def test_kernel_grid_per_tile_normalisation() -> None:
    oihw = random_kernel((2, 3, 4, 4))
    oihw[1, 2] = 7.0  # constant tile
    grid = kernel_grid(oihw, "OIHW", padding=0, rgb=False)[..., 0]
    assert grid.shape == (8, 12)
    for o in range(2):
        for i in range(3):
            tile = grid[o * 4 : o * 4 + 4, i * 4 : i * 4 + 4]
            if (o, i) == (1, 2):
                assert (tile == 128).all()
            else:
                assert tile.min() == 0 and tile.max() == 255
                w = oihw[o, i].astype(np.float64)
                expected = to_uint8((w - w.min()) / (w.max() - w.min()))[0]
                assert np.abs(tile.astype(int) - expected.astype(int)).max() <= 1


def test_kernel_grid_modes() -> None:
    oihw = random_kernel((4, 2, 3, 3), seed=1)
    layer = kernel_grid(oihw, "OIHW", normalize="layer", padding=0)
    assert layer.min() == 0 and layer.max() == 255
    w = oihw.astype(np.float64)
    expected = to_uint8((w - w.min()) / (w.max() - w.min()))[0]  # [4, 2, 3, 3]
    expected = expected.transpose(0, 2, 1, 3).reshape(12, 6)
    assert np.abs(layer[..., 0].astype(int) - expected.astype(int)).max() <= 1
    per_filter = kernel_grid(oihw, "OIHW", normalize="filter", padding=0)[..., 0]
    for o in range(4):
        band = per_filter[o * 3 : o * 3 + 3]
        assert band.min() == 0 and band.max() == 255
    raw = np.full((1, 1, 2, 2), 0.5)
    assert (kernel_grid(raw, "OIHW", normalize="none", padding=0) == 128).all()
    ints = np.array([-3, 7, 200, 300], np.int16).reshape(1, 1, 2, 2)  # integer rule: clip
    grid = kernel_grid(ints, "OIHW", normalize="none", padding=1, pad_value=9)
    assert grid[..., 0].tolist() == [[9, 9, 9, 9], [9, 0, 7, 9], [9, 200, 255, 9], [9, 9, 9, 9]]


def test_kernel_grid_rgb_first_layer() -> None:
    oihw = random_kernel((10, 3, 5, 5), seed=2)
    grid = kernel_grid(oihw, "OIHW")  # in == 3: RGB tiles by default, ceil(sqrt(10)) = 4 cols
    assert grid.shape == (3 * 6 + 1, 4 * 6 + 1, 3)
    tile = grid[1:6, 1:6]
    w = oihw[0].transpose(1, 2, 0).astype(np.float64)
    expected = to_uint8((w - w.min()) / (w.max() - w.min()))[0]
    assert np.abs(tile.astype(int) - expected.astype(int)).max() <= 1
    gray = kernel_grid(oihw, "OIHW", rgb=False)
    assert gray.shape == (10 * 6 + 1, 3 * 6 + 1, 1)
    assert kernel_grid(oihw, "OIHW", ncols=10).shape == (7, 10 * 6 + 1, 3)


def test_kernel_grid_nonfinite_and_single_input() -> None:
    oihw = random_kernel((9, 1, 3, 3), seed=3)
    oihw[0, 0, 0, 0] = np.nan
    oihw[0, 0, 0, 1] = np.inf
    grid = kernel_grid(oihw, "OIHW", padding=0)[..., 0]
    assert grid.shape == (9, 9)  # in == 1: ceil(sqrt(9)) = 3 columns
    assert grid[0, 0] == 0 and grid[0, 1] == 255
    finite = grid[:3, :3].ravel()[2:]
    assert finite.min() == 0 and finite.max() == 255


@pytest.mark.parametrize(
    ("weights", "kwargs", "error"),
    [
        (np.zeros((3, 3, 4)), {}, ValueError),
        (np.zeros((3, 3, 4, 2)), {"layout": "HWIX"}, ValueError),
        (np.zeros((3, 3, 4, 2)), {"rgb": True}, ValueError),
        (np.zeros((3, 3, 4, 2)), {"normalize": "global"}, ValueError),
        (np.zeros((3, 3, 0, 2)), {}, ValueError),
        (np.zeros((3, 3, 4, 2), np.complex64), {}, TypeError),
    ],
)
def test_kernel_grid_errors(weights: np.ndarray, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error):
        kernel_grid(weights, **kwargs)


def test_kernel_grid_error_names_layout() -> None:
    with pytest.raises(ValueError, match=r"kernel 'conv1'.*\[kh, kw, in, out\].*\(3, 3, 4\)"):
        kernel_grid(np.zeros((3, 3, 4)), "HWIO", tag="conv1")


def test_feature_map_grid() -> None:
    rng = np.random.default_rng(6)
    nhwc = rng.normal(size=(2, 5, 6, 7)).astype(np.float32)
    nhwc[1, :, :, 3] = 2.0
    grid = feature_map_grid(nhwc, "NHWC", sample=1, padding=0)
    assert grid.shape == (3 * 5, 3 * 6, 1)  # 7 channels -> 3 x 3 grid
    np.testing.assert_array_equal(
        grid, feature_map_grid(nhwc.transpose(0, 3, 1, 2), "NCHW", sample=1, padding=0)
    )
    np.testing.assert_array_equal(
        grid, feature_map_grid(nhwc[1].transpose(2, 0, 1), "CHW", padding=0)
    )
    np.testing.assert_array_equal(grid, feature_map_grid(nhwc, "NHWC", sample=-1, padding=0))
    for ch in range(7):
        tile = grid[(ch // 3) * 5 : (ch // 3) * 5 + 5, (ch % 3) * 6 : (ch % 3) * 6 + 6]
        if ch == 3:
            assert (tile == 128).all()
        else:
            assert tile.min() == 0 and tile.max() == 255
    empty_cells = grid[10:, 6:]
    assert (empty_cells == 0).all()
    layer = feature_map_grid(nhwc, "NHWC", normalize="layer", ncols=7, padding=0)
    assert layer.shape == (5, 42, 1) and layer.min() == 0 and layer.max() == 255


def test_feature_map_grid_errors() -> None:
    x = np.zeros((2, 4, 4, 3))
    with pytest.raises(ValueError, match="sample 2 out of range"):
        feature_map_grid(x, sample=2)
    with pytest.raises(TypeError, match=r"'f': sample must be an int, got 1\.0"):
        feature_map_grid(x, sample=1.0, tag="f")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"feature map 'f'.*got shape \(2, 4, 4, 3\)"):
        feature_map_grid(x, "CHW", tag="f")
    with pytest.raises(ValueError, match="normalize"):
        feature_map_grid(x, normalize="filter")


# --------------------------------------------------------------------------- figures


def test_figure_to_hwc_agg_and_plain_figure() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1.5), dpi=50, facecolor=(1.0, 0.0, 0.0))
    canvas = fig.canvas  # FigureCanvasBase: no buffer_rgba, goes through a temporary Agg
    rgb = figure_to_hwc(fig)
    assert fig.canvas is canvas
    assert rgb.shape == (75, 100, 3) and rgb.dtype == np.uint8
    assert rgb.flags.c_contiguous
    assert rgb[0, 0].tolist() == [255, 0, 0]
    rgba = figure_to_hwc(fig, rgba=True)
    assert rgba.shape == (75, 100, 4) and rgba[0, 0].tolist() == [255, 0, 0, 255]

    import matplotlib.pyplot as plt

    fig2, ax = plt.subplots(figsize=(3, 2), dpi=40)
    try:
        ax.plot([0, 1], [0, 1])
        image = figure_to_hwc(fig2)
        assert image.shape == (80, 120, 3)
        assert (image == 255).all(axis=2).mean() > 0.5  # white background, some ink
        assert (image != 255).any()
    finally:
        plt.close(fig2)


def test_imports_stay_light() -> None:
    # In a fresh interpreter: the image modules (and what they import) load no heavy library.
    code = (
        "import sys\n"
        "import npsummary._format.png, npsummary._imaging.pixels, npsummary._imaging.layout\n"
        "heavy = {'matplotlib', 'PIL', 'torch', 'tensorflow', 'jax'} & set(sys.modules)\n"
        "sys.exit(str(sorted(heavy)) if heavy else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_conversions_work_in_chunks() -> None:
    import tracemalloc

    x = np.random.default_rng(7).random((2, 1500, 1000, 3), dtype=np.float32)  # 36 MB
    converters: tuple[Callable[[np.ndarray], np.ndarray], ...] = (
        lambda a: to_uint8(a)[0],
        tf2_convert_image_dtype,
        lambda a: tf1_normalize_image(a),
    )
    for convert in converters:
        tracemalloc.start()
        try:
            out = convert(x)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        # the uint8 result (9 MB) plus chunk temporaries, never a float copy of the input
        assert peak < out.nbytes + 12 * 2**20, (convert, peak)


def test_value_errors_name_the_tag() -> None:
    with pytest.raises(
        TypeError,
        match=r"^'a': image must be numeric \(real numbers: bool, int or float\), "
        r"got an array of dtype complex64$",
    ):
        to_uint8(np.zeros(2, np.complex64), tag="a")
    with pytest.raises(
        TypeError,
        match=r"^'b': image must be numeric \(real numbers: int or float, not bool\), "
        r"got an array of dtype bool$",
    ):
        tf2_convert_image_dtype(np.zeros(2, np.bool_), tag="b")
    with pytest.raises(
        TypeError, match=r"^'d': image must be uint8 or float, got an array of dtype int16$"
    ):
        tf1_normalize_image(np.zeros((2, 2, 3), np.int16), tag="d")
    with pytest.raises(ValueError, match=r"^image 'c': TF1 .* got shape \(2, 2, 5\)"):
        tf1_normalize_image(np.zeros((2, 2, 5), np.float32), tag="c")
