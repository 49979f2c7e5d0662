"""Conformance with TensorFlow: the programs in tests/conformance/, run with npsummary, must
write what TensorFlow 2.21 wrote running them (golden files from gen_golden.py).

Compared per event, in order: step, kind, and per summary value the tag, the value kind and the
metadata exactly; scalars, tensors, text, audio and histogram buckets exactly; images as decoded
pixels (PNG bytes come from different encoders); returned observations as JSON. Wall times and
the file name are not compared.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from conformance import tf1_program, tf2_program
from conftest import only_event_file, read_events
from paths import TESTS

GOLDEN = TESTS / "conformance" / "golden"


def _pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image)


def _ndarray(tensor: Any) -> np.ndarray:
    from tensorboard.util import tensor_util

    return np.asarray(tensor_util.make_ndarray(tensor))


def _compare_tensor(where: str, ours: Any, gold: Any, plugin: str) -> None:
    assert ours.dtype == gold.dtype, where
    assert ours.tensor_shape == gold.tensor_shape, where
    if plugin == "images":
        assert ours.string_val[:2] == gold.string_val[:2], where
        assert len(ours.string_val) == len(gold.string_val), where
        for i, (a, b) in enumerate(zip(ours.string_val[2:], gold.string_val[2:], strict=True)):
            np.testing.assert_array_equal(_pixels(a), _pixels(b), err_msg=f"{where} image {i}")
    elif gold.dtype == 7:
        assert list(ours.string_val) == list(gold.string_val), where
    else:
        np.testing.assert_array_equal(_ndarray(ours), _ndarray(gold), err_msg=where)


def _compare_value(where: str, ours: Any, gold: Any) -> None:
    assert ours.tag == gold.tag, where
    where = f"{where} tag {gold.tag!r}"
    assert ours.HasField("metadata") == gold.HasField("metadata"), where
    assert ours.metadata == gold.metadata, where
    kind = gold.WhichOneof("value")
    assert ours.WhichOneof("value") == kind, where
    if kind == "simple_value":
        assert np.float32(ours.simple_value) == np.float32(gold.simple_value), where
    elif kind == "histo":
        a, b = ours.histo, gold.histo
        assert (a.min, a.max, a.num) == (b.min, b.max, b.num), where
        assert (a.sum, a.sum_squares) == (b.sum, b.sum_squares), where
        assert list(a.bucket_limit) == list(b.bucket_limit), where
        assert list(a.bucket) == list(b.bucket), where
    elif kind == "image":
        a, b = ours.image, gold.image
        assert (a.height, a.width, a.colorspace) == (b.height, b.width, b.colorspace), where
        np.testing.assert_array_equal(
            _pixels(a.encoded_image_string), _pixels(b.encoded_image_string), err_msg=where
        )
    elif kind == "audio":
        assert ours.audio == gold.audio, where
    elif kind == "tensor":
        _compare_tensor(where, ours.tensor, gold.tensor, gold.metadata.plugin_data.plugin_name)
    else:  # pragma: no cover - the programs write no other kinds
        raise AssertionError(f"{where}: unexpected value kind {kind}")


def compare_runs(ours_dir: Path, gold_dir: Path) -> None:
    ours = [e for e in read_events(only_event_file(ours_dir)) if not e.file_version]
    gold = [e for e in read_events(only_event_file(gold_dir)) if not e.file_version]
    assert len(ours) == len(gold), (
        f"{len(ours)} events written, TensorFlow wrote {len(gold)}: "
        f"{[e.WhichOneof('what') for e in ours]} vs {[e.WhichOneof('what') for e in gold]}"
    )
    for i, (a, b) in enumerate(zip(ours, gold, strict=True)):
        where = f"event {i}"
        assert a.step == b.step, where
        kind = b.WhichOneof("what")
        assert a.WhichOneof("what") == kind, where
        if kind == "summary":
            assert [v.tag for v in a.summary.value] == [v.tag for v in b.summary.value], where
            for va, vb in zip(a.summary.value, b.summary.value, strict=True):
                _compare_value(where, va, vb)
        else:
            assert getattr(a, kind) == getattr(b, kind), where


def _golden_observations(kind: str, section: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / kind / f"{section}.json").read_text())
    data.pop("tensorflow")
    return data


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))


@pytest.mark.parametrize("section", list(tf2_program.SECTIONS))
def test_tf2_program_matches_tensorflow(section: str, tmp_path: Path) -> None:
    observations = tf2_program.SECTIONS[section](npsummary, npsummary.name_scope, str(tmp_path))
    compare_runs(tmp_path, GOLDEN / "tf2" / section)
    assert _json(observations) == _golden_observations("tf2", section)


def _tf1_compile(build: Any, example: dict[str, np.ndarray]) -> Any:
    return build


@pytest.mark.parametrize("section", list(tf1_program.SECTIONS))
def test_tf1_program_matches_tensorflow(section: str, tmp_path: Path) -> None:
    npsummary.v1.merge_all()  # start a fresh round in this thread
    observations = tf1_program.SECTIONS[section](
        npsummary.v1, npsummary.name_scope, str(tmp_path), _tf1_compile
    )
    compare_runs(tmp_path, GOLDEN / "tf1" / section)
    assert _json(observations) == _golden_observations("tf1", section)
