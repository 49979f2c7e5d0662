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

__all__ = ["decode_image", "decode_png"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # colour type -> samples per pixel
_MAX_PIXELS = 1 << 28


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


def _unfilter(raw: bytes, height: int, stride: int, bpp: int) -> np.ndarray:
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.uint8)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        row = np.frombuffer(raw, np.uint8, stride, start + 1)
        if kind == 0:
            cur = row.copy()
        elif kind == 1:  # Sub: a running sum per byte of the pixel, modulo 256
            pad = (-stride) % bpp
            wide = np.concatenate([row, np.zeros(pad, np.uint8)]).reshape(-1, bpp)
            cur = np.cumsum(wide, axis=0, dtype=np.uint8).reshape(-1)[:stride]
        elif kind == 2:
            cur = row + prev
        elif kind in (3, 4):
            buf = bytearray(row.tobytes())
            (_average_row if kind == 3 else _paeth_row)(buf, prev.tobytes(), bpp)
            cur = np.frombuffer(bytes(buf), np.uint8)
        else:
            raise ValueError(f"PNG scanline {y} has unknown filter type {kind}")
        out[y] = cur
        prev = out[y]
    return out


def decode_png(data: bytes) -> np.ndarray:
    """Decode a PNG file into ``[height, width, channels]`` pixels (see the module docstring).

    Raises:
        ValueError: not a PNG, a corrupt file, or a variant this decoder does not support.
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
    if width * height > _MAX_PIXELS:
        raise ValueError(f"PNG image of {width}x{height} pixels is too large")
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


def decode_image(data: bytes) -> np.ndarray | bytes:
    """Decode an image summary's bytes: PNG into ``[h, w, c]``, GIF (a video) into its frames
    ``[T, h, w, 3 or 4]`` (:func:`.gifread.decode_gif`); other formats are returned unchanged."""
    if data[:4] == _SIGNATURE[:4]:
        return decode_png(data)
    from .gifread import decode_gif, is_gif

    if is_gif(data):
        return decode_gif(data)[0]
    return data
