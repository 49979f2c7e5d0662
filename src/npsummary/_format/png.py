"""PNG encoding with NumPy and the standard library's zlib.

``encode_png(pixels)`` takes a uint8 array ``[H, W]`` or ``[H, W, C]`` with C = 1 (gray),
2 (gray + alpha), 3 (RGB) or 4 (RGBA) and returns a complete PNG file: the signature, IHDR (bit
depth 8, no interlace), IDAT (split only past the 2 GiB chunk limit) and IEND. No other chunk is
written (no gamma, text or time), so
equal pixels always give equal bytes.

Filtering: each scanline gets the filter Pillow picks: of None, Up, Sub and Paeth, tried in that
order, the first that leaves the smallest sum of |residual byte as int8| (Pillow leaves Average
to its ``optimize`` option). The four filters and their costs are computed vectorized over blocks
of rows of about 128 KiB with uint8 arithmetic only, in one buffer laid out as the output stream
(filter byte, scanline) that holds the row above, the block's scanlines (its None candidates) and
its Up, Sub and Paeth candidates: x, a, b and c are shifts of that flat buffer, so every step is
one NumPy call on contiguous data whatever the row width (Paeth takes 16, or 6 through a table on
blocks of up to 6 KiB, where the calls are the cost; there, rows of up to 128 bytes are costed in
float32 by one matrix-vector product), and the choice is one ``take``. The
temporaries are a few cache-sized buffers whatever the image size (the two-part deflate below
also holds the filtered data, at most 4 MiB). A thread keeps the buffers of its last image of up
to 64 KiB of filtered data for the next image of that shape (setting them up is ~15 % of a small
image's encode); they never hold the caller's array after an encode.

Compression is Pillow's: one zlib stream at level 6, memory level 9, strategy Z_FILTERED (matches
shorter than 6 bytes are coded as literals, which suits filter residuals), so with the same zlib
the file is Pillow's byte for byte (tensorboardX's own tests compare PNG bytes) and never larger.
One exception, for speed: an image of more than 64 KiB of filtered data whose first block's
residuals average 1 or more (|int8| per byte; smooth pictures stay well below) first compresses a
sample (1/16 of the image, 16-64 KiB, in eight strips spread over it) at level 5 with and without
string matching; if matching saves less than 2 % of the sample the data is noise-like and the whole
image is Huffman-coded (no larger, three times faster than a match search that finds nothing).
Where level 6 is slow (128 KiB to 4 MiB of filtered data whose first 16 KiB compress to 10 % or
more at level 1; level 6 then takes 15-200 ns per byte, against 3-8 for the rest), the filtered
data is held whole and deflated as two parts at once (zlib releases the GIL): a thread deflates
the first 60 % of the rows at level 6 and ends with a sync flush, the calling thread the rest at
level 7 (about 1.6 times as slow per byte), primed with the 32 KiB before it, which a decoder
holds in its window there; one zlib header, the Adler-32 of the whole. Joining costs a few dozen
bytes and level 7 saves 1-17 % of the second part, so the file stays smaller than Pillow's one
stream (0.93-0.99x on the benchmark's pictures) in about 60 % of the time with a second core free
(on a busy machine, about 1.2 times as long). Other images of 1 MiB of filtered data or more are
filtered in a worker thread while the calling thread deflates the blocks already filtered, so the
encode takes about as long as the longer of the two; the stream is the one a single thread
writes. Smaller images are filtered and deflated in the calling thread: on a busy machine,
handing blocks between threads costs more than the filtering it hides.
``compress_level=0..9`` skips the sampling and uses that level.
"""

from __future__ import annotations

import _thread
import struct
import zlib
from typing import Any

