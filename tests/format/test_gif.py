"""The NumPy GIF encoder: every frame decodes (with Pillow) to the input when the clip has at
most 256 colours, and to a close approximation otherwise; the LZW stream survives dictionary
resets; changed-region frames compose correctly."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from conftest import examples
from npsummary._format.gif import encode_gif, quantize

Image = pytest.importorskip("PIL.Image")


def decode(data: bytes) -> tuple[np.ndarray, dict[str, object]]:
    frames = []
    with Image.open(io.BytesIO(data)) as image:
        info = dict(image.info)
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
    return np.stack(frames), info


@st.composite
def few_colour_clips(draw: st.DrawFn) -> np.ndarray:
    palette_size = draw(st.integers(1, 256))
    palette = draw(hnp.arrays(np.uint8, (palette_size, 3)))
    shape = (draw(st.integers(1, 4)), draw(st.integers(1, 24)), draw(st.integers(1, 24)))
    index = draw(hnp.arrays(np.int64, shape, elements=st.integers(0, palette_size - 1)))
    return np.asarray(palette[index])


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(few_colour_clips(), st.integers(0, 500))
def test_at_most_256_colours_round_trip_exactly(clip: np.ndarray, delay: int) -> None:
    frames, info = decode(encode_gif(clip, delay))
    np.testing.assert_array_equal(frames, clip)
    assert info["loop"] == 0
    assert info.get("duration", 0) == delay * 10


def test_lzw_dictionary_resets_on_long_noise() -> None:
    # 200 x 200 pixels of 4 colours: far more than 4096 dictionary entries, several resets.
    rng = np.random.default_rng(1)
    clip = (rng.integers(0, 4, (2, 200, 200, 1)) * 80).repeat(3, axis=3).astype(np.uint8)
    frames, _ = decode(encode_gif(clip, 5))
    np.testing.assert_array_equal(frames, clip)


def test_many_colours_are_quantized_per_frame_close_to_the_input() -> None:
    rng = np.random.default_rng(2)
    gradient = np.linspace(0, 255, 64)
    base = np.stack([*np.meshgrid(gradient, gradient[::-1]), np.full((64, 64), 128.0)], axis=2)
    clip = np.stack([base, base[::-1], 255 - base]).astype(np.uint8)
    clip = np.clip(clip.astype(int) + rng.integers(-3, 4, clip.shape), 0, 255).astype(np.uint8)
    frames, _ = decode(encode_gif(clip, 10))
    error = np.abs(frames.astype(int) - clip)
    assert error.mean() < 6
    assert error.max() < 64


def test_quantize_keeps_a_frame_of_256_colours_exact_and_caps_larger_ones() -> None:
    rng = np.random.default_rng(3)
    frame = rng.integers(0, 256, (16, 16, 3)).astype(np.uint8)  # 256 distinct colours at most
    palette, index = quantize(frame)
    np.testing.assert_array_equal(palette[index], frame)
    big = rng.integers(0, 256, (64, 64, 3)).astype(np.uint8)
    palette, index = quantize(big)
    assert len(palette) == 256
    assert index.shape == (64, 64)


def test_unchanged_frames_keep_their_delay() -> None:
    clip = np.zeros((3, 8, 8, 3), dtype=np.uint8)
    clip[1, 2:4, 3:6] = 255
    frames, info = decode(encode_gif(clip, 25))
    np.testing.assert_array_equal(frames, clip)
    assert info["duration"] == 250


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="65535"):
        encode_gif(np.zeros((1, 0, 4, 3), dtype=np.uint8), 1)


def test_noise_is_stored_as_literals_and_still_decodes_exactly() -> None:
    rng = np.random.default_rng(4)
    palette = rng.integers(0, 256, (256, 3)).astype(np.uint8)
    clip = palette[rng.integers(0, 256, (3, 150, 130))]
    data = encode_gif(clip, 4)
    frames, _ = decode(data)
    np.testing.assert_array_equal(frames, clip)
    # 9-bit literals: about 9/8 of a byte per pixel, where a dictionary search expands noise.
    assert len(data) < 3 * 150 * 130 * 9 / 8 * 1.02 + 2000
