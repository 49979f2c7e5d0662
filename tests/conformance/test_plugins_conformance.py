"""Conformance with tensorboardX / torch for the plugin methods: each section of
``conformance/plugins_program.py`` run with npsummary must write what its anchor wrote
(golden files from ``conformance/gen_plugins_golden.py``).

Per run directory, events are compared in order (the anchors' ``file_version`` events aside):
step, then per value the tag, the value kind, the metadata exactly, tensors exactly (as
arrays), images by size, colorspace and decoded pixels (PNG and every GIF frame, with its
duration). Projector files are compared byte for byte (TSVs), as decoded pixels (sprite) and as
parsed ``ProjectorConfig`` messages. Scalars are compared by tag and value: whether
``SummaryWriter.add_scalar`` writes ``simple_value`` is decided by the scalar format, not here.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance import plugins_program
from conftest import read_events
from paths import TESTS

pytestmark = pytest.mark.torch

GOLDEN = TESTS / "conformance" / "golden" / "plugins"
Image = pytest.importorskip("PIL.Image")


def _frames(data: bytes) -> tuple[list[np.ndarray], list[Any]]:
    frames, durations = [], []
    with Image.open(io.BytesIO(data)) as image:
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
            durations.append(image.info.get("duration"))
    return frames, durations


def _runs(root: Path) -> dict[str, Path]:
    out = {}
    for directory, _, files in os.walk(root):
        if any("tfevents" in name for name in files):
            out[os.path.relpath(directory, root)] = Path(directory)
    return out


def _events(run: Path) -> list[Any]:
    files = sorted(p for p in run.iterdir() if "tfevents" in p.name)
    assert len(files) == 1, files
    return [e for e in read_events(files[0]) if not e.HasField("file_version")]


def _scalar(value: Any) -> float:
    from tensorboard.util import tensor_util

    if value.HasField("simple_value"):
        return float(value.simple_value)
    assert value.metadata.plugin_data.plugin_name == "scalars"
    return float(tensor_util.make_ndarray(value.tensor).item())


def _compare_metadata(where: str, ours: Any, gold: Any) -> None:
    if gold.plugin_data.plugin_name != "hparams":
        assert ours == gold, where
        return
    # A protobuf map's wire order is not defined: compare the parsed content.
    from tensorboard.plugins.hparams import plugin_data_pb2

    parse = plugin_data_pb2.HParamsPluginData.FromString
    assert ours.plugin_data.plugin_name == "hparams", where
    assert parse(ours.plugin_data.content) == parse(gold.plugin_data.content), where
    ours.plugin_data.content = gold.plugin_data.content
    assert ours == gold, where


def _compare_value(where: str, ours: Any, gold: Any) -> None:
    from tensorboard.util import tensor_util

    assert ours.tag == gold.tag, where
    kind = gold.WhichOneof("value")
    if kind == "simple_value":
        assert _scalar(ours) == pytest.approx(gold.simple_value), where
        return
    assert ours.WhichOneof("value") == kind, where
    _compare_metadata(where, ours.metadata, gold.metadata)
    if kind == "tensor":
        assert ours.tensor.dtype == gold.tensor.dtype, where
        assert ours.tensor.tensor_shape == gold.tensor.tensor_shape, where
        a, b = tensor_util.make_ndarray(ours.tensor), tensor_util.make_ndarray(gold.tensor)
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif kind == "image":
        for field in ("height", "width", "colorspace"):
            assert getattr(ours.image, field) == getattr(gold.image, field), (where, field)
        ours_frames, ours_durations = _frames(ours.image.encoded_image_string)
        gold_frames, gold_durations = _frames(gold.image.encoded_image_string)
        assert ours_durations == gold_durations, where
        assert len(ours_frames) == len(gold_frames), where
        for index, (a, b) in enumerate(zip(ours_frames, gold_frames, strict=True)):
            np.testing.assert_array_equal(a, b, err_msg=f"{where} frame {index}")
    elif kind is not None:
        raise AssertionError(f"{where}: unexpected value kind {kind}")


def _compare_run(where: str, ours: Path, gold: Path) -> None:
    ours_events, gold_events = _events(ours), _events(gold)
    assert len(ours_events) == len(gold_events), where
    for index, (a, b) in enumerate(zip(ours_events, gold_events, strict=True)):
        at = f"{where} event {index}"
        assert a.step == b.step, at
        assert a.WhichOneof("what") == b.WhichOneof("what"), at
        assert len(a.summary.value) == len(b.summary.value), at
        for value_a, value_b in zip(a.summary.value, b.summary.value, strict=True):
            _compare_value(at, value_a, value_b)


def _compare_files(ours: Path, gold: Path) -> None:
    from google.protobuf import text_format
    from tensorboard.plugins.projector import projector_config_pb2

    for directory, _, files in os.walk(gold):
        for name in files:
            if "tfevents" in name:
                continue
            relative = os.path.relpath(os.path.join(directory, name), gold)
            mine, theirs = ours / relative, Path(directory) / name
            assert mine.is_file(), relative
            if name.endswith(".png"):
                np.testing.assert_array_equal(
                    _frames(mine.read_bytes())[0][0], _frames(theirs.read_bytes())[0][0]
                )
            elif name.endswith(".pbtxt"):
                parsed = [
                    text_format.Parse(p.read_text(), projector_config_pb2.ProjectorConfig())
                    for p in (mine, theirs)
                ]
                assert parsed[0] == parsed[1]
            else:
                assert mine.read_bytes() == theirs.read_bytes(), relative


@pytest.mark.parametrize("section", sorted(plugins_program.SECTIONS))
def test_section_matches_its_anchor(section: str, tmp_path: Path) -> None:
    from npsummary import SummaryWriter

    with SummaryWriter(str(tmp_path)) as writer:
        plugins_program.SECTIONS[section](writer, lambda array: array)
    gold_root = GOLDEN / section
    gold_runs, our_runs = _runs(gold_root), _runs(tmp_path)
    assert sorted(our_runs) == sorted(gold_runs)
    for run, directory in gold_runs.items():
        _compare_run(f"{section}/{run}", our_runs[run], directory)
    _compare_files(tmp_path, gold_root)
