"""Compare a logdir written by an npsummary integration with the golden one the original wrote
with TensorFlow (``golden_tf/``), event by event as TensorBoard's own loader reads them.

Both sides are read with TensorBoard's ``LegacyEventFileLoader`` (the events as stored, before
any read-time migration). Per run (directory), the summary values are grouped by (tag, step);
both sides must have the same groups, and within a group the same values in order: the same
plugin, plugin content, display name and description, dtype and shape, and equal data. Equal
data means: the same numbers (exactly; NaN equals NaN) and strings, except

* images (plugin ``images``): the width/height strings equal and the PNGs decode to the same
  pixels (two encoders compress differently);
* audio (plugin ``audio``): the WAVs decode to the same rate, channels and length, samples
  within one 16-bit step (the float -> int16 rounding differs), and labels equal;
* hparams plugin content: compared decoded; with ``hparams_times=False`` the start, end and
  creation times (the clock at the call, unless given) are left out;
* tags in ``timing_tags`` (values measured with the clock): dtype and shape only.

Wall times and the ``file_version`` events are not compared; neither are file names.
"""

from __future__ import annotations

import io
import json
import os
import wave
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

GOLDEN = Path(__file__).parent / "golden_tf" / "golden"
_TIME_FIELDS = ("start_time_secs", "end_time_secs", "time_created_secs")


def golden(case: str) -> Path:
    return GOLDEN / case


def observations(case: str) -> Any:
    with open(GOLDEN / f"{case}.json") as f:
        return json.load(f)["observations"]


def read_runs(logdir: str | os.PathLike[str]) -> dict[str, dict[tuple[str, int], list[Any]]]:
    """run -> (tag, step) -> summary values (protos), in file-name then record order."""
    loader_module = pytest.importorskip("tensorboard.backend.event_processing.event_file_loader")
    runs: dict[str, dict[tuple[str, int], list[Any]]] = {}
    for root, _, names in os.walk(logdir):
        files = sorted(name for name in names if "tfevents" in name)
        if not files:
            continue
        groups: dict[tuple[str, int], list[Any]] = defaultdict(list)
        for name in files:
            loader = loader_module.LegacyEventFileLoader(os.path.join(root, name))
            for event in loader.Load():
                if event.HasField("summary"):
                    for value in event.summary.value:
                        groups[(value.tag, event.step)].append(value)
                else:
                    kind = event.WhichOneof("what")
                    assert kind == "file_version", f"{root}/{name}: unexpected {kind} event"
        runs[os.path.relpath(root, logdir)] = dict(groups)
    return runs


def _hparams(content: bytes, keep_times: bool) -> dict[str, Any]:
    from google.protobuf import json_format

    from npsummary import proto

    data = json_format.MessageToDict(
        proto.HParamsPluginData.FromString(content), preserving_proto_field_name=True
    )
    if not keep_times:
        for part in data.values():
            if isinstance(part, dict):
                for field in _TIME_FIELDS:
                    part.pop(field, None)
    return dict(data)


def _pixels(encoded: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(encoded)) as image:
        return np.asarray(image.convert("RGBA"))


def _samples(encoded: bytes) -> tuple[int, int, np.ndarray]:
    with wave.open(io.BytesIO(encoded)) as reader:
        data = np.frombuffer(reader.readframes(reader.getnframes()), "<i2").astype(np.int32)
        return reader.getframerate(), reader.getnchannels(), data


