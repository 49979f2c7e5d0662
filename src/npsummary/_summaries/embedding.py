"""Embeddings for TensorBoard's projector: the files tensorboardX and torch write, built purely.

``add_embedding`` writes no event. Under ``<logdir>/<step:05d>/<encoded tag>/`` it writes
``tensors.tsv`` (one row per point, values as Python prints them, tab-separated),
``metadata.tsv`` (one label per line; with ``metadata_header``, a header line and one
tab-separated row per point) and ``sprite.png`` (the label images tiled in a square, row-major,
``ceil(sqrt(N))`` per row, padded with black); then it adds an ``embeddings { ... }`` block to
``<logdir>/projector_config.pbtxt`` (text format, fields in field-number order, as
``text_format.MessageToString`` prints torch's ``EmbeddingInfo``).

Tags are encoded as tensorboardX and torch do (``%`` -> ``%25``, ``/`` -> ``%2f``, ``\\`` ->
``%5c``), and further so that no tag can leave the logdir: ``.``/``..`` and NUL are %-encoded,
and a name longer than 200 bytes is shortened with a hash. Tabs and newlines inside labels would
break the TSV, so they become spaces. TensorBoard's projector skips a metadata line that is empty
or whitespace only (JavaScript's ``trim()``), which would shift every later label onto the wrong
point: such a line gets an invisible U+200B ZERO WIDTH SPACE after its first cell, so it is kept
and still looks blank; and one-column metadata has no header line (the projector reads a first
line as a header only if it has a tab; it names the single column "label").

Label images must be square (the projector requires it) with C = 1 or 3 (or 4, alpha dropped);
floats are scaled by 255, clipped and truncated as tensorboardX and torch do, uint8 is kept (they
multiply it by 255 too, turning every non-zero pixel white).

Format notes: docs/FORMAT.md §4.11.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._common.compat_errors import EmbeddingShapeError
from .._common.convert import (
    as_array,
    as_native_array,
    as_numeric_array,
    check_numeric,
    check_tag,
)

__all__ = [
    "MAX_SPRITE_SIZE",
    "embedding_block",
    "encode_tag",
    "metadata_tsv",
    "sprite_image",
    "tensors_tsv",
]

#: The projector front end cannot load a larger sprite (tensorboardX#516).
MAX_SPRITE_SIZE = 8192
_MAX_NAME_BYTES = 200
_ROWS_PER_CHUNK = 4096


def encode_tag(tag: str) -> str:
    """One safe path component for ``tag``: tensorboardX's and torch's %-encoding, made
    traversal-proof."""
    name = tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c").replace("\0", "%00")
    if name in ("", ".", ".."):
        name = name.replace(".", "%2e") or "%"
    encoded = name.encode("utf-8")
    if len(encoded) > _MAX_NAME_BYTES:
        digest = hashlib.sha1(encoded).hexdigest()[:16]
        name = encoded[: _MAX_NAME_BYTES - 17].decode("utf-8", errors="ignore") + "~" + digest
    return name


def step_dir(step: int) -> str:
    """The step's directory name: ``str(step).zfill(5)``."""
    return str(step).zfill(5)


def check_matrix(tag: str, mat: Any) -> np.ndarray:
    array = as_numeric_array(mat, tag, "mat")
    if array.ndim != 2:
        raise EmbeddingShapeError(f"{tag!r}: mat must be 2-D [N, D], got shape {array.shape}")
    return array


def tensors_tsv(mat: np.ndarray) -> Iterator[bytes]:
    """``tensors.tsv`` in chunks of rows (bounded memory)."""
    for start in range(0, mat.shape[0], _ROWS_PER_CHUNK):
        rows = mat[start : start + _ROWS_PER_CHUNK].tolist()
        yield "".join("\t".join(map(str, row)) + "\n" for row in rows).encode("utf-8")


# What JavaScript's String.prototype.trim() removes: the projector skips a metadata line that
# trims to nothing, which would shift every later label onto the wrong point.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: Appended to a metadata line that would be blank: invisible, and not whitespace to trim().
BLANK_MARK = "\u200b"


def _line(cells: list[str]) -> str:
    """One metadata line the projector keeps: a line that would trim to nothing (every cell
    empty or whitespace) gets :data:`BLANK_MARK` after its first cell."""
    line = "\t".join(cells)
    if line.strip(_JS_WHITESPACE):
        return line
    return "\t".join([cells[0] + BLANK_MARK, *cells[1:]])


def _cell(value: Any, tag: str, name: str) -> str:
    """One TSV cell: the value's text on one line, UTF-8 encodable."""
    try:
        text = str.__str__(value) if isinstance(value, str) else str(value)
    except Exception as exc:  # a user's __str__ may raise anything
        raise TypeError(f"{tag!r}: {name}: cannot turn {type(value).__name__} into text") from exc
    check_tag(text, f"{tag!r}: {name} entry")
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _header(tag: str, header: Any) -> list[str]:
    """Column names; ``None`` or an empty list means single-column metadata, as in torch."""
    if header is None:
        return []
    if hasattr(header, "__array__") and not isinstance(header, (list, tuple)):
        array = as_array(header, tag, "metadata_header")
        if array.ndim != 1:
            raise EmbeddingShapeError(
                f"{tag!r}: metadata_header must be 1-D (one name per column), got shape "
                f"{array.shape}"
            )
        header = array.tolist()
    if isinstance(header, (str, bytes)) or not isinstance(header, Sequence):
        raise TypeError(
            f"{tag!r}: metadata_header must be a list of column names, got {type(header).__name__}"
        )
    return [_cell(name, tag, "metadata_header") for name in header]


