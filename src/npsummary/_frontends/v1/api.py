"""The ``tf.compat.v1.summary`` functions behind :mod:`npsummary.v1` (its docstring states the
rules: tags, steps, merge_all and the deliberate deviations from TF1)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._common.convert import (
    UINT8_OR_FLOAT,
    as_array,
    as_list,
    as_native_array,
    check_int,
    check_numeric,
    check_tag,
    check_text,
    to_float,
    to_float32_range,
)
from ..._common.errors import warn_user
from ..._common.messages import message_bytes, parse_message
from ..._format.wire import encode_summary, legacy_scalar_value
from ..._summaries.metadata import metadata_message
from ..context import state, v1_state
from .description import SummaryDescription, get_summary_description
from .file_writer import FileWriter

if TYPE_CHECKING:
    from ..._common.types import ArrayLike, ScalarLike

# npsummary.v1 re-exports these, and adds the protobuf classes (Event, Summary, ...) lazily.
__all__ = [
    "FileWriter",
    "SummaryDescription",
    "audio",
    "clean_tag",
    "get_summary_description",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "tensor_summary",
    "text",
]

SUMMARIES = "summaries"  # tf.compat.v1.GraphKeys.SUMMARIES
#: Summaries kept per collection for merge_all() before the oldest are dropped.
MAX_PENDING = 10_000

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w.]")


def _fresh(round_: int) -> bool:
    """Whether a summary collected in ``round_`` can still be merged (see "Steps")."""
    return round_ >= v1_state.round - 1


def clean_tag(name: str) -> str:
    """Replace characters outside ``[-/\\w.]`` with ``_`` and drop leading slashes (TF1)."""
    return _INVALID_TAG_CHARACTERS.sub("_", check_tag(name, "name")).lstrip("/")


def _unique_name(name: str) -> str:
    """``tf.Graph.unique_name``: ``name``, else ``name_1``, ``name_2``… (case-insensitive)."""
    used = v1_state.names_in_use
    key = name.lower()
    i = used.get(key, 0)
    used[key] = i + 1
    if i == 0:
        return name
    base = key
    while key in used:
        key = f"{base}_{i}"
        i += 1
    used[key] = 1
    return f"{name}_{i - 1}"


def _summary_tag(name: Any, family: Any = None) -> str:
    """The tag TF1's ``summary_scope`` gives a summary called ``name`` (see module docstring)."""
    name = clean_tag(check_tag(name, "name"))
    if family is not None:
        family = clean_tag(check_tag(family, f"{name!r}: family"))
        base = f"{family}/{name}"
    else:
        base = name
    if not base:
        raise ValueError("summary name must not be empty")
    tag = _unique_name(state.name_scope + base)
    return tag if family is None else f"{family}/{tag}"


def _collection_keys(collections: Any, tag: str) -> list[str]:
    """The collection names a summary is added to (``None``: the default one)."""
    if collections is None:
        return [SUMMARIES]
    if isinstance(collections, (str, bytes)):
        raise TypeError(f"{tag!r}: collections must be a list of str, got {collections!r:.60}")
    keys = as_list(collections, tag, "collections")
    return [check_tag(key, f"{tag!r}: collections[{i}]") for i, key in enumerate(keys)]


def _collect(summary: bytes, collections: Iterable[str] | None, tag: str) -> bytes:
    for key in _collection_keys(collections, tag):
        pending = v1_state.collections.setdefault(key, [])
        if pending and not _fresh(pending[0][0]):
            pending[:] = [entry for entry in pending if _fresh(entry[0])]
        pending.append((v1_state.round, summary))
        if len(pending) > MAX_PENDING:
            del pending[: len(pending) - MAX_PENDING]
            if not v1_state.warned_overflow:
                v1_state.warned_overflow = True
                warn_user(
                    f"more than {MAX_PENDING} npsummary.v1 summaries are waiting for "
                    f"merge_all({key!r}); the oldest are dropped. Call merge_all() each step, "
                    "or pass collections=[] to summaries you write yourself.",
                    RuntimeWarning,
                )
    return summary


def _one_value(value: bytes) -> bytes:
    """Serialized ``Summary`` holding one serialized ``Summary.Value``."""
    return encode_summary([value])


# -- summaries ----------------------------------------------------------------------------------


