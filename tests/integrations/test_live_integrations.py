"""The HParams dashboard of a real TensorBoard (127.0.0.1, both loaders) on logdirs written by
``npsummary.hparams`` and by ``npsummary.integrations.optuna``: the experiment (declared with
``hparams_config``, or inferred from Optuna's sessions) and every session group with its
hyperparameters and metric values, as logged."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import npsummary
from integrations.golden_tf import programs
from npsummary import hparams as hp
from tbserver import LOADERS, TensorBoard, tensorboard

pytestmark = [pytest.mark.live, pytest.mark.tf_free]

ALL_STATUSES = ["STATUS_SUCCESS", "STATUS_UNKNOWN", "STATUS_RUNNING", "STATUS_FAILURE"]


def _post_json(tb: TensorBoard, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        tb.url(path), data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _experiment(tb: TensorBoard) -> Any:
    return tb.wait_for(
        lambda: (
            (e := _post_json(tb, "/data/plugin/hparams/experiment", {"experimentName": ""})).get(
                "hparamInfos"
            )
            and e
        )
    )


def _groups(tb: TensorBoard, count: int, metrics: int) -> list[Any]:
    body = {
        "experimentName": "",
        "allowedStatuses": ALL_STATUSES,
        "colParams": [],
        "startIndex": 0,
        "sliceSize": 100,
    }

    def complete() -> Any:
        groups = _post_json(tb, "/data/plugin/hparams/session_groups", body).get("sessionGroups")
        if (
            groups
            and len(groups) == count
            and all(len(g.get("metricValues", [])) == metrics for g in groups)
        ):
            return groups
        return None

    groups: list[Any] = tb.wait_for(complete)
    return groups


@pytest.fixture(scope="module")
def hparams_logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_hparams")
    programs.hparams_api(hp, npsummary, str(root))
    return str(root)


@pytest.fixture(scope="module", params=LOADERS)
def hparams_tb(request: pytest.FixtureRequest, hparams_logdir: str) -> Iterator[TensorBoard]:
    with tensorboard(hparams_logdir, request.param) as server:
        yield server


def test_hparams_api_experiment_and_sessions(hparams_tb: TensorBoard) -> None:
    experiment = _experiment(hparams_tb)
    assert experiment["timeCreatedSecs"] == 1_700_000_000.25
    infos = {h["name"]: h for h in experiment["hparamInfos"]}
    assert sorted(infos) == ["batch_norm", "dropout", "empty", "lr", "optimizer", "seed", "units"]
    assert infos["lr"]["displayName"] == "learning rate"
    assert infos["lr"]["domainInterval"] == {"minValue": 0.001, "maxValue": 0.1}
    assert infos["units"]["domainInterval"] == {"minValue": 2.0, "maxValue": 8.0}
    assert infos["optimizer"]["domainDiscrete"] == ["adam", "sgd"]
    assert infos["batch_norm"]["domainDiscrete"] == [False, True]
    assert infos["dropout"]["description"] == "*rate*"
    metrics = {(m["name"]["group"], m["name"]["tag"]): m for m in experiment["metricInfos"]}
    assert sorted(metrics) == [("", "score"), ("train", "acc"), ("validation", "loss")]
    assert metrics[("validation", "loss")]["datasetType"] == "DATASET_VALIDATION"
    seen = {}
    for group in _groups(hparams_tb, count=3, metrics=2):
        (session,) = group["sessions"]
        values = {(m["name"]["group"], m["name"]["tag"]): m["value"] for m in group["metricValues"]}
        seen[session["name"]] = (group["name"], group["hparams"], values, session["startTimeSecs"])
    assert seen["trial-0"][0] == "t0"
    assert seen["trial-0"][1] == {
        "lr": 0.01,
        "units": 4.0,
        "optimizer": "sgd",
        "batch_norm": True,
        "dropout": 0.1,
        "seed": 7.0,
    }
    assert seen["trial-2"][1] == {"lr": 0.1, "units": 2.0}
    for i in range(3):
        assert seen[f"trial-{i}"][2] == {
            ("", "score"): 0.5 + i / 4,
            ("validation", "loss"): 1 - i / 8,
        }
        assert seen[f"trial-{i}"][3] == 1234.5 + i


@pytest.fixture(scope="module")
def optuna_logdir(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Any]]:
    optuna = pytest.importorskip("optuna", reason="Optuna runs in .ci/stages/70-integrations.sh")
    from npsummary.integrations.optuna import TensorBoardCallback

    root = tmp_path_factory.mktemp("live_optuna")
    values = programs.optuna_study(optuna, TensorBoardCallback, str(root))
    return str(root), values


@pytest.fixture(scope="module", params=LOADERS)
def optuna_tb(
    request: pytest.FixtureRequest, optuna_logdir: tuple[str, list[Any]]
) -> Iterator[TensorBoard]:
    with tensorboard(optuna_logdir[0], request.param) as server:
        yield server


def test_optuna_study_sessions(optuna_tb: TensorBoard, optuna_logdir: tuple[str, Any]) -> None:
    _, values = optuna_logdir
    experiment = _experiment(optuna_tb)
    assert sorted(h["name"] for h in experiment["hparamInfos"]) == [
        "layers",
        "lr",
        "momentum",
        "opt",
    ]
    assert [m["name"]["tag"] for m in experiment["metricInfos"]] == ["score"]
    seen = {}
    for group in _groups(optuna_tb, count=3, metrics=1):
        (metric,) = group["metricValues"]
        (session,) = group["sessions"]
        assert group["name"] == session["name"]  # trial_id = run name
        seen[session["name"]] = (group["hparams"], metric["value"], metric["trainingStep"])
    assert sorted(seen) == ["trial-0", "trial-1", "trial-2"]
    for i, params in enumerate(programs.OPTUNA_TRIALS):
        expected = {**params, "layers": float(params["layers"])}
        hparams, value, step = seen[f"trial-{i}"]
        assert hparams == pytest.approx(expected)
        assert value == pytest.approx(values[i], rel=1e-6)  # stored as float32
        assert step == i
