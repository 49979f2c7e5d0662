"""Images through both APIs: layouts, value rules, grids, figures; read back and PNG-decoded."""

from __future__ import annotations

import io
import warnings
from pathlib import Path
from typing import cast

import numpy as np
import pytest

import npsummary
from conftest import read_run
from npsummary import EventSink, MemorySink, NonFiniteWarning, SummaryWriter
from npsummary._imaging.pixels import tf2_convert_image_dtype
from npsummary.proto import Event
from paths import TESTS

Image = pytest.importorskip("PIL.Image")
tensor_util = pytest.importorskip("tensorboard.util.tensor_util")

GOLDEN = TESTS / "golden" / "image" / "tf2_convert.npz"


def _payloads(sink: EventSink) -> list[bytes]:
    """What a writer built on a MemorySink wrote (its ``sink`` property is typed EventSink)."""
    return cast(MemorySink, sink).payloads


def decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)))


def _images(sink: EventSink) -> list[tuple[str, int, list[bytes]]]:
    """(tag, step, [width, height, png]) of each event; SummaryWriter writes a Summary.Image
    without metadata, as tensorboardX and torch do."""
    out = []
    for payload in _payloads(sink):
        event = Event.FromString(payload)
        (value,) = event.summary.value
        assert value.WhichOneof("value") == "image"
        assert not value.HasField("metadata")
        image = value.image
        png = decode(image.encoded_image_string)
        assert (image.height, image.width) == png.shape[:2]
        assert image.colorspace == (png.shape[2] if png.ndim == 3 else 1)
        size = [str(image.width).encode(), str(image.height).encode()]
        out.append((value.tag, event.step, [*size, image.encoded_image_string]))
    return out


def test_add_image_layouts_and_value_rules() -> None:
    writer = SummaryWriter(MemorySink())
    chw = np.array([[[0.0, 0.5], [1.0, 1.5]], [[-0.2, 0.25], [0.999, 0.001]], [[0, 0], [0, 0]]])
    writer.add_image("chw", chw, 0)
    writer.add_image("hwc", chw.transpose(1, 2, 0), 1, dataformats="HWC")
    writer.add_image("hw", np.array([[0, 300], [-5, 128]], dtype=np.int32), 2, dataformats="HW")
    writer.add_image("bool", np.array([[True, False]]), 3, dataformats="HW")
    writer.add_image("u8", np.full((4, 3, 2), 77, np.uint8), 4, dataformats="HWC")
    (chw_img, hwc_img, hw_img, bool_img, u8_img) = _images(writer.sink)
    expected = np.array(
        [[[0, 0, 0], [127, 63, 0]], [[255, 254, 0], [255, 0, 0]]], dtype=np.uint8
    )  # floats as torch converts them: x * 255 clipped to [0, 255] and truncated, never wrapped
    for tag, _, strings in (chw_img, hwc_img):
        assert strings[:2] == [b"2", b"2"], tag
        np.testing.assert_array_equal(decode(strings[2]), expected)
    rgb = decode(hw_img[2][2])
    assert rgb.shape == (2, 2, 3)  # one channel becomes RGB, as tensorboardX and torch write it
    # Integers too are read as [0, 1] and multiplied by 255 (an int 0/1 mask is black and white)
    np.testing.assert_array_equal(rgb[..., 0], [[0, 255], [0, 255]])
    assert (rgb == rgb[..., :1]).all()
    np.testing.assert_array_equal(decode(bool_img[2][2])[..., 0], [[255, 0]])
    assert u8_img[2][:2] == [b"3", b"4"]
    np.testing.assert_array_equal(decode(u8_img[2][2]), np.full((4, 3, 2), 77))


def test_nan_pixels_become_zero_with_one_warning_per_tag() -> None:
    writer = SummaryWriter(MemorySink())
    img = np.array([[np.nan, 1.0]])
    with pytest.warns(NonFiniteWarning, match="'nan': 1 NaN pixel"):
        writer.add_image("nan", img, 0, dataformats="HW")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        writer.add_image("nan", img, 1, dataformats="HW")
    for _, _, strings in _images(writer.sink):
        np.testing.assert_array_equal(decode(strings[2])[..., 0], [[0, 255]])


@pytest.mark.parametrize(
    "shape, formats",
    [((5, 8, 8), "CHW"), ((8, 8), "CHW"), ((2, 3, 8, 8, 1), "NCHW"), ((8, 8, 3), "HWCN")],
)
def test_wrong_layout_names_shape_and_layout(shape: tuple[int, ...], formats: str) -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(ValueError, match=r"'img'.*" + r"\(" + ", ".join(map(str, shape))):
        writer.add_image("img", np.zeros(shape), 0, dataformats=formats)
    assert _payloads(writer.sink) == []
    writer.add_image("img", np.zeros((3, 2, 2)), 1)
    assert len(_payloads(writer.sink)) == 1