import numpy as np

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"  # the empty IEND chunk with its CRC
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type
_MAX_DIM = 2**31 - 1
_MAX_CHUNK = 2**31 - 1  # PNG chunk length limit
_BLOCK_BYTES = 1 << 17
_SMALL_BYTES = 1 << 16  # up to this much filtered data, no sampling
_LEVEL, _MEM_LEVEL, _STRATEGY = 6, 9, zlib.Z_FILTERED  # Pillow's deflate settings
_HUFFMAN_LEVEL, _HUFFMAN_MEM_LEVEL = 5, 8  # noise-like images (see _choose_compression)
_PROBE_LEVEL = 5
_PROBE_MIN_COST = 1.0  # mean |residual| per byte of the first block from which to sample
_SPLIT_MIN_BYTES, _SPLIT_MAX_BYTES = 1 << 17, 1 << 22  # filtered data deflated in two parts
_SPLIT_SAMPLE = 1 << 14  # bytes of the first block compressed at level 1 to judge the data
_SPLIT_MIN_RATIO = 0.10  # level-1 size / sample size from which level 6 is slow (>~15 ns/B)
_SPLIT_AT = 0.6  # share of the rows deflated at level 6; the rest at level 7 (~1.6x as slow)
_WINDOW = 1 << 15
_THREAD_BYTES = 1 << 20  # filtered data from which a worker thread filters (see encode_png)
_QUEUED_BLOCKS = 2  # filtered blocks the worker thread may hold ahead of deflate
_REUSED = _thread._local()  # per thread: the last small image's _RowFilter (see _row_filter)
_NO_IMAGE = np.empty((0, 0, 1), np.uint8)
_FILTER_ORDER = (0, 2, 1, 4)  # None, Up, Sub, Paeth: Pillow's filters in its order of trial
_CANDIDATES = len(_FILTER_ORDER)
_FILTER_BYTES = np.array(_FILTER_ORDER, np.uint8)
_FILTER_BYTE_COSTS = {  # |filter byte as int8|, counted in a row's sum, by cost dtype
    np.dtype(t): np.array(_FILTER_ORDER, t) for t in (np.uint16, np.uint32, np.uint64)
}
_WIDE_ROW = 512  # scanline bytes from which a row's cost may not fit uint16 (128 per byte)
_PROBE_STRIPS = 8
_PROBE_MIN_BYTES = 1 << 14
_PROBE_MAX_BYTES = 1 << 16
_MIN_MATCH_GAIN = 0.02
_SMALL_BLOCK = 6 << 10  # blocks of up to this many bytes take Paeth from a table (measured)
_FLOAT_COSTS_PITCH = 128  # and, with rows of up to this many bytes, float32 costs (measured)
_PAETH_DELTAS: np.ndarray | None = None  # that table, built on first use (see _paeth_deltas)


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
    filt = _row_filter(image)
    try:
        parts = _encode_filtered(filt, compress_level)
    finally:
        filt.image = _NO_IMAGE  # a reused filter must not keep the caller's array (or its base)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    return b"".join([_SIGNATURE, *_chunk(b"IHDR", [ihdr]), *_idat_chunks(parts), _IEND])


def _encode_filtered(filt: _RowFilter, compress_level: int | None) -> list[bytes]:
    """The zlib stream of ``filt``'s filtered image, as parts, compressed as the module
    docstring describes."""
    blocks = filt.blocks()
    first: bytes | memoryview = filt.filter(*blocks[0]).reshape(-1).data

    level, mem_level, strategy = _LEVEL, _MEM_LEVEL, _STRATEGY
    if compress_level is not None:
        level = compress_level
    elif filt.size() > _SMALL_BYTES and filt.mean_cost(blocks[0]) >= _PROBE_MIN_COST:
        first = bytes(first)  # the sample reuses the filter's buffers
        if _choose_compression(filt) == zlib.Z_HUFFMAN_ONLY:
            level, mem_level, strategy = _HUFFMAN_LEVEL, _HUFFMAN_MEM_LEVEL, zlib.Z_HUFFMAN_ONLY

    if compress_level is None and strategy == _STRATEGY and _slow_to_deflate(filt, first):
        parts = _deflate_in_two(filt, blocks, first)
    else:
        compressor = zlib.compressobj(level, zlib.DEFLATED, 15, mem_level, strategy)
        parts = [compressor.compress(first)]
        if filt.size() >= _THREAD_BYTES:
            parts += _deflate_while_filtering(filt, blocks[1:], compressor)
        else:
            parts += [compressor.compress(filt.filter(*block).data) for block in blocks[1:]]
        parts.append(compressor.flush())
    return parts