def _same_value(
    where: str,
    ours: Any,
    theirs: Any,
    *,
    timing: bool,
    keep_times: bool,
    normalize: Callable[[Any], Any] | None = None,
    rtol: float = 0.0,
) -> None:
    from tensorboard.util import tensor_util

    a_md, b_md = ours.metadata, theirs.metadata
    plugin = b_md.plugin_data.plugin_name
    assert a_md.plugin_data.plugin_name == plugin, f"{where}: plugin"
    assert a_md.display_name == b_md.display_name, f"{where}: display name"
    assert a_md.summary_description == b_md.summary_description, f"{where}: description"
    if plugin == "hparams":
        assert _hparams(a_md.plugin_data.content, keep_times) == _hparams(
            b_md.plugin_data.content, keep_times
        ), f"{where}: hparams content"
    else:
        assert a_md.plugin_data.content == b_md.plugin_data.content, f"{where}: plugin content"
    assert ours.WhichOneof("value") == theirs.WhichOneof("value"), f"{where}: value kind"
    assert ours.WhichOneof("value") == "tensor", f"{where}: not a tensor summary"
    assert ours.tensor.dtype == theirs.tensor.dtype, f"{where}: dtype"
    a, b = tensor_util.make_ndarray(ours.tensor), tensor_util.make_ndarray(theirs.tensor)
    assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
    if timing:
        return
    if plugin == "images":
        assert list(a[:2]) == list(b[:2]), f"{where}: width/height"
        for i, (x, y) in enumerate(zip(a[2:], b[2:], strict=True)):
            np.testing.assert_array_equal(_pixels(x), _pixels(y), err_msg=f"{where} image {i}")
    elif plugin == "audio":
        for i, (x, y) in enumerate(zip(a.reshape(-1, 2), b.reshape(-1, 2), strict=True)):
            ra, ca, sa = _samples(x[0])
            rb, cb, sb = _samples(y[0])
            assert (ra, ca, sa.shape) == (rb, cb, sb.shape), f"{where}: clip {i} format"
            assert np.abs(sa - sb).max(initial=0) <= 1, f"{where}: clip {i} samples"
            assert x[1] == y[1], f"{where}: clip {i} label"
    elif normalize is not None:
        assert normalize(a) == normalize(b), f"{where}: normalized data"
    elif a.dtype == object:
        assert a.tolist() == b.tolist(), f"{where}: strings"
    elif rtol and a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol / 100, err_msg=where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)


def assert_same_logdir(
    ours: str | os.PathLike[str],
    theirs: str | os.PathLike[str],
    *,
    timing_tags: Iterable[str] = (),
    hparams_times: bool = False,
    runs: dict[str, str] | None = None,
    normalize: dict[str, Callable[[Any], Any]] | None = None,
    rtol: float = 0.0,
) -> None:
    """``ours`` holds what ``theirs`` (the golden logdir) holds: see the module docstring.
    ``runs`` renames golden runs to ours where a directory name cannot match; ``normalize``
    maps a tag to a function of its decoded data whose results are compared instead; ``rtol``
    > 0 lets floating-point data differ by that relative tolerance (absolute: ``rtol / 100``,
    for values near 0)."""
    timing = set(timing_tags)
    mine, golden_runs = read_runs(ours), read_runs(theirs)
    renamed = {(runs or {}).get(run, run): groups for run, groups in golden_runs.items()}
    assert sorted(mine) == sorted(renamed), "runs differ"
    assert renamed, "the golden logdir is empty"
    for run, groups in renamed.items():
        assert sorted(mine[run]) == sorted(groups), f"run {run!r}: (tag, step) pairs differ"
        for (tag, step), values in groups.items():
            where = f"run {run!r} tag {tag!r} step {step}"
            assert len(mine[run][(tag, step)]) == len(values), f"{where}: count"
            for x, y in zip(mine[run][(tag, step)], values, strict=True):
                _same_value(
                    where,
                    x,
                    y,
                    timing=tag in timing,
                    keep_times=hparams_times,
                    normalize=(normalize or {}).get(tag),
                    rtol=rtol,
                )


def other_files(logdir: str | os.PathLike[str]) -> dict[str, bytes]:
    """The files of a logdir that are not event files: relative path -> contents."""
    out = {}
    for root, _, names in os.walk(logdir):
        for name in names:
            if "tfevents" not in name:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    out[os.path.relpath(path, logdir)] = f.read()
    return out