def scalar(
    name: str,
    tensor: ScalarLike,
    collections: Iterable[str] | None = None,
    family: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.scalar``: a ``simple_value`` summary (float32)."""
    tag = _summary_tag(name, family)
    value = to_float32_range(to_float(_tf1_scalar(tensor, tag), tag))
    return _collect(_one_value(legacy_scalar_value(tag, value)), collections, tag)


def _tf1_scalar(tensor: Any, tag: str) -> Any:
    """Refuse what TF1's ``ScalarSummary`` refuses and ``to_float`` would accept: a bool, a
    tensor of any shape but ``[]``, and a Python int that converts to neither int32 nor int64."""
    if isinstance(tensor, (bool, np.bool_)):
        raise TypeError(f"{tag!r}: expected a real number, got a bool (TF1: not a real dtype)")
    if isinstance(tensor, int):
        if not -(2**63) <= tensor < 2**63:
            raise ValueError(f"{tag!r}: the int {tensor} does not fit in int64, as TF1 requires")
        return tensor
    if hasattr(tensor, "__array__") or isinstance(tensor, (list, tuple)):
        array = as_array(tensor, tag)
        if array.dtype.kind == "b":
            raise TypeError(f"{tag!r}: expected a real number, got an array of dtype bool")
        if array.ndim:
            raise ValueError(
                f"{tag!r}: expected a scalar (shape []), got shape {list(array.shape)} "
                "(TF1: tags and values are not the same shape)"
            )
        return array
    return tensor


def histogram(
    name: str,
    values: ArrayLike,
    collections: Iterable[str] | None = None,
    family: str | None = None,
    *,
    process_group: Any = None,
) -> bytes:
    """``tf.compat.v1.summary.histogram``: a legacy ``HistogramProto`` with TF1's buckets
    (NaN or infinite values raise ``ValueError``, as the TF1 op fails). A ``DTensor``, or each
    rank's values with ``process_group=``, give the histogram of all of them on every rank (a
    collective call; ``sum`` is then the sum of the ranks' sums, not TF's sequential one)."""
    # Each kind's builder loads with its first call: importing v1 stays light.
    from ..._summaries.histogram import tf1_histogram_value

    tag = _summary_tag(name, family)
    value, nonfinite = tf1_histogram_value(tag, values, process_group)
    if nonfinite.nan:
        raise ValueError(f"Nan in summary histogram for: {tag}")
    if nonfinite.total:
        raise ValueError(f"Infinity in summary histogram for: {tag}")
    return _collect(_one_value(value), collections, tag)


def image(
    name: str,
    tensor: ArrayLike,
    max_outputs: int = 3,
    collections: Iterable[str] | None = None,
    family: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.image``: one PNG ``Summary.Image`` per image of ``[k, h, w, c]``
    (c = 1, 3 or 4). uint8 is stored as is; floats are normalised per image as TF1 does."""
    from ..._summaries.image import tf1_image_values

    tag = _summary_tag(name, family)
    images = as_native_array(tensor, tag)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise ValueError(
            f"{tag!r}: images must have shape [k, h, w, c] with c in (1, 3, 4), "
            f"got shape {images.shape}"
        )
    check_numeric(images, "images", tag=tag, accepted=UINT8_OR_FLOAT)
    count = check_int(max_outputs, "max_outputs", tag=tag, minimum=1)
    if images.shape[1] < 1 or images.shape[2] < 1:
        raise ValueError(f"{tag!r}: images must be at least 1x1 pixels, got shape {images.shape}")
    values = tf1_image_values(tag, images, count)
    return _collect(encode_summary(values), collections, tag)