def _row_filter(image: np.ndarray) -> _RowFilter:
    """A filter for ``image``; for up to _SMALL_BYTES of filtered data, the calling thread's
    last one when the shape is the same (its buffers and views are ~15 % of a small image's
    encode; a thread keeps at most one, under 1 MiB, and not the image: see encode_png)."""
    last: _RowFilter | None = getattr(_REUSED, "filter", None)
    if last is not None and last.image.shape[:2] == (0, 0) and last.shape == image.shape:
        last.image = image
        return last
    filt = _RowFilter(image)
    if filt.size() <= _SMALL_BYTES:
        _REUSED.filter = filt
    return filt


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
    """The zlib stream as IDAT chunks of at most _MAX_CHUNK bytes, without copying it (a stream
    of up to 64 KiB is joined first: one CRC call instead of one per part)."""
    if sum(len(part) for part in parts) <= min(_SMALL_BYTES, _MAX_CHUNK):
        return _chunk(b"IDAT", [b"".join(parts)])
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


def _slow_to_deflate(filt: _RowFilter, first: bytes | memoryview) -> bool:
    """Whether level 6 will take long on this image's filtered data, judged from how well the
    first 16 KiB compress at level 1 (measured: 10 % or more goes with 15-200 ns per byte, under
    5 % with 3-8 ns per byte); only images of 128 KiB to 4 MiB of filtered data qualify."""
    if not _SPLIT_MIN_BYTES <= filt.size() <= _SPLIT_MAX_BYTES:
        return False
    sample = first[:_SPLIT_SAMPLE]
    return len(zlib.compress(sample, 1)) >= _SPLIT_MIN_RATIO * len(sample)


def _deflate_in_two(
    filt: _RowFilter, blocks: list[tuple[int, int]], first: bytes | memoryview
) -> list[bytes]:
    """One zlib stream deflated as two parts at once (zlib releases the GIL): a thread deflates
    the first ``_SPLIT_AT`` of the rows at level 6 and ends with a sync flush; this thread the
    rest at level 7, primed with the 32 KiB before it (what a decoder's window holds there). The
    split costs a few dozen bytes; level 7 on the second part saves 1-17 % of it, so the file
    stays smaller than one level-6 stream, in about 60 % of its time with two free cores."""
    import threading

    data = b"".join([bytes(first), *(bytes(filt.filter(*block)) for block in blocks[1:])])
    row_bytes = filt.rowlen + 1
    cut = max(1, round(filt.height * _SPLIT_AT)) * row_bytes
    view = memoryview(data)
    result: dict[str, Any] = {}

    def deflate_first() -> None:
        try:
            compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15, _MEM_LEVEL, _STRATEGY)
            result["first"] = compressor.compress(view[:cut]) + compressor.flush(zlib.Z_SYNC_FLUSH)
        except BaseException as exc:  # re-raised by the caller's thread
            result["error"] = exc

    worker = threading.Thread(target=deflate_first, name="npsummary-png", daemon=True)
    worker.start()
    try:
        window = view[max(0, cut - _WINDOW) : cut]
        compressor = zlib.compressobj(
            _LEVEL + 1, zlib.DEFLATED, -15, _MEM_LEVEL, _STRATEGY, bytes(window)
        )
        second = compressor.compress(view[cut:]) + compressor.flush()
    finally:
        worker.join()
    if "error" in result:
        raise result["error"]
    return [b"\x78\x9c", result["first"], second, struct.pack(">I", zlib.adler32(data))]


