"""The reader on files written by TF2, TF1, tensorboardX and torch (tests/golden/reader/).

Each golden logdir is compared twice: with what the writing program logged (``<writer>.json``,
written by gen_reader_golden.py beside the files) and, value by value, with TensorBoard's own
reader (``plugin_event_accumulator.EventAccumulator`` keeping every record).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import reader
from paths import TESTS

GOLDEN = TESTS / "golden" / "reader"
WRITERS = ["tf2", "tf1", "tensorboardx", "torch"]
TEXT_TAG = {"tf2": "text", "tf1": "text"}
IMAGE_TAG = {"tf1": "img/image"}
AUDIO_TAG = {"tf1": "aud/audio"}
PR_TAG = {"tf2": "pr/pr_curves"}


def _expected(writer: str) -> dict[str, Any]:
    with open(GOLDEN / f"{writer}.json") as f:
        data: dict[str, Any] = json.load(f)
    return data


@pytest.mark.parametrize("writer", WRITERS)
def test_golden_against_what_was_logged(writer: str) -> None:
    want = _expected(writer)
    data = reader.load(GOLDEN / writer, decode=True)
    assert data.stats.corrupt_records == 0 and data.stats.torn_tails == 0
    assert data.stats.bad_values == 0
    for tag, points in want["scalars"].items():
        s = data.scalars[(".", tag)]
        assert [[int(a), float(b)] for a, b in zip(s.steps, s.values, strict=True)] == points
    h = data.histograms[(".", "hist")]
    assert h.steps.tolist() == [0, 1, 2]
    for buckets, logged in zip(h.buckets, want["hist"], strict=True):
        assert buckets[:, 2].sum() == logged["n"]
        if writer != "tf2":  # legacy: outer edges are the data's min and max (float32)
            assert buckets[0, 0] == np.float32(logged["min"])
            assert buckets[-1, 1] == np.float32(logged["max"])
        else:
            assert buckets[0, 0] == logged["min"] and buckets[-1, 1] == logged["max"]
    images = data.images[(".", IMAGE_TAG.get(writer, "img"))]
    for row, logged in zip(images.images, want["img"], strict=True):
        assert row[0].tolist() == logged
    audio = data.audio[(".", AUDIO_TAG.get(writer, "aud"))]
    assert audio.sample_rates.tolist() == [want["rate"]] * 3
    for row, logged in zip(audio.clips, want["aud"], strict=True):
        # 16-bit PCM; torch scales by 32767 and truncates, so allow two steps
        assert np.abs(row[0][:, 0] - np.array(logged)).max() <= 2 / 32768
    text = data.text[(".", TEXT_TAG.get(writer, "text/text_summary"))]
    assert [np.asarray(t).reshape(-1)[0] for t in text.texts] == want["text"]
    if writer != "tf1":
        pr = data.pr_curves[(".", PR_TAG.get(writer, "pr"))]
        labels = np.array(want["labels"])
        tp, fp = pr.data[0][0], pr.data[0][1]
        assert tp[0] == labels.sum() and fp[0] == (~labels).sum()
        assert pr.thresholds[0].tolist() == [i / 10 for i in range(11)]
        session = data.hparams["hp"]
        hp = dict(want["hparams"])
        if writer == "torch":
            hp["wide"] = 1.0  # torch logs a bool hyperparameter as a number
        assert session.hparams == hp
        assert session.metrics == {"metric": want["metric"]}


def _tb_accumulator(path: Path) -> Any:
    pea = pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
    acc = pea.EventAccumulator(str(path), size_guidance={k: 0 for k in pea.DEFAULT_SIZE_GUIDANCE})
    acc.Reload()
    return acc


def _runs(root: Path) -> list[tuple[str, Path]]:
    return [
        (str(p.relative_to(root)), p)
        for p in sorted([root, *[d for d in root.rglob("*") if d.is_dir()]])
        if any("tfevents" in f.name for f in p.iterdir())
    ]


@pytest.mark.parametrize("writer", WRITERS)
def test_golden_against_tensorboard(writer: str) -> None:
    tensor_util = pytest.importorskip("tensorboard.util.tensor_util")
    data = reader.load(GOLDEN / writer)
    for run, path in _runs(GOLDEN / writer):
        acc = _tb_accumulator(path)
        compared = 0
        for tag in acc.Tags()["tensors"]:
            plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
            events = acc.Tensors(tag)
            steps = [e.step for e in events]
            arrays = [tensor_util.make_ndarray(e.tensor_proto) for e in events]
            if plugin == "scalars":
                s = data.scalars[(run, tag)]
                assert s.steps.tolist() == steps
                assert s.wall_times.tolist() == [e.wall_time for e in events]
                assert s.values.tolist() == [a.item() for a in arrays]
            elif plugin == "histograms":
                h = data.histograms[(run, tag)]
                assert all(np.array_equal(a, b) for a, b in zip(h.buckets, arrays, strict=True))
            elif plugin == "images":
                im = data.images[(run, tag)]
                assert [[im.widths[i], im.heights[i], *im.images[i]] for i in range(len(im))] == [
                    [int(a[0]), int(a[1]), *a[2:]] for a in arrays
                ]
            elif plugin == "audio":
                au = data.audio[(run, tag)]
                assert au.clips == [list(np.asarray(a).reshape(len(a), -1)[:, 0]) for a in arrays]
            elif plugin == "text":
                tx = data.text[(run, tag)]
                assert [t.tolist() for t in tx.texts] == [
                    np.vectorize(lambda b: b.decode())(a).tolist() for a in arrays
                ]
            elif plugin == "pr_curves":
                pr = data.pr_curves[(run, tag)]
                assert all(np.array_equal(a, b) for a, b in zip(pr.data, arrays, strict=True))
            elif plugin == "hparams":
                continue
            else:
                raise AssertionError(f"unexpected plugin {plugin!r} for {tag!r}")
            assert getattr(data, plugin)[(run, tag)].steps.tolist() == steps
            compared += 1
        assert compared >= 1
