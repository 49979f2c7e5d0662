"""``npsummary.integrations.optuna.TensorBoardCallback`` against optuna-integration's (golden
files written by optuna-integration 5.0 through TensorFlow 2.21). Needs Optuna (runs in
.ci/stages/70-integrations.sh)."""

from __future__ import annotations

from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna", reason="Optuna runs in .ci/stages/70-integrations.sh")

from integrations._golden import assert_same_logdir, golden, observations, read_runs  # noqa: E402
from integrations.golden_tf import programs  # noqa: E402
from npsummary.integrations.optuna import TensorBoardCallback  # noqa: E402

pytestmark = pytest.mark.tf_free


def test_same_files_as_optuna_integration(tmp_path: Path) -> None:
    values = programs.optuna_study(optuna, TensorBoardCallback, str(tmp_path))
    assert values == observations("optuna")
    assert_same_logdir(tmp_path, golden("optuna"))


def test_mixed_and_unsupported_choices_become_strings(tmp_path: Path) -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(trial: object) -> float:
        trial.suggest_categorical("mixed", [1, "two"])  # type: ignore[attr-defined]
        trial.suggest_categorical("none", [None, None])  # type: ignore[attr-defined]
        return 1.0

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(objective, n_trials=1, callbacks=[TensorBoardCallback(tmp_path, "v")])
    from npsummary import proto

    groups = read_runs(tmp_path)["trial-0"]
    (start,) = groups[("_hparams_/session_start_info", 0)]
    info = proto.HParamsPluginData.FromString(start.metadata.plugin_data.content)
    values = info.session_start_info.hparams
    assert values["none"].string_value == "None"
    assert values["mixed"].WhichOneof("kind") == "string_value"


def test_unsupported_distribution_raises(tmp_path: Path) -> None:
    callback = TensorBoardCallback(tmp_path, "v")
    with pytest.raises(NotImplementedError, match="not implemented"):
        callback._add_distributions({"x": object()})
