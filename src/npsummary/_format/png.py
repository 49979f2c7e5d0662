"""PNG encoding with NumPy and the standard library's zlib.

``encode_png(pixels)`` takes a uint8 array ``[H, W]`` or ``[H, W, C]`` with C = 1 (gray),
2 (gray + alpha), 3 (RGB) or 4 (RGBA) and returns a complete PNG file: the signature, IHDR (bit
depth 8, no interlace), IDAT (split only past the 2 GiB chunk limit) and IEND. No other chunk is
written (no gamma, text or time), so
equal pixels always give equal bytes.

Filtering: each scanline gets the filter Pillow picks: of None, Up, Sub and Paeth, tried in that
order, the first that leaves the smallest sum of |residual byte as int8| (Pillow leaves Average
to its ``optimize`` option). The four filters and their costs are computed vectorized over blocks
of rows of about 128 KiB with uint8 arithmetic only, so the temporaries are a few cache-sized
buffers whatever the image size.

Compression uses the stdlib zlib with strategy Z_FILTERED (matches shorter than 6 bytes are coded as
literals, which suits filter residuals). Images of at most 64 KiB of filtered data are deflated as
Pillow deflates them (level 6, memory level 9, one stream), so with the same zlib their files are
Pillow's byte for byte: tensorboardX's own tests compare PNG bytes. Larger ones first compress a
sample (1/16 of the image, 16-64 KiB, in eight strips spread over it) at level 5 and with Huffman
coding only: if string matching saves less than 2 % of the sample the data is noise-like and the
whole image is Huffman-coded at level 5 (same size, three times faster than a match search that
finds nothing); otherwise level 6, Pillow's level, whose files are 0-7 % smaller than level 5's.
Stock zlib's level 6 alone takes about as long as Pillow's whole encode (Pillow bundles zlib-ng), so
images of 128 KiB of filtered data or more are deflated as two halves at once: a thread filters and
deflates the top half into a raw stream ended by a sync flush, the calling thread the bottom half
into a raw stream primed with the last 32 KiB of the top half (what a decoder's window holds there),
and the two are joined into one zlib stream with the combined Adler-32. The stream decodes to
exactly the bytes one stream would hold (benchmarks/RESULTS.md, "Images"). ``compress_level=0..9``
skips the sampling and uses that level in one stream.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type
_MAX_DIM = 2**31 - 1
_MAX_CHUNK = 2**31 - 1  # PNG chunk length limit
_BLOCK_BYTES = 1 << 17
_SMALL_BYTES = 1 << 16
_LEVEL = 5
_SMALL_LEVEL, _SMALL_MEM_LEVEL = 6, 9  # Pillow's deflate settings, for images up to _SMALL_BYTES
_MATCH_LEVEL = 6  # images whose sample shows string matches (see _choose_compression)
_PARALLEL_BYTES = 1 << 17  # filtered data from which the two halves are deflated in parallel
_WINDOW = 1 << 15
_STRATEGY = zlib.Z_FILTERED
_FILTER_ORDER = (0, 2, 1, 4)  # None, Up, Sub, Paeth: Pillow's filters in its order of trial
_CANDIDATES = len(_FILTER_ORDER)
_PROBE_STRIPS = 8
_PROBE_MIN_BYTES = 1 << 14
_PROBE_MAX_BYTES = 1 << 16
_MIN_MATCH_GAIN = 0.02


def encode_png(pixels: np.ndarray, *, compress_level: int | None = None) -> bytes:
    """Encode a uint8 image as PNG bytes.

    Args:
      pixels: uint8 array ``[H, W]`` (gray) or ``[H, W, C]`` with C in 1..4; H, W >= 1.
      compress_level: zlib level 0-9, or None to choose as the module docstring describes.

    Raises:
      TypeError: ``pixels`` is not a uint8 NumPy array, or ``compress_level`` is not an int.
      ValueError: the shape is not ``[H, W]`` / ``[H, W, C]`` with C in 1..4 and H, W >= 1, or
        ``compress_level`` is outside 0..9.
    """
    image = _check_pixels(pixels)
    if compress_level is not None and (
        isinstance(compress_level, bool) or not isinstance(compress_level, int)
    ):
        raise TypeError(f"compress_level must be an int 0-9 or None, got {compress_level!r}")
    if compress_level is not None and not 0 <= compress_level <= 9:
        raise ValueError(f"compress_level must be in 0..9, got {compress_level}")
    height, width, channels = image.shape
    filt = _RowFilter(image)

    mem_level = 8
    if compress_level is not None:
        level, strategy = compress_level, _STRATEGY
    elif height * (width * channels + 1) <= _SMALL_BYTES:
        level, strategy, mem_level = _SMALL_LEVEL, _STRATEGY, _SMALL_MEM_LEVEL
    else:
        strategy = _choose_compression(filt)
        level = _LEVEL if strategy == zlib.Z_HUFFMAN_ONLY else _MATCH_LEVEL

    if compress_level is None and height >= 64 and filt.size() >= _PARALLEL_BYTES:
        parts = _deflate_in_two(image, filt, level, strategy)
    else:
        compressor = zlib.compressobj(level, zlib.DEFLATED, 15, mem_level, strategy)
        parts = [
            compressor.compress(filt.filter(start, stop).data) for start, stop in filt.blocks()
        ]
        parts.append(compressor.flush())

    ihdr = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    return b"".join(
        [_SIGNATURE, *_chunk(b"IHDR", [ihdr]), *_idat_chunks(parts), *_chunk(b"IEND", [])]
    )


def _check_pixels(pixels: object) -> np.ndarray:
    if not isinstance(pixels, np.ndarray):
        raise TypeError(f"pixels must be a numpy.ndarray of uint8, got {type(pixels).__name__}")
    if pixels.dtype != np.uint8:
        raise TypeError(f"pixels must have dtype uint8, got {pixels.dtype}")
    shape = pixels.shape
    image = pixels[:, :, None] if pixels.ndim == 2 else pixels
    if image.ndim != 3 or not 1 <= image.shape[2] <= 4:
        raise ValueError(
            f"pixels must have shape [H, W] or [H, W, C] with C in 1..4, got shape {shape}"
        )
    if not (1 <= image.shape[0] <= _MAX_DIM and 1 <= image.shape[1] <= _MAX_DIM):
        raise ValueError(f"PNG height and width must be in 1..2**31-1, got shape {shape}")
    return image


def _chunk(tag: bytes, data: list[bytes | memoryview]) -> list[bytes | memoryview]:
    """One PNG chunk (length, tag, data, CRC-32 of tag + data) as pieces for b"".join."""
    crc = zlib.crc32(tag)
    for piece in data:
        crc = zlib.crc32(piece, crc)
    length = sum(len(piece) for piece in data)
    return [struct.pack(">I", length), tag, *data, struct.pack(">I", crc)]


def _idat_chunks(parts: list[bytes]) -> list[bytes | memoryview]:
    """The zlib stream as IDAT chunks of at most _MAX_CHUNK bytes, without copying it."""
    pieces: list[bytes | memoryview] = []
    group: list[bytes | memoryview] = []
    room = _MAX_CHUNK
    for part in parts:
        view = memoryview(part)
        while len(view):
            take = view[:room]
            group.append(take)
            room -= len(take)
            view = view[len(take) :]
            if room == 0:
                pieces += _chunk(b"IDAT", group)
                group, room = [], _MAX_CHUNK
    if group or not pieces:
        pieces += _chunk(b"IDAT", group)
    return pieces


def _adler32_combine(first: int, second: int, second_length: int) -> int:
    """Adler-32 of A + B from those of A and B (zlib's adler32_combine)."""
    base = 65521
    rem = second_length % base
    sum1 = first & 0xFFFF
    sum2 = (rem * sum1) % base
    sum1 += (second & 0xFFFF) + base - 1
    sum2 += ((first >> 16) & 0xFFFF) + ((second >> 16) & 0xFFFF) + base - rem
    return (sum1 % base) | ((sum2 % base) << 16)


def _deflate_in_two(image: np.ndarray, filt: _RowFilter, level: int, strategy: int) -> list[bytes]:
    """One zlib stream from two raw deflate streams made at once (zlib and most NumPy loops
    release the GIL): a thread filters and deflates the first half of the rows and ends it with a
    sync flush; this thread deflates the second half, primed with the last 32 KiB of the first
    half's filtered bytes, which a decoder holds in its window at that point. The decoded bytes
    are the same filtered scanlines as with one stream; the output is a few bytes larger."""
    import threading

    split = filt.height // 2
    first_half = filt.blocks(0, split)
    second_half = filt.blocks(split, filt.height)
    result: dict[str, Any] = {}

    def deflate_first() -> None:
        try:
            compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
            adler, out = 1, []
            for start, stop in first_half:
                data = filt.filter(start, stop).data
                adler = zlib.adler32(data, adler)
                out.append(compressor.compress(data))
            out.append(compressor.flush(zlib.Z_SYNC_FLUSH))
            result["first"] = (out, adler)
        except BaseException as exc:  # re-raised by the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=deflate_first, name="npsummary-png", daemon=True)
    worker.start()
    try:
        second = _RowFilter(image)
        row_bytes = filt.rowlen + 1
        window_rows = min(split, -(-_WINDOW // row_bytes))
        window = bytes(second.filter(split - window_rows, split).data)[-_WINDOW:]
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy, window)
        adler, length, out = 1, 0, []
        for start, stop in second_half:
            data = second.filter(start, stop).data
            adler = zlib.adler32(data, adler)
            length += data.nbytes
            out.append(compressor.compress(data))
        out.append(compressor.flush())
    finally:
        worker.join()
    if "error" in result:
        raise result["error"]
    first_out, first_adler = result["first"]
    checksum = _adler32_combine(first_adler, adler, length)
    return [b"\x78\x9c", *first_out, *out, struct.pack(">I", checksum)]


def _choose_compression(filt: _RowFilter) -> int:
    """zlib strategy from a sample of strips: Huffman only when string matching gains little."""
    height, row_bytes = filt.height, filt.rowlen + 1
    sample_bytes = min(max(height * row_bytes // 16, _PROBE_MIN_BYTES), _PROBE_MAX_BYTES)
    strip_rows = max(1, sample_bytes // (_PROBE_STRIPS * row_bytes))
    starts = np.unique(np.linspace(0, max(0, height - strip_rows), _PROBE_STRIPS).astype(np.intp))
    sample = b"".join(bytes(filt.filter(s, min(height, s + strip_rows))) for s in starts.tolist())
    sizes = []
    for strategy in (_STRATEGY, zlib.Z_HUFFMAN_ONLY):
        probe = zlib.compressobj(_LEVEL, zlib.DEFLATED, 15, 8, strategy)
        sizes.append(len(probe.compress(sample)) + len(probe.flush()))
    if sizes[0] >= (1.0 - _MIN_MATCH_GAIN) * sizes[1]:
        return zlib.Z_HUFFMAN_ONLY
    return _STRATEGY


class _RowFilter:
    """Adaptive PNG filtering of ``image`` ([H, W, C] uint8, any strides) by blocks of rows.

    The buffers are allocated once for the largest block and reused, so memory stays at about
    fifteen blocks (~2 MiB) whatever the image size. ``filter`` returns a view of an internal
    buffer, valid until the next call.
    """

    def __init__(self, image: np.ndarray) -> None:
        self.image = image
        self.height, self.width, self.bpp = image.shape
        self.rowlen = self.width * self.bpp
        bpp = self.bpp
        self.block_rows = max(1, min(self.height, _BLOCK_BYTES // (self.rowlen + 1)))
        n, length = self.block_rows, self.rowlen
        # Row 0 holds the previous scanline and the first bpp columns stay zero, so x, a (left),
        # b (up) and c (up-left) are all plain slices of this one buffer.
        self.pad = np.zeros((n + 1, length + bpp), np.uint8)
        # [rows, W, C] view of the same memory (splitting a unit-stride axis never copies), so a
        # strided image is copied in block by block, never whole.
        self.pixels = self.pad[:, bpp:].reshape(n + 1, self.width, bpp)
        # Candidate scanlines with their filter-type byte in column 0, in the layout of the
        # output stream, so choosing is a single np.take; in Pillow's order of trial, so the
        # first smallest cost (np.argmin) is Pillow's choice.
        self.cand = np.empty((_CANDIDATES, n, length + 1), np.uint8)
        self.cand[:, :, 0] = np.array(_FILTER_ORDER, dtype=np.uint8)[:, None]
        self.scratch = np.empty((4, n, length), np.uint8)
        self.flags = np.empty((2, n, length), np.bool_)
        self.magnitude = np.empty((_CANDIDATES, n, length), np.uint8)
        self.costs = np.empty((_CANDIDATES, n), np.uint32 if length < 2**24 else np.uint64)
        self.out = np.empty((n, length + 1), np.uint8)
        self.row_index = np.arange(n, dtype=np.intp)

    def size(self) -> int:
        """Bytes of filtered data (scanlines with their filter bytes)."""
        return int(self.height * (self.rowlen + 1))

    def blocks(self, first: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
        """Row ranges of at most ``block_rows`` rows covering rows ``first:stop``."""
        end = self.height if stop is None else stop
        step = self.block_rows
        return [(s, min(end, s + step)) for s in range(first, end, step)]

    def filter(self, start: int, stop: int) -> np.ndarray:
        """Filtered scanlines ``start:stop`` (each prefixed by its filter byte), [n, W*C+1]."""
        n, bpp = stop - start, self.bpp
        pad = self.pad[: n + 1]
        pixels = self.pixels[: n + 1]
        if start == 0:
            pixels[0] = 0
        else:
            pixels[0] = self.image[start - 1]
        pixels[1:] = self.image[start:stop]
        x, a, b, c = pad[1:, bpp:], pad[1:, :-bpp], pad[:-1, bpp:], pad[:-1, :-bpp]
        cand = self.cand[:, :n]
        f_none, f_up, f_sub, f_paeth = (cand[k, :, 1:] for k in range(_CANDIDATES))
        s0, s1, s2, s3 = self.scratch[:, :n]
        g0, g1 = self.flags[:, :n]

        np.copyto(f_none, x)
        np.subtract(x, b, out=f_up)
        np.subtract(x, a, out=f_sub)
        _paeth(x, a, b, c, s0, s1, s2, s3, g0, g1, out=f_paeth)

        costs = self.costs[:, :n]
        magnitude = self.magnitude[:, :n]
        # int8 abs(-128) wraps to -128, whose uint8 view is the right cost, 128.
        np.abs(cand[:, :, 1:].view(np.int8), out=magnitude.view(np.int8))
        np.sum(magnitude, axis=2, dtype=costs.dtype, out=costs)
        choice = np.argmin(costs, axis=0)
        choice *= self.block_rows
        choice += self.row_index[:n]
        flat = self.cand.reshape(_CANDIDATES * self.block_rows, self.rowlen + 1)
        out: np.ndarray = np.take(flat, choice, axis=0, out=self.out[:n], mode="clip")
        return out


def _paeth(
    x: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    s0: np.ndarray,
    s1: np.ndarray,
    s2: np.ndarray,
    s3: np.ndarray,
    g0: np.ndarray,
    g1: np.ndarray,
    *,
    out: np.ndarray,
) -> None:
    """Paeth residual x - predictor(a, b, c), in uint8 arithmetic.

    With p = a + b - c: pa = |b - c|, pb = |a - c| and pc = |(b - c) + (a - c)|. When the two
    differences have opposite signs pc = |pa - pb| (fits uint8); when they share a sign
    pc = pa + pb >= max(pa, pb), and since pc is only compared with pa and pb, 255 stands in for it.
    """
    np.maximum(b, c, out=s0)
    np.minimum(b, c, out=s1)
    np.subtract(s0, s1, out=s0)  # pa
    np.maximum(a, c, out=s1)
    np.minimum(a, c, out=s2)
    np.subtract(s1, s2, out=s1)  # pb
    np.maximum(s0, s1, out=s2)
    np.minimum(s0, s1, out=s3)
    np.subtract(s2, s3, out=s2)  # |pa - pb|
    np.greater_equal(b, c, out=g0)
    np.greater_equal(a, c, out=g1)
    np.equal(g0, g1, out=g0)  # same sign (a zero difference makes both forms agree)
    np.negative(g0.view(np.uint8), out=s3)  # 0xFF where same sign
    np.bitwise_or(s2, s3, out=s2)  # pc, or 255 standing in for pa + pb
    np.less_equal(s0, s1, out=g0)
    np.less_equal(s0, s2, out=g1)
    np.logical_and(g0, g1, out=g0)  # take a
    np.less_equal(s1, s2, out=g1)  # else take b, else c
    # Branch-free select with 0x00/0xFF masks: np.where is ~30x slower on random masks.
    np.negative(g1.view(np.uint8), out=s3)
    np.bitwise_xor(b, c, out=s1)
    np.bitwise_and(s1, s3, out=s1)
    np.bitwise_xor(s1, c, out=s1)  # b if pb <= pc else c
    np.negative(g0.view(np.uint8), out=s3)
    np.bitwise_xor(a, s1, out=s2)
    np.bitwise_and(s2, s3, out=s2)
    np.bitwise_xor(s2, s1, out=s1)  # predictor
    np.subtract(x, s1, out=out)