def _deflate_while_filtering(
    filt: _RowFilter, blocks: list[tuple[int, int]], compressor: Any
) -> list[bytes]:
    """Deflate ``blocks`` with ``compressor`` while a worker thread filters the next ones.

    The worker copies each filtered block into a bounded queue (``_QUEUED_BLOCKS`` ahead, so
    memory stays block-sized); this thread compresses them in order, so the stream is the one a
    single thread writes. An error in either thread is raised here, after the worker has stopped.
    """
    import queue
    import threading

    ready: queue.Queue[bytes | BaseException | None] = queue.Queue(_QUEUED_BLOCKS)
    stop = threading.Event()

    def filter_blocks() -> None:
        try:
            for start, end in blocks:
                if stop.is_set():
                    break
                ready.put(bytes(filt.filter(start, end)))
        except BaseException as exc:  # re-raised by the caller's thread
            ready.put(exc)
        ready.put(None)  # always last, so the caller can drain up to it

    worker = threading.Thread(target=filter_blocks, name="npsummary-png", daemon=True)
    worker.start()
    out = []
    item: bytes | BaseException | None = b""
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            out.append(compressor.compress(item))
    finally:
        stop.set()
        while item is not None:  # unblocks a worker waiting on a full queue
            item = ready.get()
        worker.join()
    return out


