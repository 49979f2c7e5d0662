"""Boxes drawn in NumPy where torch's Pillow drawing puts them; labels, rescale and errors."""

from __future__ import annotations

import io
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary import MemorySink, SummaryWriter, proto
from npsummary._imaging.boxes import draw_boxes, resize_lanczos
from npsummary._summaries.image_boxes import image_boxes_value

pytestmark = pytest.mark.torch

Image = pytest.importorskip("PIL.Image")


def _pixels(value: bytes) -> tuple[Any, np.ndarray]:
    image = proto.SummaryValue.FromString(value).image
    with Image.open(io.BytesIO(image.encoded_image_string)) as png:
        return image, np.asarray(png)


def _torch_pixels(img: np.ndarray, boxes: np.ndarray, **kwargs: Any) -> tuple[Any, np.ndarray]:
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")
    summary = torch_summary.image_boxes("t", img, boxes, **kwargs)
    return _pixels(summary.value[0].SerializeToString())


coordinate = st.integers(-5, 45)


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.tuples(coordinate, coordinate, coordinate, coordinate), max_size=4))
def test_outlines_match_torch_pixel_for_pixel(corners: list[tuple[int, int, int, int]]) -> None:
    rng = np.random.default_rng(len(corners))
    img = rng.random((3, 30, 40)).astype(np.float32)
    boxes = np.array(
        [(min(a, c), min(b, d), max(a, c), max(b, d)) for a, b, c, d in corners], dtype=float
    ).reshape(-1, 4)
    ours = _pixels(image_boxes_value("t", img, boxes, 1, "CHW", None, lambda *a: None))
    theirs = _torch_pixels(img, boxes)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert (ours[0].height, ours[0].width, ours[0].colorspace) == (30, 40, 3)


def test_labels_and_rescale_match_torch() -> None:
    rng = np.random.default_rng(1)
    img = (rng.random((24, 32, 3)) * 255).astype(np.uint8)
    boxes = np.array([[2.0, 3.0, 20.0, 18.0], [10.0, 12.0, 30.0, 22.0]])
    ours = image_boxes_value("t", img, boxes, 1, "HWC", ["cat", "dog"], lambda *a: None)
    theirs = _torch_pixels(img, boxes, dataformats="HWC", labels=["cat", "dog"])
    np.testing.assert_array_equal(_pixels(ours)[1], theirs[1])
    ours = image_boxes_value("t", img, boxes, 1.5, "HWC", ["cat", "dog"], lambda *a: None)
    theirs = _torch_pixels(img, boxes, dataformats="HWC", labels=["cat", "dog"], rescale=1.5)
    assert np.abs(_pixels(ours)[1].astype(int) - theirs[1]).max() <= 1  # resampling rounding
    fields = ("height", "width", "colorspace")
    assert [getattr(_pixels(ours)[0], f) for f in fields] == [getattr(theirs[0], f) for f in fields]


def test_without_pillow_a_label_is_its_red_rectangle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    image = np.zeros((30, 30, 3), dtype=np.uint8)
    drawn = draw_boxes(image, np.array([[2, 2, 25, 25]]), ["ab"])
    red = np.all(drawn == [255, 0, 0], axis=2)
    # 2 characters of 5 px, 8 px high plus a 1 px margin each side, above the bottom edge.
    assert red[25 - 10 : 26, 2 : 2 + 11].all()
    assert not red[12, 14]


def test_resize_is_pillows_lanczos_within_rounding() -> None:
    rng = np.random.default_rng(2)
    image = rng.integers(0, 256, (40, 50, 3)).astype(np.uint8)
    for height, width in [(20, 25), (80, 100), (13, 17)]:
        pillow = np.asarray(Image.fromarray(image).resize((width, height), Image.LANCZOS))
        ours = resize_lanczos(image, height, width)
        assert np.abs(pillow.astype(int) - ours).max() <= 1


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"box_tensor": np.zeros((2, 3))}, ValueError, r"\[N, 4\]"),
        ({"box_tensor": np.array([[0, 0, np.nan, 1]])}, ValueError, "NaN"),
        ({"labels": ["a", "b"]}, ValueError, "2 labels for 1 boxes"),
        ({"labels": [1]}, TypeError, "labels"),
        ({"img_tensor": np.zeros((2, 3, 4, 4))}, ValueError, "dataformats"),
        ({"rescale": "x", "dataformats": "CHW"}, TypeError, "rescale"),
        ({"rescale": 0.0}, ValueError, "rescale"),
    ],
)
def test_bad_input_raises_naming_the_tag(kwargs: dict[str, Any], error: type, match: str) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    arguments: dict[str, Any] = {
        "img_tensor": np.zeros((3, 8, 8)),
        "box_tensor": np.array([[1, 1, 5, 5]]),
    }
    arguments.update(kwargs)
    if arguments.get("rescale") == "x":
        with pytest.raises(TypeError, match="rescale"):
            image_boxes_value(
                "my_img", np.zeros((3, 8, 8)), np.zeros((0, 4)), "x", "CHW", None, print
            )
        return
    with pytest.raises(error, match=match) as info:
        writer.add_image_with_boxes("my_img", **arguments)
    assert "my_img" in str(info.value)
    assert sink.payloads == []


def test_tensorboardx_positional_order_is_accepted() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    # tensorboardX: (tag, img, boxes, global_step, walltime, dataformats, labels)
    writer.add_image_with_boxes(
        "t", np.zeros((8, 8, 3)), np.array([[1, 1, 5, 5]]), 1, None, "HWC", ["x"]
    )
    (value,) = proto.Event.FromString(sink.payloads[0]).summary.value
    assert (value.image.height, value.image.width) == (8, 8)


def test_resize_in_blocks_equals_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # The blocks bound memory; the pixels must not depend on the block size.
    from npsummary._imaging import boxes as _boxes

    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (23, 17, 3), dtype=np.uint8)
    whole = _boxes.resize_lanczos(image, 61, 40)
    monkeypatch.setattr(_boxes, "_BLOCK_ELEMENTS", 50)
    assert np.array_equal(_boxes.resize_lanczos(image, 61, 40), whole)


def test_rescale_memory_is_bounded_by_the_output() -> None:
    # Found by HYPOTHESIS_PROFILE=explore: a large rescale of a tiny image held several float64
    # copies of the result (23 GB for a 4x5 image), and the run was OOM-killed.
    import tracemalloc

    writer = SummaryWriter(MemorySink())
    image, boxes = np.zeros((3, 4, 5), np.uint8), np.array([[0.0, 0.0, 2.0, 3.0]])
    tracemalloc.start()
    try:
        writer.add_image_with_boxes("big", image, boxes, rescale=800)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    output = 3200 * 4000 * 3
    assert peak < 3 * output + (64 << 20)
    with pytest.raises(ValueError, match=r"big.*rescale"):
        writer.add_image_with_boxes("big", image, boxes, rescale=5000)