def audio(
    name: str,
    tensor: ArrayLike,
    sample_rate: ScalarLike,
    max_outputs: int = 3,
    collections: Iterable[str] | None = None,
    family: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.audio``: one WAV ``Summary.Audio`` per clip of ``[k, t, c]`` or
    ``[k, t]`` floats in ``[-1, 1]``; ``sample_rate`` in Hz (a number >= 1, read as float as
    TF1's op does)."""
    from ..._summaries.audio import audio_clips, legacy_audio_values

    tag = _summary_tag(name, family)
    array = as_array(tensor, tag)
    if array.ndim == 2:
        array = array[:, :, np.newaxis]
    check_int(max_outputs, "max_outputs", tag=tag, minimum=1)  # TF1's attr: max_outputs >= 1
    clips = audio_clips(array, max_outputs, tag)
    rate = to_float(sample_rate, f"{tag}: sample_rate")
    if not 1 <= rate < math.inf:
        raise ValueError(f"{tag!r}: sample_rate must be a finite number >= 1, got {sample_rate!r}")
    values = legacy_audio_values(tag, clips, rate, int(max_outputs))
    return _collect(encode_summary(values), collections, tag)


def text(name: str, tensor: ArrayLike, collections: Iterable[str] | None = None) -> bytes:
    """``tf.compat.v1.summary.text``: a string tensor of any shape with text metadata."""
    from ..._summaries.text import string_array, text_value

    tag = _summary_tag(name)
    return _collect(_one_value(text_value(tag, string_array(tensor, tag))), collections, tag)


def tensor_summary(
    name: str,
    tensor: ArrayLike,
    summary_description: str | None = None,
    collections: Iterable[str] | None = None,
    summary_metadata: Any = None,
    family: str | None = None,
    display_name: str | None = None,
) -> bytes:
    """``tf.compat.v1.summary.tensor_summary``: any tensor with the given ``SummaryMetadata``
    (a proto or its serialized bytes)."""
    from ..._summaries.tensor import as_tensor_array, tensor_bytes, tensor_value

    tag = _summary_tag(name, family)
    if summary_metadata is None:
        from ... import proto

        md = proto.SummaryMetadata()
    else:
        md = metadata_message(summary_metadata, tag, "summary_metadata")
    description = check_text(summary_description, "summary_description", tag=tag)
    shown = check_text(display_name, "display_name", tag=tag)
    if description is not None:
        md.summary_description = description
    if shown is not None:
        md.display_name = shown
    array = as_tensor_array(tensor, tag)
    # The metadata field is present even when empty, as TF1's op writes it.
    value = tensor_value(tag, tensor_bytes(array, tag), bytes(md.SerializeToString()))
    return _collect(_one_value(value), collections, tag)


def _summary_bytes_of(item: Any, what: str) -> bytes:
    if isinstance(item, np.ndarray) and item.dtype.kind in "SO":
        return b"".join(_summary_bytes_of(x, what) for x in item.reshape(-1))
    return message_bytes(item, "Summary", what)


def merge(
    inputs: Iterable[Any], collections: Iterable[str] | None = None, name: str | None = None
) -> bytes:
    """``tf.compat.v1.summary.merge``: one serialized ``Summary`` with the values of all
    ``inputs``. A tag appearing twice raises ``ValueError``, as TF's MergeSummary does."""
    from ... import proto

    if isinstance(inputs, (bytes, bytearray)):
        inputs = [inputs]
    merged = proto.Summary()
    seen: set[str] = set()
    for i, item in enumerate(as_list(inputs, "merge" if name is None else name, "inputs")):
        summary = parse_message(
            proto.Summary, _summary_bytes_of(item, f"merge inputs[{i}]"), f"merge inputs[{i}]"
        )
        for value in summary.value:
            if value.tag in seen:
                raise ValueError(f"Duplicate tag {value.tag} found in summary inputs")
            seen.add(value.tag)
        merged.MergeFrom(summary)
    out = bytes(merged.SerializeToString())
    if collections is not None:
        _collect(out, collections, "merge" if name is None else str(name))
    return out


def merge_all(
    key: str = SUMMARIES, scope: str | None = None, name: str | None = None
) -> bytes | None:
    """``tf.compat.v1.summary.merge_all``: merge the summaries added to collection ``key`` in
    this thread since the last ``merge_all(key)`` (see "Steps" in the module docstring), or
    return ``None`` if there are none.

    The collection is emptied and tag names may be used again, so the next step's summaries get
    the same tags. ``scope`` keeps only tags matching it (``re.match``).
    """
    key = check_tag(key, "merge_all: key")
    pattern = None
    if scope is not None:
        scope = check_tag(scope, "merge_all: scope")
        try:
            pattern = re.compile(scope)
        except re.error as exc:
            raise ValueError(
                f"merge_all: scope {scope!r} is not a regular expression: {exc}"
            ) from None
    pending = [s for r, s in v1_state.collections.pop(key, []) if _fresh(r)]
    v1_state.names_in_use.clear()
    if pattern is not None:
        from ... import proto

        kept = []
        for item in pending:
            summary = proto.Summary.FromString(item)
            values = [v for v in summary.value if pattern.match(v.tag)]
            del summary.value[:]
            summary.value.extend(values)
            if values:
                kept.append(bytes(summary.SerializeToString()))
        pending = kept
    if not pending:
        return None
    return merge(pending)