def _choose_compression(filt: _RowFilter) -> int:
    """zlib strategy from a sample of strips: Huffman only when string matching gains little."""
    height, row_bytes = filt.height, filt.rowlen + 1
    sample_bytes = min(max(height * row_bytes // 16, _PROBE_MIN_BYTES), _PROBE_MAX_BYTES)
    strip_rows = max(1, sample_bytes // (_PROBE_STRIPS * row_bytes))
    starts = np.unique(np.linspace(0, max(0, height - strip_rows), _PROBE_STRIPS).astype(np.intp))
    sample = b"".join(bytes(filt.filter(s, min(height, s + strip_rows))) for s in starts.tolist())
    sizes = []
    for strategy in (_STRATEGY, zlib.Z_HUFFMAN_ONLY):
        probe = zlib.compressobj(_PROBE_LEVEL, zlib.DEFLATED, 15, 8, strategy)
        sizes.append(len(probe.compress(sample)) + len(probe.flush()))
    if sizes[0] >= (1.0 - _MIN_MATCH_GAIN) * sizes[1]:
        return zlib.Z_HUFFMAN_ONLY
    return _STRATEGY


class _RowFilter:
    """Adaptive PNG filtering of ``image`` ([H, W, C] uint8, any strides) by blocks of rows.

    One buffer of ``W*C + 1``-byte rows, the output stream's layout (filter byte, scanline),
    holds the previous scanline, then four regions of ``block_rows`` rows: the block's scanlines,
    which are also its None candidates (filter byte 0), and its Up, Sub and Paeth candidates.
    x, a (left), b (up) and c (up-left) are then shifts of one flat buffer, so each filter step is
    one ufunc call on contiguous 1-D data, however narrow the rows (the bytes it computes in the
    filter-byte column are overwritten), and the choice is one ``take``. The buffers are allocated
    once for the largest block and reused, so memory stays at about fourteen blocks (~1.8 MiB)
    whatever the image size. ``filter`` returns a view of an internal buffer, valid until the
    next call.
    """

    def __init__(self, image: np.ndarray) -> None:
        self.image = image
        self.shape = image.shape
        self.height, self.width, self.bpp = image.shape
        self.rowlen = self.width * self.bpp
        bpp, pitch = self.bpp, self.rowlen + 1
        n = self.block_rows = max(1, min(self.height, _BLOCK_BYTES // pitch))
        # bpp bytes of slack (where c starts), the previous scanline, the four regions. Column 0
        # of the scanlines stays 0: it is a and c left of the first pixel, which is right for
        # bpp = 1; for bpp > 1 Sub and Paeth get their first bpp - 1 bytes fixed up in filter().
        self.buffer = np.zeros(bpp + pitch + _CANDIDATES * n * pitch, np.uint8)
        self.rows = self.buffer[bpp:].reshape(1 + _CANDIDATES * n, pitch)
        # [rows, W, C] view of the previous and current scanlines (splitting a unit-stride axis
        # never copies), so a strided image is copied in block by block, never whole.
        self.pixels = self.rows[: n + 1, 1:].reshape(n + 1, self.width, bpp)
        self.row0_is_zero = True
        self.scratch = np.empty(8 * n * pitch, np.uint8)  # Paeth's and the costs' work space
        self.cost_dtype = np.dtype(
            np.uint16
            if self.rowlen < _WIDE_ROW
            else np.uint32
            if self.rowlen < 2**24
            else np.uint64
        )
        self.costs = np.empty(n * _CANDIDATES, self.cost_dtype)
        self.out = np.empty(n * pitch, np.uint8)
        self.views: dict[int, _BlockViews] = {}
        self.last_costs = self.costs[:0].reshape(_CANDIDATES, 0)  # [candidate, row], see filter

    def _views(self, n: int) -> _BlockViews:
        """The arrays filter() works on for a block of ``n`` rows (built once per block size)."""
        views = self.views[n] = _BlockViews(self, n)
        return views

    def size(self) -> int:
        """Bytes of filtered data (scanlines with their filter bytes)."""
        return int(self.height * (self.rowlen + 1))

    def mean_cost(self, block: tuple[int, int]) -> float:
        """Mean |residual as int8| per byte of the filters chosen for ``block``, which must be
        the block last filtered."""
        n = block[1] - block[0]
        return float(int(self.last_costs.min(axis=0).sum()) / (n * self.rowlen))

    def blocks(self, first: int = 0, stop: int | None = None) -> list[tuple[int, int]]:
        """Row ranges of at most ``block_rows`` rows covering rows ``first:stop``."""
        end = self.height if stop is None else stop
        step = self.block_rows
        return [(s, min(end, s + step)) for s in range(first, end, step)]

    def filter(self, start: int, stop: int) -> np.ndarray:
        """Filtered scanlines ``start:stop`` (each prefixed by its filter byte), [n, W*C+1]."""
        n = stop - start
        v = self.views.get(n) or self._views(n)
        if start:
            self.row0_is_zero = False  # first: an interrupted copy must not leave it True
            self.pixels[: n + 1] = self.image[start - 1 : stop]
        else:
            if not self.row0_is_zero:
                self.pixels[0] = 0
                self.row0_is_zero = True
            self.pixels[1 : n + 1] = self.image[:stop]

        x, up_left, c, candidates = v.x, v.up_left, v.c, v.candidates
        np.subtract(x, up_left, candidates[1:3])  # Up, Sub
        if v.small:
            _paeth_by_table(x, up_left, c, v.differences, v.index, v.gathered, candidates[3])
        else:
            _paeth(x, up_left, c, v.work, v.masks, v.same, candidates[3])
        if self.bpp > 1:  # left of the scanline a = c = 0: Sub is x and Paeth is Up
            np.copyto(v.regions[2:4, :, 1 : self.bpp], v.regions[0:2, :, 1 : self.bpp])
        v.regions[1:, :, 0] = _FILTER_BYTES[1:, None]

        # Methods and ufunc reductions rather than np.sum/np.argmin/np.take: their Python
        # wrappers are a noticeable part of a small image's encode.
        if v.float_costs:
            # |residual| as float32 (-128 included), each row summed by one matrix-vector
            # product whose weight for the filter byte is 0: exact, every sum is an integer
            # below 2**24, and faster than the integer reduction, whose cost is per row, on
            # small blocks of narrow rows (0.4-0.9x its time; 0.9-1.3x on rows of 129+ bytes).
            np.abs(v.signed_rows, v.magnitude_floats, dtype=np.float32)
            np.dot(v.magnitudes, v.weights, out=v.sums)
            costs = v.sums_by_candidate
        else:
            # int8 abs(-128) wraps to -128, whose uint8 view is the right cost, 128.
            np.abs(v.signed, v.magnitude)
            np.add.reduce(v.magnitude_rows, axis=2, dtype=self.cost_dtype, out=v.costs.T)
            v.costs -= _FILTER_BYTE_COSTS[self.cost_dtype]  # the filter bytes were summed too
            costs = v.costs.T
        self.last_costs = costs
        choice = costs.argmin(axis=0)
        choice *= self.block_rows
        choice += v.row_index
        taken: np.ndarray = self.rows[1:].take(choice, axis=0, out=v.out, mode="clip")
        return taken


class _BlockViews:
    """The arrays :meth:`_RowFilter.filter` works on for blocks of ``n`` rows: views of the
    filter's buffers (and, for small blocks, float32 cost buffers of their own)."""

    def __init__(self, filt: _RowFilter, n: int) -> None:
        bpp, pitch, full = filt.bpp, filt.rowlen + 1, filt.block_rows
        span = n * pitch
        body = filt.buffer[bpp:]
        self.x = body[pitch : pitch + span]
        self.c = filt.buffer[:span]
        # b (the row above) and a (bpp bytes left) as one [2, span] array, for paired calls.
        self.up_left = np.ndarray((2, span), np.uint8, filt.buffer, bpp, (pitch - bpp, 1))
        self.candidates = body[pitch:].reshape(_CANDIDATES, full * pitch)[:, :span]
        self.regions = filt.rows[1:].reshape(_CANDIDATES, full, pitch)[:, :n]
        self.small = span <= _SMALL_BLOCK
        self.float_costs = self.small and pitch <= _FLOAT_COSTS_PITCH
        scratch = filt.scratch
        # Paeth by arithmetic (large blocks) or by table (small ones), in the same scratch.
        self.work = scratch[: 4 * span].reshape(4, span)
        self.masks = scratch[4 * span : 7 * span].view(np.bool_).reshape(3, span)
        self.same = scratch[7 * span : 8 * span].view(np.bool_)
        self.differences = scratch[: 4 * span].view(np.int16).reshape(2, span)
        self.index = scratch[4 * span : 8 * span].view(np.int32)
        self.gathered = scratch[:span]  # once the differences are used
        self.signed = self.candidates.view(np.int8)
        magnitude = scratch[: _CANDIDATES * span]
        self.magnitude = magnitude.view(np.int8).reshape(_CANDIDATES, span)  # abs's output
        self.magnitude_rows = magnitude.reshape(_CANDIDATES, n, pitch)  # read as uint8
        self.costs = filt.costs[: _CANDIDATES * n].reshape(n, _CANDIDATES)  # a row per scanline
        self.signed_rows = self.signed.reshape(_CANDIDATES, n, pitch)  # a view, never a copy
        rows = _CANDIDATES * n if self.float_costs else 0
        self.magnitudes = np.empty((rows, pitch), np.float32)
        self.magnitude_floats = self.magnitudes.reshape(_CANDIDATES, rows // _CANDIDATES, pitch)
        self.weights = np.ones(pitch, np.float32)  # 0 for the filter byte, 1 per scanline byte
        self.weights[0] = 0
        self.sums = np.empty(rows, np.float32)
        self.sums_by_candidate = self.sums.reshape(_CANDIDATES, rows // _CANDIDATES)
        self.out = filt.out[:span].reshape(n, pitch)
        self.row_index = np.arange(n, dtype=np.intp)


def _paeth_deltas() -> np.ndarray:
    """Paeth's predictor minus c, mod 256, at ``(b - c) * 511 + (a - c) + 130560``: the choice
    depends on the two differences only (see :func:`_paeth`), each in -255..255."""
    global _PAETH_DELTAS
    if _PAETH_DELTAS is None:
        up = np.arange(-255, 256)[:, None]  # b - c
        left = np.arange(-255, 256)[None, :]  # a - c
        pa, pb, pc = np.abs(up), np.abs(left), np.abs(up + left)
        take_a = (pa <= pb) & (pa <= pc)
        take_b = ~take_a & (pb <= pc)
        delta = np.where(take_a, left, np.where(take_b, up, 0))
        _PAETH_DELTAS = (delta.reshape(-1) % 256).astype(np.uint8)  # one assignment: thread-safe
    return _PAETH_DELTAS


def _paeth_by_table(
    x: np.ndarray,
    up_left: np.ndarray,
    c: np.ndarray,
    differences: np.ndarray,
    index: np.ndarray,
    gathered: np.ndarray,
    out: np.ndarray,
) -> None:
    """:func:`_paeth`'s residuals in 6 NumPy calls instead of 16, through a 255 KiB table
    (:func:`_paeth_deltas`); faster on small blocks only, where the calls are the cost (a
    gather per byte is slower than the arithmetic past a few KiB). ``differences`` int16
    [2, N], ``index`` int32 [N] and ``gathered`` uint8 [N] (which may share ``differences``'
    memory) are scratch."""
    np.subtract(up_left, c, out=differences, dtype=np.int16)  # [b - c; a - c]
    np.multiply(differences[0], 511, out=index, dtype=np.int32)
    np.add(index, differences[1], out=index)
    index += 130560
    _paeth_deltas().take(index, out=gathered, mode="clip")  # in bounds: clip only skips checks
    np.subtract(x, c, out)
    np.subtract(out, gathered, out)


def _paeth(
    x: np.ndarray,
    up_left: np.ndarray,
    c: np.ndarray,
    work: np.ndarray,
    masks: np.ndarray,
    same: np.ndarray,
    out: np.ndarray,
) -> None:
    """Paeth residual x - predictor(a, b, c) in uint8 arithmetic, for ``up_left`` = [b; a];
    scratch: ``work`` uint8 [4, N], ``masks`` bool [3, N], ``same`` bool [N].

    With p = a + b - c: pa = |b - c|, pb = |a - c| and pc = |(b - c) + (a - c)|. Where the two
    differences share a sign (a zero one counts as either), pc = pa + pb: a is taken if
    pa <= pb, else b. Where they differ, pc = |pa - pb|: a is taken if pa <= pb and
    pa <= pb - pa, else b if pb < pa and pb <= pa - pb, else c; both differences fit uint8 where
    they are compared, since the other comparison holds there.
    """
    pair, pair2 = work[0:2], work[2:4]
    pa, pb = pair
    np.maximum(up_left, c, out=pair)
    np.minimum(up_left, c, out=pair2)
    np.subtract(pair, pair2, pair)  # [pa; pb]
    np.greater_equal(up_left, c, masks[:2])
    np.equal(masks[0], masks[1], same)
    np.subtract(pair[::-1], pair, pair2)  # [pb - pa; pa - pb], mod 256
    np.less_equal(pair, pair2, masks[:2])
    np.logical_or(masks[:2], same, masks[:2])
    np.less_equal(pa, pb, masks[2])
    np.greater(masks[1], masks[2], masks[1])  # take b
    np.logical_and(masks[2], masks[0], masks[2])  # take a
    # Branch-free select (np.where is ~30x slower on random masks): the residual is
    # (x - c) - (b - c) * take_b - (a - c) * take_a, mod 256, one reduction over work[1:4].
    np.subtract(up_left, c, pair2)
    np.multiply(pair2, masks[1:].view(np.uint8), pair2)
    np.subtract(x, c, work[1])
    np.subtract.reduce(work[1:4], axis=0, out=out)
