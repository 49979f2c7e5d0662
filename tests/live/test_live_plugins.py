"""The plugin dashboards through a real TensorBoard server, on both loaders: HParams (POST
experiment and session_groups), PR curves, custom scalars layout, projector, mesh, and video
frames under images, each compared with what was logged."""

from __future__ import annotations

import io
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter
from tbserver import LOADERS, TensorBoard, tensorboard

pytestmark = pytest.mark.live
Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(7)
LABELS = RNG.integers(0, 2, 300)
PREDICTIONS = RNG.random(300)
VIDEO = (RNG.integers(0, 5, (1, 4, 3, 10, 12)) * 60).astype(np.uint8)
MAT = RNG.standard_normal((6, 4)).astype(np.float32)
VERTICES = RNG.standard_normal((1, 5, 3)).astype(np.float32)
FACES = np.array([[[0, 1, 2], [2, 3, 4]]], dtype=np.int32)
COLORS = RNG.integers(0, 256, (1, 5, 3)).astype(np.uint8)
LAYOUT = {
    "losses": {"all": ["Multiline", ["loss/.*"]]},
    "bands": {"m": ["Margin", ["v", "lo", "hi"]]},
}


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_plugins")
    with SummaryWriter(str(root / "sweep")) as writer:
        writer.add_hparams({"lr": 0.1, "opt": "adam"}, {"hp/acc": 0.75}, run_name="trial1")
        writer.add_hparams({"lr": 0.01, "opt": "sgd"}, {"hp/acc": 0.5}, run_name="trial2")
    with SummaryWriter(str(root / "main")) as writer:
        writer.add_pr_curve("pr", LABELS, PREDICTIONS, 3, num_thresholds=200)
        writer.add_custom_scalars(LAYOUT)
        writer.add_video("clip", VIDEO, 2, fps=5)
        writer.add_mesh("shape", VERTICES, COLORS, FACES, global_step=4)
        writer.add_embedding(MAT, [f"p{i}" for i in range(6)], tag="points")
    return str(root)


@pytest.fixture(scope="module", params=LOADERS)
def tb(request: pytest.FixtureRequest, logdir: str) -> Iterator[TensorBoard]:
    with tensorboard(logdir, request.param) as server:
        yield server


def _post_json(tb: TensorBoard, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        tb.url(path), data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_hparams_sessions_and_metrics(tb: TensorBoard) -> None:
    experiment = tb.wait_for(
        lambda: (
            (e := _post_json(tb, "/data/plugin/hparams/experiment", {"experimentName": ""})).get(
                "hparamInfos"
            )
            and e
        )
    )
    assert sorted(h["name"] for h in experiment["hparamInfos"]) == ["lr", "opt"]
    assert [m["name"]["tag"] for m in experiment["metricInfos"]] == ["hp/acc"]
    body = {
        "experimentName": "",
        "allowedStatuses": ["STATUS_SUCCESS", "STATUS_UNKNOWN", "STATUS_RUNNING", "STATUS_FAILURE"],
        "colParams": [],
        "startIndex": 0,
        "sliceSize": 100,
    }
    groups = tb.wait_for(
        lambda: (
            (g := _post_json(tb, "/data/plugin/hparams/session_groups", body)).get("sessionGroups")
            and len(g["sessionGroups"]) == 2
            and all(s.get("metricValues") for s in g["sessionGroups"])
            and g
        )
    )["sessionGroups"]
    seen = {}
    for group in groups:
        (metric,) = group["metricValues"]
        assert metric["name"]["tag"] == "hp/acc"
        seen[group["hparams"]["opt"]] = (group["hparams"]["lr"], metric["value"])
        assert group["sessions"][0]["name"].startswith("sweep/trial")
    assert seen == {"adam": (0.1, 0.75), "sgd": (0.01, 0.5)}


def test_pr_curve_points(tb: TensorBoard) -> None:
    data = tb.wait_for(
        lambda: tb.get_json("/data/plugin/pr_curves/pr_curves", run="main", tag="pr")
    )
    (entry,) = data["main"]
    assert entry["step"] == 3
    # num_thresholds=200 writes 127, as tensorboardX and torch write
    thresholds = np.arange(127) / 126
    tp = np.array([(LABELS * (t <= PREDICTIONS)).sum() for t in thresholds])
    n = len(entry["true_positives"])  # trailing thresholds with TP + FP = 0 are trimmed
    assert 120 <= n <= 127
    assert np.mean(np.array(entry["true_positives"]) == tp[:n]) > 0.98
    np.testing.assert_allclose(entry["thresholds"], thresholds[:n], atol=1e-6)


def test_custom_scalars_layout(tb: TensorBoard) -> None:
    layout = tb.wait_for(lambda: tb.get_json("/data/plugin/custom_scalars/layout"))
    categories = {c["title"]: c for c in layout["category"]}
    assert categories["losses"]["chart"][0]["multiline"]["tag"] == ["loss/.*"]
    series = categories["bands"]["chart"][0]["margin"]["series"][0]
    assert (series["value"], series["lower"], series["upper"]) == ("v", "lo", "hi")


def test_video_frames_under_images(tb: TensorBoard) -> None:
    (entry,) = tb.wait_for(
        lambda: tb.get_json("/data/plugin/images/images", run="main", tag="clip", sample=0)
    )
    assert entry["step"] == 2
    gif = tb.get(f"/data/plugin/images/individualImage?{entry['query']}")
    with Image.open(io.BytesIO(gif)) as image:
        assert image.n_frames == 4
        for index in range(4):
            image.seek(index)
            np.testing.assert_array_equal(
                np.asarray(image.convert("RGB")), VIDEO[0, index].transpose(1, 2, 0)
            )


def test_mesh_tensors(tb: TensorBoard) -> None:
    tags = tb.wait_for(lambda: tb.get_json("/data/plugin/mesh/tags").get("main"))
    assert tags == {"shape": {"samples": 1}}
    meta = tb.wait_for(lambda: tb.get_json("/data/plugin/mesh/meshes", run="main", tag="shape"))
    assert sorted(m["content_type"] for m in meta) == [1, 2, 3]
    assert all(
        m["step"] == 4 and m["data_shape"] == [1, 5, 3] for m in meta if m["content_type"] == 1
    )
    for content_type, dtype, expected in (
        ("VERTEX", np.float32, VERTICES),
        ("FACE", np.int32, FACES),
        ("COLOR", np.uint8, COLORS),
    ):
        raw = tb.get(
            "/data/plugin/mesh/data",
            run="main",
            tag="shape",
            sample=0,
            content_type=content_type,
            step=4,
        )
        np.testing.assert_array_equal(np.frombuffer(raw, dtype=dtype), expected[0].reshape(-1))


def test_projector_tensor_and_metadata(tb: TensorBoard) -> None:
    runs = tb.wait_for(lambda: tb.get_json("/data/plugin/projector/runs"))
    assert "main" in runs
    config = tb.wait_for(lambda: tb.get_json("/data/plugin/projector/info", run="main"))
    (embedding,) = config["embeddings"]
    assert embedding["tensorName"] == "points:00000"
    raw = tb.get("/data/plugin/projector/tensor", run="main", name="points:00000")
    np.testing.assert_array_equal(np.frombuffer(raw, dtype=np.float32).reshape(6, 4), MAT)
    metadata = tb.get("/data/plugin/projector/metadata", run="main", name="points:00000")
    assert metadata.decode().splitlines() == [f"p{i}" for i in range(6)]
