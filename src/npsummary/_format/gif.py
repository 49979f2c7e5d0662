"""Animated GIF encoding with NumPy: palette choice, frame differencing and LZW.

``encode_gif(frames, delay_cs)`` takes uint8 RGB frames ``[T, H, W, 3]`` and returns a complete
GIF89a file that loops forever (NETSCAPE2.0 extension), each frame shown for ``delay_cs``
hundredths of a second.

Palette. If the whole clip uses at most 256 colours, one global palette holds them all and the
GIF is lossless. Otherwise each frame gets its own local palette: exact when the frame has at
most 256 colours, else 256 colours chosen by median cut (boxes in RGB space split at the
pixel-weighted median of their widest channel, the widest boxes first, in vectorized rounds;
each colour becomes its box's pixel-weighted mean). Pillow, which tensorboardX reaches through
moviepy and imageio, also gives every frame its own median-cut palette.

Frames after the first store only the bounding box of the pixels that changed since the
previous frame (disposal "do not dispose"), as Pillow does, so a static background costs
nothing per frame.

LZW (GIF's variable-width variant, codes up to 12 bits, LSB first) runs as a tight Python loop
over the pixel indices with one dict lookup per pixel; code widths and bit packing are then
computed vectorized. The dictionary is reset with a clear code when it fills. Noise does not
compress: when LZW on a sample of a large frame (four strips of 1024 pixels) is no smaller than
literals, the frame is written as literal codes of ``min_code_size + 1`` bits with a clear code
before the dictionary would widen them, built without any loop.
"""

from __future__ import annotations

import struct
from array import array

import numpy as np

__all__ = ["encode_gif", "quantize"]

_MAX_CODES = 4096
_COLORS = 256
_SAMPLE = 1024  # pixels per strip of the sample that picks LZW search or literals
_NETSCAPE = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever


def _keys(frame: np.ndarray) -> np.ndarray:
    """24-bit colour keys ``r << 16 | g << 8 | b`` of an ``[H, W, 3]`` uint8 frame."""
    rgb = frame.astype(np.uint32)
    keys: np.ndarray = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    return keys


def _palette_of(keys: np.ndarray) -> np.ndarray:
    """``[K, 3]`` uint8 colours of sorted unique 24-bit keys."""
    return np.stack([(keys >> 16) & 255, (keys >> 8) & 255, keys & 255], axis=1).astype(np.uint8)


