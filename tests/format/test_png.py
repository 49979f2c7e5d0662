"""PNG encoder: Pillow and an independent decoder get the exact pixels back; structure, filter
choice, compression choice and input errors."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from conftest import examples
from npsummary._format import png as _png
from npsummary._format.png import encode_png

MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
COLOR_TYPES = {0: 1, 4: 2, 2: 3, 6: 4}


def pillow_decode(data: bytes) -> tuple[str, np.ndarray]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        image.load()
        return image.mode, np.asarray(image)


def chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """(type, payload) of every chunk, checking the signature, lengths and CRCs."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, payload = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + payload), kind
        out.append((kind, payload))
        pos += 12 + length
    assert pos == len(data)
    return out


def paeth_predictor(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    a, b, c = (v.astype(np.int32) for v in (a, b, c))
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def paeth_scalar(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def own_decode(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Independent decoder: (pixels [H, W, C], filter type per row); sequential unfiltering."""
    parts = chunks(data)
    kinds = [k for k, _ in parts]
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    assert set(kinds[1:-1]) == {b"IDAT"}, kinds  # nothing else is written
    width, height, depth, ctype, comp, filt, interlace = struct.unpack(">IIBBBBB", parts[0][1])
    assert (depth, comp, filt, interlace) == (8, 0, 0, 0)
    channels = COLOR_TYPES[ctype]
    raw = np.frombuffer(zlib.decompress(b"".join(p for k, p in parts if k == b"IDAT")), np.uint8)
    stride = width * channels + 1
    assert raw.size == height * stride
    rows = raw.reshape(height, stride)
    types = rows[:, 0].copy()
    out = np.zeros((height, width * channels), np.int32)
    prev = np.zeros(width * channels, np.int32)
    for y in range(height):
        f, line = int(types[y]), rows[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) % 256
        else:
            cur = np.zeros_like(line)
            for i in range(line.size):
                a = int(cur[i - channels]) if i >= channels else 0
                c = int(prev[i - channels]) if i >= channels else 0
                b = int(prev[i])
                pred = {1: a, 3: (a + b) // 2, 4: paeth_scalar(a, b, c)}[f]
                cur[i] = (line[i] + pred) % 256
        out[y], prev = cur, cur
    return out.reshape(height, width, channels).astype(np.uint8), types


def reference_filter_types(image: np.ndarray) -> np.ndarray:
    """Per-row filter Pillow chooses: None, Up, Sub, Paeth tried in that order, the first with
    the minimum sum of |residual as int8| (Average only with Pillow's ``optimize``)."""
    h, w, c = image.shape
    x = image.reshape(h, w * c).astype(np.int32)
    a = np.zeros_like(x)
    a[:, c:] = x[:, :-c]
    b = np.zeros_like(x)
    b[1:] = x[:-1]
    cc = np.zeros_like(x)
    cc[1:] = a[:-1]
    order = {0: np.zeros_like(x), 2: b, 1: a, 4: paeth_predictor(a, b, cc)}
    costs = []
    for pred in order.values():
        residual = ((x - pred) % 256).astype(np.uint8).view(np.int8).astype(np.int32)
        costs.append(np.abs(residual).sum(axis=1))
    filters: np.ndarray = np.array(list(order))[np.argmin(np.stack(costs), axis=0)]
    return filters


def expected_decoded(pixels: np.ndarray) -> np.ndarray:
    return pixels[:, :, 0] if pixels.ndim == 3 and pixels.shape[2] == 1 else pixels


def roundtrip(pixels: np.ndarray, **kwargs: int) -> bytes:
    data = encode_png(pixels, **kwargs)
    mode, decoded = pillow_decode(data)
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    assert mode == MODES[channels]
    np.testing.assert_array_equal(decoded, expected_decoded(pixels))
    return data


def make_pixels(kind: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "noise":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if kind == "constant":
        return np.full(shape, rng.integers(0, 256), np.uint8)
    if kind == "sparse":
        return ((rng.random(shape) < 0.1) * rng.integers(0, 256, shape)).astype(np.uint8)
    if kind == "smooth":
        y, x = np.indices(shape[:2]) / max(shape[:2])
        layers = [np.sin(2 * np.pi * (k + 1) * (x + y * y)) for k in range(shape[2])]
        return np.rint(127.5 + 127.5 * np.stack(layers, -1)).astype(np.uint8)
    # gradient with wrap-around and a little noise: exercises Sub/Up/Paeth
    grid: np.ndarray = np.indices(shape).sum(axis=0) * rng.integers(1, 9)
    return ((grid + rng.integers(0, 3, shape)) % 256).astype(np.uint8)


@pytest.mark.fuzz
@settings(max_examples=examples(150), deadline=None)
@given(
    height=st.integers(1, 24),
    width=st.integers(1, 24),
    channels=st.sampled_from([0, 1, 2, 3, 4]),
    kind=st.sampled_from(["noise", "constant", "sparse", "gradient"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_roundtrip_small_any_layout(
    height: int, width: int, channels: int, kind: str, seed: int
) -> None:
    shape = (height, width) if channels == 0 else (height, width, channels)
    pixels = make_pixels(kind, shape, seed)
    data = roundtrip(pixels)
    hwc = pixels.reshape(height, width, -1)
    decoded, types = own_decode(data)
    np.testing.assert_array_equal(decoded, hwc)
    np.testing.assert_array_equal(types, reference_filter_types(hwc))


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(
    height=st.integers(1, 300),
    width=st.integers(1, 300),
    channels=st.sampled_from([1, 2, 3, 4]),
    kind=st.sampled_from(["noise", "sparse", "gradient"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_roundtrip_medium(height: int, width: int, channels: int, kind: str, seed: int) -> None:
    roundtrip(make_pixels(kind, (height, width, channels), seed))


@pytest.mark.parametrize("channels", [0, 1, 2, 3, 4])
def test_one_pixel(channels: int) -> None:
    for value in (0, 1, 127, 128, 255):
        shape = (1, 1) if channels == 0 else (1, 1, channels)
        roundtrip(np.full(shape, value, np.uint8))


@pytest.mark.parametrize("shape", [(1, 5000), (5000, 1), (1, 5000, 3), (5000, 1, 4), (2, 70000, 3)])
def test_single_row_and_column(shape: tuple[int, ...]) -> None:
    for kind in ("noise", "gradient"):
        roundtrip(make_pixels(kind, shape, 7))


@pytest.mark.parametrize("kind", ["noise", "gradient", "sparse", "smooth"])
def test_large_rgb(kind: str) -> None:
    roundtrip(make_pixels(kind, (1200, 1700, 3), 3))


def test_mixed_content_uses_one_stream_correctly() -> None:
    noise = make_pixels("noise", (400, 500, 3), 1)
    smooth = make_pixels("gradient", (400, 500, 3), 2)
    roundtrip(np.concatenate([noise, smooth]))
    roundtrip(np.concatenate([smooth, noise]))


@pytest.mark.parametrize("level", range(10))
def test_explicit_levels(level: int) -> None:
    pixels = make_pixels("gradient", (150, 170, 3), level)
    data = roundtrip(pixels, compress_level=level)
    if level == 0:  # stored blocks: larger than the raw scanlines
        assert len(data) > pixels.size


def test_compression_choice_from_sample() -> None:
    def choice(pixels: np.ndarray) -> int:
        return _png._choose_compression(_png._RowFilter(pixels))

    assert choice(make_pixels("noise", (512, 512, 3), 0)) == zlib.Z_HUFFMAN_ONLY
    assert choice(make_pixels("smooth", (512, 512, 3), 0)) == zlib.Z_FILTERED
    # Small noise on a gradient: residuals have low entropy but no repeats, Huffman suits them.
    assert choice(make_pixels("gradient", (512, 512, 3), 0)) == zlib.Z_HUFFMAN_ONLY
    # Noise tiles repeated along each row: only string matching finds the redundancy.
    tile = make_pixels("noise", (512, 32, 3), 0)
    tiled = np.tile(tile, (1, 16, 1))
    assert choice(tiled) == zlib.Z_FILTERED
    assert len(roundtrip(tiled)) < tiled.nbytes // 4


def test_noise_is_not_inflated() -> None:
    pixels = make_pixels("noise", (300, 400, 3), 5)
    data = roundtrip(pixels)
    assert len(data) < pixels.nbytes * 1.01 + 100


def test_small_and_large_paths_agree_on_pixels() -> None:
    pixels = make_pixels("gradient", (100, 100, 3), 9)  # 30 KiB: no sampling
    assert len(pixels.tobytes()) <= _png._SMALL_BYTES
    roundtrip(pixels)


def test_many_idat_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_png, "_MAX_CHUNK", 1000)
    pixels = make_pixels("noise", (60, 70, 3), 4)
    data = roundtrip(pixels)
    idats = [p for k, p in chunks(data) if k == b"IDAT"]
    assert len(idats) > 10
    assert all(len(p) <= 1000 for p in idats)
    np.testing.assert_array_equal(own_decode(data)[0], pixels)


def test_deterministic_and_layout_independent() -> None:
    base = make_pixels("gradient", (90, 130, 3), 11)
    data = encode_png(base)
    assert encode_png(base.copy()) == data
    assert encode_png(np.asfortranarray(base)) == data
    flipped = base[::-1, ::-1].copy()[::-1, ::-1]  # negative-stride view of the same values
    assert encode_png(flipped) == data
    transposed = np.ascontiguousarray(base.transpose(1, 0, 2)).transpose(1, 0, 2)
    assert encode_png(transposed) == data
    readonly = np.frombuffer(base.tobytes(), np.uint8).reshape(base.shape)
    assert encode_png(readonly) == data
    assert encode_png(base[:, :, :1]) == encode_png(base[:, :, 0])


def test_ihdr_fields() -> None:
    for channels, ctype in ((1, 0), (2, 4), (3, 2), (4, 6)):
        data = encode_png(np.zeros((3, 5, channels), np.uint8))
        kind, payload = chunks(data)[0]
        assert kind == b"IHDR"
        assert struct.unpack(">IIBBBBB", payload) == (5, 3, 8, ctype, 0, 0, 0)


@pytest.mark.parametrize("by_table", [False, True], ids=["arithmetic", "table"])
def test_paeth_matches_definition_exhaustively(by_table: bool) -> None:
    ab = np.indices((256, 256), dtype=np.uint8).reshape(2, -1)
    a, b = ab[0], ab[1]
    up_left = np.stack([b, a])
    x = np.zeros_like(a)
    work = np.empty((4, a.size), np.uint8)
    masks, same = np.empty((3, a.size), np.bool_), np.empty(a.size, np.bool_)
    differences, index = np.empty((2, a.size), np.int16), np.empty(a.size, np.int32)
    gathered = differences.view(np.uint8)[0, : a.size]  # sharing their memory, as encode does
    out = np.empty_like(a)
    for c_value in range(256):
        c = np.full_like(a, c_value)
        if by_table:
            _png._paeth_by_table(x, up_left, c, differences, index, gathered, out)
        else:
            _png._paeth(x, up_left, c, work, masks, same, out)
        predicted = (-out.astype(np.int32)) % 256
        np.testing.assert_array_equal(predicted, paeth_predictor(a, b, c), err_msg=str(c_value))


def reference_filtered(image: np.ndarray) -> bytes:
    """The filtered scanlines, straightforwardly: per row Pillow's choice, then its residuals."""
    h, w, c = image.shape
    x = image.reshape(h, w * c).astype(np.int32)
    a = np.zeros_like(x)
    a[:, c:] = x[:, :-c]
    b = np.zeros_like(x)
    b[1:] = x[:-1]
    cc = np.zeros_like(x)
    cc[1:] = a[:-1]
    predictors = {0: np.zeros_like(x), 2: b, 1: a, 4: paeth_predictor(a, b, cc)}
    types = reference_filter_types(image)
    rows = [
        np.concatenate([[kind], (x[y] - predictors[int(kind)][y]) % 256])
        for y, kind in enumerate(types)
    ]
    return np.array(rows, np.uint8).tobytes()


@pytest.mark.fuzz
@settings(max_examples=examples(100), deadline=None)
@given(
    height=st.integers(1, 40),
    width=st.integers(1, 40),
    channels=st.integers(1, 4),
    kind=st.sampled_from(["noise", "constant", "sparse", "gradient", "extremes"]),
    block_bytes=st.sampled_from([1, 50, 200, 1 << 17]),
    small_block=st.sampled_from([0, 1 << 30]),
    layout=st.sampled_from(["C", "CHW view", "reversed", "every other column"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_filter_is_the_reference_filter(
    height: int,
    width: int,
    channels: int,
    kind: str,
    block_bytes: int,
    small_block: int,
    layout: str,
    seed: int,
) -> None:
    # The filter works on flat shifted slices of one buffer, by blocks of rows: odd widths,
    # bpp 1..4, one or two rows, every block boundary (down to one row a block) and strided
    # inputs must all give the straightforward per-row filtering, with the large blocks' path
    # (Paeth by arithmetic, integer costs) and the small blocks' (by table, float32 costs).
    if kind == "extremes":  # residuals of exactly -128 and ties between the filters
        rng = np.random.default_rng(seed)
        pixels = rng.choice(
            np.array([0, 1, 127, 128, 129, 255], np.uint8), (height, width, channels)
        )
    else:
        pixels = make_pixels(kind, (height, width, channels), seed)
    if layout == "CHW view":
        view = np.ascontiguousarray(pixels.transpose(2, 0, 1)).transpose(1, 2, 0)
    elif layout == "reversed":
        view = pixels[::-1, ::-1].copy()[::-1, ::-1]
    elif layout == "every other column":
        view = np.repeat(pixels, 2, axis=1)[:, ::2]
    else:
        view = pixels
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_png, "_BLOCK_BYTES", block_bytes)
        patch.setattr(_png, "_SMALL_BLOCK", small_block)
        filt = _png._RowFilter(view)
        got = b"".join(bytes(filt.filter(*block)) for block in filt.blocks())
        assert got == reference_filtered(pixels)
        if filt.height > filt.block_rows:  # blocks filtered out of order, as the sampling does
            last = filt.blocks()[-1]
            first = filt.blocks()[0]
            assert bytes(filt.filter(*last)) + bytes(filt.filter(*first)) == (
                got[last[0] * (filt.rowlen + 1) :] + got[: first[1] * (filt.rowlen + 1)]
            )


@pytest.mark.parametrize(
    "bad",
    [np.zeros((2, 2), np.float32), np.zeros((2, 2), np.int16), [[0, 1]], np.zeros((2, 2), bool)],
)
def test_wrong_type(bad: object) -> None:
    with pytest.raises(TypeError, match="uint8"):
        encode_png(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "shape", [(0, 5), (5, 0), (0, 0, 3), (4,), (2, 2, 5), (2, 2, 0), (1, 2, 2, 3)]
)
def test_wrong_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"got shape \(" + r",\s*".join(map(str, shape))):
        encode_png(np.zeros(shape, np.uint8))


@pytest.mark.parametrize("level", [-1, 10, 2.0, True, "6"])
def test_wrong_level(level: object) -> None:
    with pytest.raises((TypeError, ValueError), match="compress_level"):
        encode_png(np.zeros((2, 2), np.uint8), compress_level=level)  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", ["HWC", "CHW view"])
def test_memory_stays_block_sized(layout: str) -> None:
    import tracemalloc

    pixels = make_pixels("smooth", (2048, 2048, 3), 0)  # 12 MiB, compresses to ~1.6 MiB
    if layout == "CHW view":  # what to_hwc returns for CHW input: a strided view
        pixels = np.ascontiguousarray(pixels.transpose(2, 0, 1)).transpose(1, 2, 0)
    tracemalloc.start()
    try:
        data = encode_png(pixels)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Filter buffers are ~2.5 MiB whatever the image size; the rest is the compressed output
    # (held once as pieces and once joined). One full-size temporary would add 12 MiB.
    assert peak - 2 * len(data) < 4 * 2**20, (peak, len(data))


def _same_zlib_as_pillow() -> bool:
    from PIL import features

    return bool(features.version("zlib") == zlib.ZLIB_RUNTIME_VERSION)


@pytest.mark.fuzz
@settings(max_examples=examples(60), deadline=None)
@given(
    height=st.integers(1, 60),
    width=st.integers(1, 60),
    channels=st.sampled_from([0, 2, 3, 4]),
    kind=st.sampled_from(["noise", "constant", "sparse", "gradient", "smooth"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_small_images_are_pillows_bytes(
    height: int, width: int, channels: int, kind: str, seed: int
) -> None:
    # tensorboardX's own tests compare the PNG bytes of small images with Pillow's: up to 64 KiB
    # of filtered data npsummary filters and deflates as Pillow does (same zlib needed).
    if not _same_zlib_as_pillow():
        pytest.skip("Pillow bundles another zlib than Python's")
    shape = (height, width) if channels == 0 else (height, width, channels)
    if kind == "smooth" and channels == 0:
        shape = (height, width, 1)
    pixels = make_pixels(kind, shape, seed)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    assert encode_png(pixels) == out.getvalue()


def _issue_29_gradient(n: int = 256) -> np.ndarray:
    y, x = np.mgrid[0:n, 0:n]
    return np.stack([x * 255 // n, y * 255 // n, (x + y) * 127 // n], -1).astype(np.uint8)


def _ramp(height: int, width: int, channels: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = [
        127.5 + (x * np.cos(t) + y * np.sin(t)) / max(height, width) * rng.uniform(100, 255)
        for t in rng.uniform(0, 2 * np.pi, channels)
    ]
    ramp: np.ndarray = np.clip(np.stack(planes, -1), 0, 255).astype(np.uint8)
    return ramp


SMOOTH_LARGE = {
    "issue 29 gradient": _issue_29_gradient(),
    "ramp 512 gray": _ramp(512, 512, 1, 1)[:, :, 0],
    "ramp 300x200 RGBA": _ramp(200, 300, 4, 2),
    "ramp 512 RGB": _ramp(512, 512, 3, 3),
}


def _one_level_6_stream(filtered: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_FILTERED)  # Pillow's settings
    return compressor.compress(filtered) + compressor.flush()


@pytest.mark.parametrize("name", sorted(SMOOTH_LARGE))
def test_smooth_images_are_no_larger_than_pillows(name: str) -> None:
    # Issue 29: the issue's gradient was 1.013x Pillow's size (two level-6 streams joined). A
    # smooth image is one stream at Pillow's settings, or, when level 6 is slow on it, two
    # parts of which the second is deflated at level 7: never larger than Pillow's stream.
    pixels = SMOOTH_LARGE[name]
    hwc = pixels.reshape(pixels.shape[0], pixels.shape[1], -1)
    data = roundtrip(pixels)
    idat = b"".join(p for k, p in chunks(data) if k == b"IDAT")
    single = _one_level_6_stream(zlib.decompress(idat))
    assert len(idat) <= len(single)
    filt = _png._RowFilter(hwc)
    if not _png._slow_to_deflate(filt, filt.filter(*filt.blocks()[0]).reshape(-1).data):
        assert idat == single
    np.testing.assert_array_equal(own_decode(data)[0], hwc)


def test_which_smooth_images_are_split() -> None:
    def split(pixels: np.ndarray) -> bool:
        filt = _png._RowFilter(pixels.reshape(pixels.shape[0], pixels.shape[1], -1))
        return _png._slow_to_deflate(filt, filt.filter(*filt.blocks()[0]).reshape(-1).data)

    assert not split(SMOOTH_LARGE["issue 29 gradient"])  # level 6 takes ~6 ns per byte
    assert not split(SMOOTH_LARGE["ramp 512 gray"])
    assert split(SMOOTH_LARGE["ramp 512 RGB"])  # ~15-20 ns per byte
    assert split(make_pixels("smooth", (400, 400, 3), 0))
    assert not split(make_pixels("smooth", (200, 200, 3), 0))  # under 128 KiB: one stream


@pytest.mark.parametrize("name", sorted(SMOOTH_LARGE))
def test_smooth_images_against_pillow(name: str) -> None:
    if not _same_zlib_as_pillow():
        pytest.skip("Pillow bundles another zlib than Python's")
    out = io.BytesIO()
    Image.fromarray(SMOOTH_LARGE[name]).save(out, format="PNG")
    ours = encode_png(SMOOTH_LARGE[name])
    assert len(ours) <= len(out.getvalue())
    if name in ("issue 29 gradient", "ramp 512 gray"):  # one stream: Pillow's bytes
        assert ours == out.getvalue()


def test_smooth_images_are_not_sampled(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sampling(filt: object) -> int:
        raise AssertionError("sampled")

    monkeypatch.setattr(_png, "_choose_compression", no_sampling)
    for pixels in SMOOTH_LARGE.values():
        encode_png(pixels)
    with pytest.raises(AssertionError, match="sampled"):
        encode_png(make_pixels("noise", (300, 300, 3), 0))


def test_reused_filter_gives_each_image_its_own_bytes() -> None:
    # A thread reuses its last small filter for an image of the same shape: nothing of the
    # previous image (its rows, the row above the first, its costs) may leak into the next.
    images = [make_pixels(kind, (30, 17, 3), seed) for seed, kind in enumerate(["noise"] * 2)]
    images += [make_pixels("gradient", (30, 17, 3), 5), np.zeros((30, 17, 3), np.uint8)]
    for pixels in images + images[::-1]:
        data = encode_png(pixels)
        decoded, types = own_decode(data)
        np.testing.assert_array_equal(decoded, pixels)
        np.testing.assert_array_equal(types, reference_filter_types(pixels))


def test_reused_filter_keeps_no_reference_to_the_image() -> None:
    import gc
    import weakref

    base = make_pixels("noise", (400, 400, 3), 1)
    ref = weakref.ref(base)
    encode_png(base[:20, :20])  # a small view: its filter is kept for the next image
    del base
    gc.collect()
    assert ref() is None
