"""Compare two logdirs as TensorBoard's ``EventAccumulator`` reads them (issue 10's method).

For every run and every summary kind: the same tags in the same ``Tags()`` category, the same
steps and values. Allowed differences: wall times; PNG/GIF bytes (decoded pixels are compared,
as RGBA, so a gray PNG equals its RGB expansion); WAV samples only within ``audio_steps`` 16-bit
steps (0 by default: each writer converts floats as its library does; 1 where a run of one
library is compared with another's); histogram buckets where one side is
exact and the other approximates (num, min, max, sum, sum of squares and the cumulative counts
at the bucket edges both sides have are compared).
"""

from __future__ import annotations

import io
import os
import warnings
import wave
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

CATEGORIES = ("scalars", "images", "audio", "histograms", "tensors")


def accumulators(logdir: str | os.PathLike[str]) -> dict[str, Any]:
    """run (path relative to ``logdir``, "." for the top) -> loaded ``EventAccumulator``."""
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    out = {}
    for root, _, files in os.walk(logdir):
        if any("tfevents" in name for name in files):
            acc = ea.EventAccumulator(
                root, size_guidance={k: 0 for k in (*CATEGORIES, "compressedHistograms")}
            )
            acc.Reload()
            out[os.path.relpath(root, logdir)] = acc
    return out


def _pixels(encoded: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(encoded)) as image:
        return np.asarray(image.convert("RGBA"))


def _frames(encoded: bytes) -> list[np.ndarray]:
    from PIL import Image, ImageSequence

    with Image.open(io.BytesIO(encoded)) as image:
        return [np.asarray(frame.convert("RGBA")) for frame in ImageSequence.Iterator(image)]


def _samples(encoded: bytes) -> tuple[int, int, np.ndarray]:
    with wave.open(io.BytesIO(encoded)) as reader:
        assert reader.getsampwidth() == 2
        data = np.frombuffer(reader.readframes(reader.getnframes()), "<i2")
        return reader.getframerate(), reader.getnchannels(), data.astype(np.int32)


def _nodes(graph: Any) -> list[tuple[str, str, list[str]]]:
    return [(n.name, n.op, list(n.input)) for n in graph.node]


def _cumulative(limits: list[float], counts: list[float]) -> dict[float, float]:
    return dict(zip(limits, np.cumsum(counts).tolist(), strict=True))


def _same_histogram(where: str, ours: Any, anchor: Any) -> None:
    for field in ("min", "max", "num", "sum", "sum_squares"):
        a, b = getattr(ours, field), getattr(anchor, field)
        assert np.isclose(a, b, rtol=1e-6, atol=1e-9), f"{where}: {field} {a} != {b}"
    mine = _cumulative(list(ours.bucket_limit), list(ours.bucket))
    theirs = _cumulative(list(anchor.bucket_limit), list(anchor.bucket))
    shared = sorted(set(mine) & set(theirs))
    # The top edge always agrees (every value is below it); interior shared edges must too.
    for edge in shared:
        assert mine[edge] == theirs[edge], f"{where}: cumulative count at {edge}"
    assert mine[max(mine)] == theirs[max(theirs)] == anchor.num, where


def _same_images(where: str, ours: Any, anchor: Any) -> None:
    assert (ours.width, ours.height) == (anchor.width, anchor.height), where
    a, b = ours.encoded_image_string, anchor.encoded_image_string
    if a[:3] == b"GIF" or b[:3] == b"GIF":
        fa, fb = _frames(a), _frames(b)
        assert len(fa) == len(fb), where
        for i, (x, y) in enumerate(zip(fa, fb, strict=True)):
            np.testing.assert_array_equal(x, y, err_msg=f"{where} frame {i}")
    else:
        np.testing.assert_array_equal(_pixels(a), _pixels(b), err_msg=where)


def _same_audio(where: str, ours: Any, anchor: Any, steps: int = 0) -> None:
    assert ours.content_type == anchor.content_type, where
    assert ours.sample_rate == anchor.sample_rate, where
    assert ours.length_frames == anchor.length_frames, where
    ra, ca, sa = _samples(ours.encoded_audio_string)
    rb, cb, sb = _samples(anchor.encoded_audio_string)
    assert (ra, ca) == (rb, cb), where
    assert sa.shape == sb.shape, where
    assert np.abs(sa - sb).max(initial=0) <= steps, where
    if steps == 0:
        assert ours.encoded_audio_string == anchor.encoded_audio_string, where