def metadata_tsv(tag: str, metadata: Any, header: Any, count: int) -> bytes:
    """``metadata.tsv`` for ``count`` points.

    Raises:
      TypeError: metadata is not a sequence; ValueError: its length is not ``count``, or a row
        does not have one value per header column.
    """
    if hasattr(metadata, "__array__") and not isinstance(metadata, (list, tuple)):
        array = as_array(metadata, tag, "metadata")
        # Shape first: a list of a huge array would cost a Python object per element.
        if array.ndim not in (1, 2) or array.shape[0] != count:
            raise EmbeddingShapeError(
                f"{tag!r}: metadata must hold one entry (or one row of columns) per row of mat "
                f"({count}), got an array of shape {array.shape}"
            )
        metadata = array.tolist()
    if isinstance(metadata, (str, bytes)) or not isinstance(metadata, Sequence):
        raise TypeError(f"{tag!r}: metadata must be a list, got {type(metadata).__name__}")
    if len(metadata) != count:
        raise EmbeddingShapeError(
            f"{tag!r}: metadata has {len(metadata)} entries but mat has {count} rows"
        )
    columns = _header(tag, header)
    if len(columns) == 1:
        # The projector takes a first line as a header only if it has a tab: one column has no
        # header line (its column is called "label"), or the name would become point 0's label.
        metadata = [_single(tag, index, row) for index, row in enumerate(metadata)]
        columns = []
    if not columns:
        return "".join(_line([_cell(item, tag, "metadata")]) + "\n" for item in metadata).encode(
            "utf-8"
        )
    lines = [_line(columns)]
    for index, row in enumerate(metadata):
        if (
            isinstance(row, (str, bytes))
            or not isinstance(row, Sequence)
            or len(row) != len(columns)
        ):
            raise EmbeddingShapeError(
                f"{tag!r}: with metadata_header of {len(columns)} columns, each metadata entry "
                f"must be a list of {len(columns)} values; entry {index} is {row!r}"
            )
        lines.append(_line([_cell(item, tag, "metadata") for item in row]))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _single(tag: str, index: int, row: Any) -> Any:
    """The value of a one-column row (``[value]``), checked as for several columns."""
    if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) != 1:
        raise EmbeddingShapeError(
            f"{tag!r}: with metadata_header of 1 columns, each metadata entry must be a list of "
            f"1 values; entry {index} is {row!r}"
        )
    return row[0]


def _tiles(tag: str, label_img: Any, count: int) -> np.ndarray:
    images = as_native_array(label_img, tag, "label_img")
    if images.ndim != 4:
        raise EmbeddingShapeError(
            f"{tag!r}: label_img must be [N, C, H, W], got shape {images.shape}"
        )
    if images.shape[0] != count:
        raise EmbeddingShapeError(
            f"{tag!r}: label_img has {images.shape[0]} images but mat has {count} rows"
        )
    _n, channels, height, width = images.shape
    if channels not in (1, 3, 4):
        raise EmbeddingShapeError(
            f"{tag!r}: label_img must have C = 1, 3 or 4, got shape {images.shape}"
        )
    if height != width or height == 0:
        raise EmbeddingShapeError(
            f"{tag!r}: label_img must be square images (H == W), got shape {images.shape}"
        )
    return check_numeric(images, "label_img", tag=tag)


def sprite_image(tag: str, label_img: Any, count: int) -> tuple[np.ndarray, tuple[int, int]]:
    """The sprite as uint8 ``[S, S, 3]`` and ``single_image_dim`` ``(W, H)``.

    Raises:
      ValueError: wrong shape, count, channels, non-square images, or a sprite over 8192 px.
    """
    images = _tiles(tag, label_img, count)
    n, _channels, height, width = images.shape
    per_row = math.ceil(math.sqrt(n))
    side = per_row * width
    if side > MAX_SPRITE_SIZE:
        raise EmbeddingShapeError(
            f"{tag!r}: the sprite would be {side} pixels wide; the projector loads at most "
            f"{MAX_SPRITE_SIZE} (ceil(sqrt(N)) * W)"
        )
    sprite = np.zeros((side, side, 3), dtype=np.uint8)
    for index in range(n):
        tile = images[index, :3].transpose(1, 2, 0)
        if images.dtype != np.uint8:
            values = np.nan_to_num(tile.astype(np.float64), nan=0.0)
            tile = np.clip(values * 255.0, 0, 255).astype(np.uint8)
        row, col = divmod(index, per_row)
        sprite[row * height : (row + 1) * height, col * width : (col + 1) * width] = tile
    return sprite, (width, height)


def _text_escape(text: str) -> str:
    """Escape a string as protobuf's text format does (``CEscape``, UTF-8 bytes as octal)."""
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    out = []
    for byte in text.encode("utf-8"):
        if byte in named:
            out.append(named[byte])
        elif 0x20 <= byte < 0x7F:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def embedding_block(
    tag: str,
    step: int,
    subdir: str,
    has_metadata: bool,
    sprite_dims: tuple[int, int] | None,
) -> str:
    """The ``embeddings { ... }`` block of ``projector_config.pbtxt`` for one embedding."""
    lines = [
        "embeddings {",
        f'  tensor_name: "{_text_escape(f"{tag}:{step_dir(step)}")}"',
    ]
    if has_metadata:
        lines.append(f'  metadata_path: "{_text_escape(subdir + "/metadata.tsv")}"')
    if sprite_dims is not None:
        lines += [
            "  sprite {",
            f'    image_path: "{_text_escape(subdir + "/sprite.png")}"',
            f"    single_image_dim: {sprite_dims[0]}",
            f"    single_image_dim: {sprite_dims[1]}",
            "  }",
        ]
    lines += [f'  tensor_path: "{_text_escape(subdir + "/tensors.tsv")}"', "}"]
    return "\n".join(lines) + "\n"