def test_add_images_tiles_a_batch() -> None:
    writer = SummaryWriter(MemorySink())
    batch = np.arange(10 * 3 * 4 * 5, dtype=np.uint8).reshape(10, 3, 4, 5)
    writer.add_images("batch", batch, 0)
    writer.add_images("nhwc", batch.transpose(0, 2, 3, 1), 1, dataformats="NHWC")
    writer.add_images("list", list(batch[:2]), 2)
    grid, nhwc, listed = _images(writer.sink)
    assert grid[2][:2] == [b"40", b"8"]  # 8 columns x 2 rows of 5x4 tiles
    pixels = decode(grid[2][2])
    np.testing.assert_array_equal(pixels[:4, :5], batch[0].transpose(1, 2, 0))
    np.testing.assert_array_equal(pixels[4:8, 5:10], batch[9].transpose(1, 2, 0))
    assert (pixels[4:8, 10:] == 0).all()
    np.testing.assert_array_equal(decode(nhwc[2][2]), pixels)
    assert listed[2][:2] == [b"10", b"4"]


def test_filters_and_feature_maps_are_normalised_grids() -> None:
    writer = SummaryWriter(MemorySink())
    rng = np.random.default_rng(3)
    writer.add_filters("conv1", rng.normal(size=(5, 5, 1, 4)), 0)  # HWIO, gray tiles
    writer.add_filters("conv_rgb", rng.normal(size=(6, 3, 3, 3)), 0, layout="OIHW")
    writer.add_feature_maps("act", rng.normal(size=(2, 9, 6, 6)), 0)
    kernels, rgb, maps = (decode(s[2]) for _, _, s in _images(writer.sink))
    assert kernels.ndim == 2 and kernels.max() == 255 and kernels.min() == 0
    assert rgb.ndim == 3 and rgb.shape[2] == 3
    assert maps.ndim == 2 and maps.shape == (3 * 7 + 1, 3 * 7 + 1)
    with pytest.raises(ValueError, match=r"'bad'.*layout"):
        writer.add_filters("bad", np.zeros((3, 3, 3)), 0)


def test_add_figure_renders_through_agg() -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    writer = SummaryWriter(MemorySink())
    figure = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [0, 1])
    writer.add_figure("fig", figure, 0)
    assert not plt.fignum_exists(figure.number)  # close=True closed it
    figures = [plt.figure(figsize=(1, 1), dpi=40) for _ in range(3)]
    writer.add_figure("figs", figures, 1, close=False)
    assert all(plt.fignum_exists(f.number) for f in figures)
    plt.close("all")
    single, many = _images(writer.sink)
    assert single[2][:2] == [b"100", b"50"]
    assert decode(single[2][2]).shape == (50, 100, 3)
    assert many[2][:2] == [b"120", b"40"]


def test_tf_image_matches_tensorflow_conversion(logdir: Path) -> None:
    golden = np.load(GOLDEN)
    data = golden["float32_in"].astype(np.float32)
    batch = np.broadcast_to(data.reshape(1, 1, -1, 1), (4, 2, data.size, 3)).copy()
    writer = npsummary.create_file_writer(str(logdir))
    with writer.as_default(step=2):
        assert npsummary.image("img", batch, max_outputs=2, description="d") is True
    writer.close()
    acc = read_run(logdir)
    (event,) = acc.Tensors("img")
    strings = tensor_util.make_ndarray(event.tensor_proto)
    assert strings.shape == (4,)
    assert strings[0] == str(data.size).encode() and strings[1] == b"2"
    expected = golden["float32_out"].reshape(-1)
    for png in strings[2:]:
        pixels = decode(png)
        assert pixels.shape == (2, data.size, 3)
        np.testing.assert_array_equal(pixels[0, :, 0], expected)
        np.testing.assert_array_equal(pixels, tf2_convert_image_dtype(batch[0]))
    assert acc.SummaryMetadata("img").plugin_data.plugin_name == "images"
    other = npsummary.create_file_writer(MemorySink())
    with other.as_default(step=1), pytest.raises(ValueError, match=r"'img'.*\[k, h, w, c\]"):
        npsummary.image("img", np.zeros((2, 2, 3)))


def test_tensorboardx_flavour_wraps_and_survives_non_finite_pixels() -> None:
    # tensorboardX: (x * 255.0).astype(uint8), no clipping; NaN and inf never stop the run.
    row = np.array([[0.5, 1.5, -0.2, np.nan, np.inf, -np.inf]])
    boxes = np.zeros((0, 4))
    video = np.broadcast_to(row, (1, 2, 1, 1, 6))
    for flavour, expected in (
        (npsummary.TensorboardXSummaryWriter, [127, 126, 205, 0, 0, 0]),
        (SummaryWriter, [127, 255, 0, 0, 255, 0]),
    ):
        writer = flavour(MemorySink())
        for method, tag, args in (
            ("add_image", "img", (row, 0, None, "HW")),
            ("add_image_with_boxes", "boxed", (row[None], boxes, 0)),
            ("add_video", "vid", (video, 0)),
        ):
            with pytest.warns(NonFiniteWarning, match=f"'{tag}'.*NaN"):
                getattr(writer, method)(tag, *args)
        values = [Event.FromString(p).summary.value[0] for p in _payloads(writer.sink)]
        for value in values[:2]:
            assert decode(value.image.encoded_image_string)[0, :, 0].tolist() == expected
        with Image.open(io.BytesIO(values[2].image.encoded_image_string)) as gif:
            assert np.asarray(gif.convert("RGB"))[0, :, 0].tolist() == expected