def _same_tensor(where: str, ours: Any, anchor: Any) -> None:
    from tensorboard.util import tensor_util

    assert ours.dtype == anchor.dtype, where
    a, b = tensor_util.make_ndarray(ours), tensor_util.make_ndarray(anchor)
    assert a.shape == b.shape, where
    np.testing.assert_array_equal(a, b, err_msg=where)


_COMPARE: dict[str, tuple[str, Callable[[str, Any, Any], None]]] = {
    "histograms": ("histogram_value", _same_histogram),
    "images": ("", _same_images),
    "audio": ("", _same_audio),
    "tensors": ("tensor_proto", _same_tensor),
}


def assert_same_run(
    where: str,
    ours: Any,
    anchor: Any,
    *,
    ignore_tags: Callable[[str], bool] = lambda t: False,
    audio_steps: int = 0,
) -> None:
    """Same tags per category, same steps, same values (see the module docstring)."""
    tags_ours, tags_anchor = ours.Tags(), anchor.Tags()
    for category in CATEGORIES:
        mine = sorted(t for t in tags_ours[category] if not ignore_tags(t))
        theirs = sorted(t for t in tags_anchor[category] if not ignore_tags(t))
        assert mine == theirs, f"{where}: {category} tags differ"
    assert bool(tags_ours["graph"]) == bool(tags_anchor["graph"]), f"{where}: graph"
    if tags_anchor["graph"]:
        assert _nodes(ours.Graph()) == _nodes(anchor.Graph()), f"{where}: graph nodes"
    for plugin in sorted({md.plugin_data.plugin_name for md in anchor.summary_metadata.values()}):
        if plugin:
            a_content = {
                t: c for t, c in ours.PluginTagToContent(plugin).items() if not ignore_tags(t)
            }
            b_content = {
                t: c for t, c in anchor.PluginTagToContent(plugin).items() if not ignore_tags(t)
            }
            assert a_content == b_content, f"{where}: {plugin} plugin metadata"
    for tag in sorted(t for t in tags_anchor["scalars"] if not ignore_tags(t)):
        a = [(e.step, e.value) for e in ours.Scalars(tag)]
        b = [(e.step, e.value) for e in anchor.Scalars(tag)]
        assert a == b, f"{where}: scalars {tag!r}"
    for category, (field, same) in _COMPARE.items():
        read = getattr(ours, category.capitalize() if category != "audio" else "Audio")
        read_anchor = getattr(anchor, category.capitalize() if category != "audio" else "Audio")
        for tag in sorted(t for t in tags_anchor[category] if not ignore_tags(t)):
            a, b = read(tag), read_anchor(tag)
            assert [e.step for e in a] == [e.step for e in b], f"{where}: {category} {tag!r}"
            for x, y in zip(a, b, strict=True):
                if category == "audio":
                    _same_audio(f"{where}: audio {tag!r} step {y.step}", x, y, audio_steps)
                    continue
                same(
                    f"{where}: {category} {tag!r} step {y.step}",
                    getattr(x, field) if field else x,
                    getattr(y, field) if field else y,
                )


def assert_same_logdir(
    ours: str | os.PathLike[str],
    anchor: str | os.PathLike[str],
    *,
    run_name: Callable[[str], str] = lambda run: run,
    ignore_tags: Callable[[str], bool] = lambda t: False,
    audio_steps: int = 0,
) -> None:
    """Every run of ``anchor`` (renamed by ``run_name``) is in ``ours`` with the same content."""
    mine, theirs = accumulators(ours), accumulators(anchor)
    expected = {run_name(run): acc for run, acc in theirs.items()}
    assert sorted(mine) == sorted(expected), "runs differ"
    for run, acc in expected.items():
        assert_same_run(
            f"run {run!r}", mine[run], acc, ignore_tags=ignore_tags, audio_steps=audio_steps
        )


def tbparse_scalars(logdir: str | os.PathLike[str]) -> Any:
    """``tbparse.SummaryReader(logdir).scalars`` sorted into a canonical row order."""
    tbparse = pytest.importorskip("tbparse", reason="tbparse runs in .ci/stages/40-frameworks.sh")
    with warnings.catch_warnings():
        # tbparse 0.0.9 calls pandas APIs that pandas 3 deprecates; not ours to fix.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        frame = tbparse.SummaryReader(os.fspath(logdir), extra_columns={"dir_name"}).scalars
    return frame.sort_values(["dir_name", "tag", "step"], kind="stable").reset_index(drop=True)