def _median_cut(
    colors: np.ndarray, counts: np.ndarray, limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split ``colors`` ``[U, 3]`` (weighted by ``counts``) into at most ``limit`` boxes.

    Rounds of splits, vectorized over boxes: in each round the widest boxes (by their widest
    channel), as many as there is room for, are cut at the pixel-weighted median of that
    channel, never between two equal values. Returns (palette ``[K, 3]`` uint8, box index of
    each colour ``[U]``).
    """
    perm = np.arange(len(colors))
    starts = np.zeros(1, dtype=np.intp)
    while len(starts) < limit:
        c = colors[perm]
        sizes = np.diff(np.append(starts, len(perm)))
        ranges = np.maximum.reduceat(c, starts, axis=0) - np.minimum.reduceat(c, starts, axis=0)
        channel, width = ranges.argmax(axis=1), ranges.max(axis=1)
        splittable = np.flatnonzero(width > 0)
        if len(splittable) == 0:
            break
        chosen = splittable[np.argsort(-width[splittable], kind="stable")][: limit - len(starts)]
        box = np.repeat(np.arange(len(starts)), sizes)
        values = c[np.arange(len(perm)), channel[box]].astype(np.int64)
        order = np.lexsort((values, box))
        perm, values = perm[order], values[order]
        composite = box * 256 + values  # non-decreasing along perm
        weight = np.cumsum(counts[perm])
        base = np.concatenate(([0], weight))[starts]
        total = weight[starts + sizes - 1] - base
        cut = np.searchsorted(weight, base + total / 2.0)[chosen]
        cut = np.clip(cut, starts[chosen] + 1, starts[chosen] + sizes[chosen] - 1)
        left = np.searchsorted(composite, composite[cut], side="left")
        right = np.searchsorted(composite, composite[cut], side="right")
        cut = np.where(left > starts[chosen], left, right)
        starts = np.union1d(starts, cut[cut < starts[chosen] + sizes[chosen]])
    sizes = np.diff(np.append(starts, len(perm)))
    assignment = np.empty(len(colors), dtype=np.intp)
    assignment[perm] = np.repeat(np.arange(len(starts)), sizes)
    total = np.bincount(assignment, weights=counts, minlength=len(starts))
    palette = np.empty((len(starts), 3), dtype=np.uint8)
    for index in range(3):
        sums = np.bincount(assignment, weights=counts * colors[:, index], minlength=len(starts))
        palette[:, index] = np.rint(sums / total).astype(np.uint8)
    return palette, assignment


def quantize(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Palette ``[K <= 256, 3]`` and index image ``[H, W]`` uint8 of one RGB frame."""
    unique, inverse, counts = np.unique(_keys(frame), return_inverse=True, return_counts=True)
    inverse = inverse.reshape(frame.shape[:2])
    if len(unique) <= _COLORS:
        return _palette_of(unique), inverse.astype(np.uint8)
    colors = _palette_of(unique)
    palette, assignment = _median_cut(colors.astype(np.int16), counts, _COLORS)
    return palette, assignment[inverse].astype(np.uint8)


def _global_palette(frames: np.ndarray) -> np.ndarray | None:
    """Sorted keys of every colour in the clip if there are at most 256, else None."""
    if frames[0].size * len(frames) < 1 << 21:
        keys: np.ndarray = np.empty(0, dtype=np.uint32)
        for frame in frames:
            keys = np.union1d(keys, _keys(frame))
            if len(keys) > _COLORS:
                return None
        return keys
    seen = np.zeros(1 << 24, dtype=bool)
    for frame in frames:
        seen[_keys(frame)] = True
    keys = np.flatnonzero(seen)
    return keys if len(keys) <= _COLORS else None


def _lzw_codes(indices: bytes, min_code_size: int) -> array[int]:
    """LZW codes of ``indices`` (clear first, end-of-information last)."""
    clear = 1 << min_code_size
    first_free = clear + 2
    codes = array("H", [clear])
    emit = codes.append
    table: dict[int, int] = {}
    lookup = table.get
    next_code = first_free
    prefix = indices[0]
    for index in indices[1:]:
        key = prefix << 8 | index
        code = lookup(key)
        if code is not None:
            prefix = code
            continue
        emit(prefix)
        table[key] = next_code
        next_code += 1
        if next_code == _MAX_CODES:
            emit(clear)
            table.clear()
            next_code = first_free
        prefix = index
    emit(prefix)
    emit(clear + 1)
    return codes


_BIT_LENGTH = np.array([n.bit_length() for n in range(2 * _MAX_CODES + 2)], dtype=np.int64)
_BIT = np.arange(12, dtype=np.uint16)


def _literal_codes(indices: bytes, min_code_size: int) -> np.ndarray:
    """Codes that store ``indices`` as literals, with a clear code before the dictionary would
    outgrow ``min_code_size + 1`` bits: every code is that wide, and no search is needed."""
    clear = 1 << min_code_size
    run = clear - 2  # literals per clear: the decoder's dictionary stays below 2 * clear
    values = np.frombuffer(indices, dtype=np.uint8).astype(np.uint16)
    codes = np.insert(values, np.arange(0, len(values), run), clear)
    return np.asarray(np.append(codes, np.uint16(clear + 1)))


def _encode_indices(indices: bytes, min_code_size: int) -> bytes:
    """The packed LZW data of ``indices``: a dictionary search, or literals when a sample shows
    the search would not beat them (noise), which also skips the per-pixel Python loop."""
    if min_code_size >= 5 and len(indices) > 16 * _SAMPLE:
        step = len(indices) // 4
        sample = b"".join(indices[i * step : i * step + _SAMPLE] for i in range(4))
        searched = len(
            _pack(np.frombuffer(_lzw_codes(sample, min_code_size), np.uint16), min_code_size)
        )
        literal = len(_pack(_literal_codes(sample, min_code_size), min_code_size))
        if searched >= literal:
            return _pack(_literal_codes(indices, min_code_size), min_code_size)
    codes = np.frombuffer(_lzw_codes(indices, min_code_size), dtype=np.uint16)
    return _pack(codes, min_code_size)


def _pack(codes: np.ndarray, min_code_size: int) -> bytes:
    """Pack uint16 codes LSB-first with GIF's widths: a code written after ``n`` dictionary
    entries were added since the last clear is ``bit_length(clear + 1 + n)`` bits wide (at most
    12)."""
    clear = 1 << min_code_size
    values = codes
    position = np.arange(len(values))
    is_clear = values == clear
    last_clear = np.maximum.accumulate(np.where(is_clear, position, 0))
    # A clear code is written at the width of the code it replaces: count from the previous one.
    previous = np.where(is_clear, np.concatenate(([0], last_clear[:-1])), last_clear)
    added = np.maximum(position - previous - 1, 0)
    added[0] = 0
    widths = np.clip(_BIT_LENGTH[clear + 1 + added], min_code_size + 1, 12)
    # Each code's 12 low bits, LSB first; keep the first `width` of each row.
    bits = ((values[:, None] >> _BIT) & 1).astype(np.uint8)
    stream = bits[_BIT[None, :] < widths[:, None]]
    return np.packbits(stream, bitorder="little").tobytes()


def _sub_blocks(data: bytes) -> bytes:
    parts = []
    for start in range(0, len(data), 255):
        chunk = data[start : start + 255]
        parts.append(bytes((len(chunk),)) + chunk)
    parts.append(b"\x00")
    return b"".join(parts)


def _table_bits(size: int) -> int:
    return max(1, (max(size, 2) - 1).bit_length())


def _color_table(palette: np.ndarray, bits: int) -> bytes:
    table = np.zeros((1 << bits, 3), dtype=np.uint8)
    table[: len(palette)] = palette
    return table.tobytes()


def _image(
    indices: np.ndarray, box: tuple[int, int, int, int], palette: np.ndarray | None, bits: int
) -> bytes:
    top, bottom, left, right = box
    local = 0 if palette is None else 0x80 | (bits - 1)
    head = b"\x2c" + struct.pack("<4HB", left, top, right - left, bottom - top, local)
    if palette is not None:
        head += _color_table(palette, bits)
    min_code_size = max(2, bits)
    pixels = np.ascontiguousarray(indices[top:bottom, left:right]).tobytes()
    data = _encode_indices(pixels, min_code_size)
    return head + bytes((min_code_size,)) + _sub_blocks(data)


def _changed_box(current: np.ndarray, previous: np.ndarray | None) -> tuple[int, int, int, int]:
    height, width = current.shape[:2]
    if previous is None:
        return 0, height, 0, width
    changed = np.any(current != previous, axis=2)
    rows, cols = np.flatnonzero(changed.any(axis=1)), np.flatnonzero(changed.any(axis=0))
    if len(rows) == 0:
        return 0, 1, 0, 1  # nothing changed: redraw one pixel to keep the frame's delay
    return int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1


def encode_gif(frames: np.ndarray, delay_cs: int) -> bytes:
    """A looping GIF89a of uint8 RGB ``frames`` ``[T, H, W, 3]``, ``delay_cs`` per frame."""
    count, height, width, _ = frames.shape
    if not (0 < height <= 0xFFFF and 0 < width <= 0xFFFF and count > 0):
        raise ValueError(f"GIF frames must be 1..65535 pixels a side, got {frames.shape}")
    global_keys = _global_palette(frames)
    parts = [b"GIF89a"]
    if global_keys is not None:
        bits = _table_bits(len(global_keys))
        palette = _palette_of(global_keys)
        parts.append(struct.pack("<2H3B", width, height, 0xF0 | (bits - 1), 0, 0))
        parts.append(_color_table(palette, bits))
    else:
        parts.append(struct.pack("<2H3B", width, height, 0x70, 0, 0))
    parts.append(_NETSCAPE)
    control = b"\x21\xf9\x04\x04" + struct.pack("<H", delay_cs) + b"\x00\x00"
    previous: np.ndarray | None = None
    for frame in frames:
        if global_keys is not None:
            indices = np.searchsorted(global_keys, _keys(frame)).astype(np.uint8)
            local = None
            shown = frame
        else:
            local, indices = quantize(frame)
            bits = _table_bits(len(local))
            shown = local[indices]
        parts.append(control)
        parts.append(_image(indices, _changed_box(shown, previous), local, bits))
        previous = shown
    parts.append(b"\x3b")
    return b"".join(parts)
