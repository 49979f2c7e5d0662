"""The one ``dataformats`` parser: an array's axes named by letters, as tensorboardX names them.

A layout is a string with one letter per array axis, in order: N (batch), T (time), C
(channels), H (height), W (width), or for kernels O, I, H, W. Case does not matter; each letter
appears once. Every function that takes a layout (images, image batches, feature maps, videos,
images with boxes, kernels) lists the layouts it accepts and calls :func:`parse_layout`, so the
rule and its error wording are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._common.compat_errors import DataformatsError

__all__ = ["parse_layout", "who"]


def who(kind: str, tag: str) -> str:
    """The subject of an image-like error message: ``image 'tag'``, or ``image`` without a tag."""
    return f"{kind} {tag!r}" if tag else kind


def parse_layout(
    value: object,
    layouts: Sequence[str],
    *,
    kind: str,
    tag: str,
    name: str = "dataformats",
    shape: tuple[int, ...] | None = None,
) -> str:
    """``value`` upper-cased, if it is a permutation of one of ``layouts``; with ``shape``, it
    must also name each axis of an array of that shape.

    Raises:
      TypeError: ``value`` is not a str.
      ValueError: (a :class:`DataformatsError`, also the ``AssertionError`` tensorboardX and
        torch raise) its letters are no permutation of an accepted layout, or (with ``shape``) it
        has another number of letters than the array has axes; the message names ``kind``,
        ``tag``, the argument ``name`` and the accepted layouts.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"{who(kind, tag)}: {name} must be a str such as {layouts[0]!r}, "
            f"got {type(value).__name__}"
        )
    fmt = value.upper()
    fits = any(len(fmt) == len(layout) and set(fmt) == set(layout) for layout in layouts)
    if not fits or (shape is not None and len(fmt) != len(shape)):
        names = [repr(layout) for layout in layouts]
        options = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        got = "" if shape is None else f", got shape {shape}"
        raise DataformatsError(
            f"{who(kind, tag)}: {name} {value!r} must be a permutation of {options}, "
            f"one letter per axis{got}"
        )
    return fmt
