"""PNG decoding with NumPy and the standard library's zlib: the reader's half of :mod:`.png`.

Supported: bit depth 8 (and 16) for gray, gray + alpha, RGB and RGBA; bit depths 1, 2 and 4 for
gray (scaled to 0..255) and palette images (with ``tRNS`` transparency); all five scanline
filters; no interlace (TensorFlow, Pillow and npsummary never interlace). Output:
``[height, width, channels]`` uint8 (uint16 for 16-bit images), palette images expanded to RGB,
or RGBA when the palette has transparency.

Every chunk's CRC is checked, and decompression is bounded by the size the header implies, so a
malformed or hostile file raises :class:`ValueError` rather than allocating without limit.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["MAX_IMAGE_PIXELS", "decode_image", "decode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type -> samples per pixel
MAX_IMAGE_PIXELS = 1 << 26
"""Default limit on an image's decoded size, in pixels (frames x height x width for a GIF):
67,108,864, e.g. 8192 x 8192, 256 MiB as RGBA. Larger images are refused before any pixel is
decoded; callers raise the limit with ``max_pixels`` (``reader.load(max_image_pixels=...)``)."""


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG file (bad signature)")
    out = []
    pos = len(_SIGNATURE)
    while pos + 12 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, pos)
        end = pos + 12 + length
        if end > len(data):
            raise ValueError(f"PNG chunk {kind!r} runs past the end of the file")
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack_from(">I", data, end - 4)
        if zlib.crc32(kind + body) != crc:
            raise ValueError(f"PNG chunk {kind!r} fails its CRC check")
        out.append((kind, body))
        if kind == b"IEND":
            return out
        pos = end
    raise ValueError("PNG file ends before its IEND chunk")


def _paeth_row(cur: bytearray, prev: bytes, bpp: int) -> None:
    for x in range(len(cur)):
        a = cur[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        cur[x] = (cur[x] + pred) & 0xFF


def _average_row(cur: bytearray, prev: bytes, bpp: int) -> None:
    for x in range(len(cur)):
        a = cur[x - bpp] if x >= bpp else 0
        cur[x] = (cur[x] + ((a + prev[x]) >> 1)) & 0xFF


def _unfilter_rows(rows: np.ndarray, kinds: np.ndarray, bpp: int) -> np.ndarray:
    """Row by row: None, Sub and Up in NumPy; Average and Paeth byte by byte (few such rows)."""
    height, stride = rows.shape
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(height):
        kind = int(kinds[y])
        row = rows[y]
        if kind == 0:
            cur = row
        elif kind == 1:  # Sub: a running sum per byte of the pixel, modulo 256
            pad = (-stride) % bpp
            wide = np.concatenate([row, np.zeros(pad, np.uint8)]).reshape(-1, bpp)
            cur = np.cumsum(wide, axis=0, dtype=np.uint8).reshape(-1)[:stride]
        elif kind == 2:
            cur = row + prev
        else:
            buf = bytearray(row.tobytes())
            (_average_row if kind == 3 else _paeth_row)(buf, prev.tobytes(), bpp)
            cur = np.frombuffer(bytes(buf), np.uint8)
        out[y] = cur
        prev = out[y]
    return out


class _Paeth:
    """The Paeth predictor over slices of up to ``size`` bytes, into reused scratch arrays.

    With pa = |b - c|, pb = |a - c| and pc = |a + b - 2c|, Paeth picks a when pa <= pb and
    pa <= pc, else b when pb <= pc, else c; equivalently c when pc < min(pa, pb), else b when
    pb < pa, else a. That form takes 12 array operations and allocates nothing.
    """

    def __init__(self, size: int) -> None:
        self.t = np.empty((3, size), np.int16)
        self.m = np.empty((2, size), bool)
        self.pred = np.empty(size, np.uint8)

    def __call__(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        n = a.size
        a, b, c = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        db, da, dd = self.t[0, :n], self.t[1, :n], self.t[2, :n]
        to_b, to_c, pred = self.m[0, :n], self.m[1, :n], self.pred[:n]
        np.subtract(b, c, out=db, dtype=np.int16)
        np.subtract(a, c, out=da, dtype=np.int16)
        np.add(db, da, out=dd)
        np.abs(db, out=db)  # pa
        np.abs(da, out=da)  # pb
        np.abs(dd, out=dd)  # pc
        np.less(da, db, out=to_b)
        np.minimum(db, da, out=db)
        np.less(dd, db, out=to_c)
        np.copyto(pred, a)
        np.copyto(pred, b, where=to_b)
        np.copyto(pred, c, where=to_c)
        return pred


def _unfilter_wavefront(rows: np.ndarray, kinds: np.ndarray, bpp: int) -> np.ndarray:
    """Every filter at once, one anti-diagonal of pixels per step, over strips of rows.

    Pixel (y, x) depends only on (y, x-1), (y-1, x) and (y-1, x-1), so all pixels of a strip
    with the same y + x are independent. In a strip the pixels are stored skewed,
    ``d[y + x, y]``, so that a diagonal and its three neighbours are contiguous slices: a strip
    of ``n`` rows takes ``width + n`` vectorized steps instead of ``n * stride`` byte steps.
    Sums wrap in uint8, as PNG's modulo-256 arithmetic does. Memory: two skewed uint8 strips
    of :data:`_STRIP_BYTES` together, plus the output.
    """
    height, stride = rows.shape
    width = stride // bpp
    out = np.empty((height, width, bpp), np.uint8)
    above = np.zeros((width, bpp), np.uint8)
    strip = max(1, min(height, _STRIP_BYTES // (2 * (stride + bpp))))
    paeth = _Paeth(strip * bpp)
    xs = np.arange(width)
    for top in range(0, height, strip):
        n = min(strip, height - top)
        # d[s + 1, j] is pixel (top + j - 1, s - j): row j = 0 is the row above the strip, and
        # d[0] and every position left of the image stay zero (the predictors' outside values).
        d = np.zeros((width + n + 2, n + 1, bpp), np.uint8)
        d[xs + 1, 0] = above
        r = np.zeros(d.shape, np.uint8)
        js = np.arange(1, n + 1)[:, None]
        r[xs[None, :] + js + 1, js] = rows[top : top + n].reshape(n, width, bpp)
        k = kinds[top : top + n][:, None]
        present = set(np.unique(k).tolist())
        for s in range(1, width + n):
            j0, j1 = max(1, s - width + 1), min(n, s) + 1
            a = d[s, j0:j1]
            b = d[s, j0 - 1 : j1 - 1]
            if present == {4}:
                pred = paeth(a, b, d[s - 1, j0 - 1 : j1 - 1]).reshape(a.shape)
            else:
                kk = k[j0 - 1 : j1 - 1]
                pred = np.where(kk == 1, a, np.where(kk == 2, b, np.uint8(0)))
                if 3 in present:
                    mean = ((a.astype(np.int16) + b) >> 1).astype(np.uint8)
                    pred = np.where(kk == 3, mean, pred)
                if 4 in present:
                    c = d[s - 1, j0 - 1 : j1 - 1]
                    pred = np.where(kk == 4, paeth(a, b, c).reshape(a.shape), pred)
            np.add(r[s + 1, j0:j1], pred, out=d[s + 1, j0:j1])
        skew = xs[None, :] + js + 1
        out[top : top + n] = d[skew, js]
        above = d[xs + n + 1, n]
    return out.reshape(height, stride)


# Rough costs in nanoseconds, to pick the faster of the two exact methods (results are equal).
_STRIP_BYTES = 64 << 20
_BYTE_LOOP_NS = 400
_DIAGONAL_NS = 60_000
_DIAGONAL_BYTE_NS = 40


def _unfilter(raw: bytes, height: int, stride: int, bpp: int) -> np.ndarray:
    lines = np.frombuffer(raw, np.uint8).reshape(height, stride + 1)
    kinds = lines[:, 0]
    if kinds.size and int(kinds.max()) > 4:
        y = int(np.flatnonzero(kinds > 4)[0])
        raise ValueError(f"PNG scanline {y} has unknown filter type {int(kinds[y])}")
    rows = lines[:, 1:]
    sequential = int(np.count_nonzero(kinds >= 3)) * stride * _BYTE_LOOP_NS
    if not sequential:
        return _unfilter_rows(rows, kinds, bpp)
    wavefront = (height + stride // bpp) * _DIAGONAL_NS + height * stride * _DIAGONAL_BYTE_NS
    if sequential <= wavefront:
        return _unfilter_rows(rows, kinds, bpp)
    return _unfilter_wavefront(rows, kinds, bpp)


def decode_png(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS) -> np.ndarray:
    """Decode a PNG file into ``[height, width, channels]`` pixels (see the module docstring).

    Work and memory are bounded by the decoded size, which must not exceed ``max_pixels``.

    Raises:
        ValueError: not a PNG, a corrupt file, a variant this decoder does not support, or an
            image of more than ``max_pixels`` pixels.
    """
    chunks = _chunks(bytes(data))
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise ValueError("PNG file does not start with an IHDR chunk")
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    packed = depth < 8 and color in (0, 3) and depth in (1, 2, 4)
    if color not in _CHANNELS or not (packed or depth == 8 or (depth == 16 and color != 3)):
        raise ValueError(f"unsupported PNG: colour type {color}, bit depth {depth}")
    if interlace:
        raise ValueError("interlaced PNG images are not supported")
    if width * height > max_pixels:
        raise ValueError(
            f"PNG image of {width}x{height} pixels exceeds the limit of {max_pixels:,} pixels "
            "(max_image_pixels)"
        )
    channels = _CHANNELS[color]
    bpp = max(channels * depth // 8, 1)
    stride = (width * channels * depth + 7) // 8
    expected = height * (stride + 1)
    idat = b"".join(body for kind, body in chunks if kind == b"IDAT")
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(idat, expected)
    except zlib.error as exc:
        raise ValueError(f"PNG image data does not decompress: {exc}") from None
    if len(raw) != expected:
        raise ValueError(f"PNG image data holds {len(raw)} bytes, expected {expected}")
    pixels = _unfilter(raw, height, stride, bpp)
    if packed:
        per_byte = 8 // depth
        shifts = np.arange(8 - depth, -1, -depth, dtype=np.uint8)
        values = (pixels[:, :, None] >> shifts) & np.uint8((1 << depth) - 1)
        pixels = values.reshape(height, stride * per_byte)[:, :width]
        if color == 0:
            pixels = (pixels.astype(np.uint16) * 255 // ((1 << depth) - 1)).astype(np.uint8)
    if depth == 16:
        return pixels.view(">u2").astype(np.uint16).reshape(height, width, channels)
    image = pixels.reshape(height, width, channels)
    if color != 3:
        return image
    return _expand_palette(image[:, :, 0], chunks)


def _expand_palette(index: np.ndarray, chunks: list[tuple[bytes, bytes]]) -> np.ndarray:
    plte = next((body for kind, body in chunks if kind == b"PLTE"), None)
    if plte is None or len(plte) % 3:
        raise ValueError("palette PNG without a valid PLTE chunk")
    palette = np.frombuffer(plte, np.uint8).reshape(-1, 3)
    trns = next((body for kind, body in chunks if kind == b"tRNS"), None)
    if trns is not None:
        alpha = np.full(len(palette), 255, np.uint8)
        alpha[: min(len(trns), len(palette))] = np.frombuffer(trns, np.uint8)[: len(palette)]
        palette = np.column_stack([palette, alpha])
    if int(index.max(initial=0)) >= len(palette):
        raise ValueError("palette PNG refers past the end of its palette")
    out: np.ndarray = palette[index]
    return out


def decode_image(data: bytes, *, max_pixels: int = MAX_IMAGE_PIXELS) -> np.ndarray | bytes:
    """Decode an image summary's bytes: PNG into ``[h, w, c]``, GIF (a video) into its frames
    ``[T, h, w, 3 or 4]`` (:func:`.gifread.decode_gif`); other formats are returned unchanged.
    An image of more than ``max_pixels`` pixels (all frames together) raises ValueError."""
    if data[:4] == _SIGNATURE[:4]:
        return decode_png(data, max_pixels=max_pixels)
    from .gifread import decode_gif_frames, is_gif

    if is_gif(data):
        return decode_gif_frames(data, max_pixels)[0]
    return data
