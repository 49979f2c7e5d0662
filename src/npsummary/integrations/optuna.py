"""optuna-integration's ``TensorBoardCallback`` without TensorFlow.

Change one line::

    # from optuna_integration import TensorBoardCallback
    from npsummary.integrations.optuna import TensorBoardCallback

    study.optimize(objective, n_trials=20, callbacks=[TensorBoardCallback("logs", "accuracy")])

Each completed trial ``n`` becomes the run ``<dirname>/trial-<n>`` holding its hyperparameters
(:func:`npsummary.hparams.hparams` with ``trial_id="trial-<n>"``; each parameter declared with
the domain of its Optuna distribution) and the trial's value as the scalar ``metric_name`` at
step ``n`` — the files optuna-integration writes through TensorFlow. Needs Optuna.

Differences: no deprecation warning (optuna-integration 4.9 deprecated its callback; this one
is not going away), and the event file of each trial is closed once written.

Every process writes, as optuna-integration does through TensorFlow: no rank rule (``RANK``,
``SLURM_PROCID``, ... are not read). The workers of a distributed study (``srun -n 4`` on one
storage) run distinct trials, each its own ``trial-<n>`` run, and every one reaches the HParams
dashboard. ``dirname`` may be a path or any URL npsummary writes (``file://``, ``memory://``,
``s3://``, ...); nothing is created outside it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import optuna  # type: ignore[import-not-found, unused-ignore]

import npsummary
from npsummary import hparams as hp

from ._private import every_process_writer, run_path

__all__ = ["TensorBoardCallback"]

_logger = logging.getLogger(__name__)


class TensorBoardCallback:
    """Log every completed Optuna trial for TensorBoard's HParams dashboard.

    Args:
      dirname: the logdir; trial ``n`` is written to ``dirname/trial-n``.
      metric_name: the tag of the trial's value (e.g. ``"accuracy"``).
    """

    def __init__(self, dirname: str | os.PathLike[str], metric_name: str) -> None:
        self._dirname = os.fspath(dirname)
        self._metric_name = metric_name
        self._hp_params: dict[str, hp.HParam] = {}

    def __call__(self, study: Any, trial: Any) -> None:
        if len(self._hp_params) == 0:
            self._initialization(study)
        if trial.state != optuna.trial.TrialState.COMPLETE:
            return
        trial_value = trial.value if trial.value is not None else float("nan")
        hparams: dict[Any, Any] = {}
        for param_name, param_value in trial.params.items():
            if param_name not in self._hp_params:
                self._add_distributions(trial.distributions)
            param = self._hp_params[param_name]
            if isinstance(param.domain, hp.Discrete):
                hparams[param] = param.domain.dtype(param_value)
            else:
                hparams[param] = param_value
        run_name = f"trial-{trial.number}"
        writer = every_process_writer(run_path(self._dirname, run_name))
        try:
            with writer.as_default():
                hp.hparams(hparams, trial_id=run_name)
                npsummary.scalar(self._metric_name, trial_value, step=trial.number)
        finally:
            writer.close()

    def _add_distributions(self, distributions: dict[str, Any]) -> None:
        dist = optuna.distributions
        for param_name, distribution in distributions.items():
            if isinstance(distribution, dist.FloatDistribution):
                domain: hp.Domain = hp.RealInterval(
                    float(distribution.low), float(distribution.high)
                )
            elif isinstance(distribution, dist.IntDistribution):
                domain = hp.IntInterval(distribution.low, distribution.high)
            elif isinstance(distribution, dist.CategoricalDistribution):
                choices = distribution.choices
                kind = type(choices[0])
                if any(not isinstance(choice, kind) for choice in choices):
                    _logger.warning(
                        "Choices contains mixed types, which is not supported by TensorBoard. "
                        "Converting all choices to strings."
                    )
                    choices = tuple(map(str, choices))
                elif kind not in (int, float, bool, str):
                    _logger.warning(
                        f"Choices are of type {kind}, which is not supported by TensorBoard. "
                        "Converting all choices to strings."
                    )
                    choices = tuple(map(str, choices))
                domain = hp.Discrete(choices)
            else:
                supported = ["CategoricalDistribution", "FloatDistribution", "IntDistribution"]
                raise NotImplementedError(
                    f"The distribution {distribution} is not implemented. "
                    f"The parameter distribution should be one of the {supported}"
                )
            self._hp_params[param_name] = hp.HParam(param_name, domain)

    def _initialization(self, study: Any) -> None:
        completed = [
            trial
            for trial in study.get_trials(deepcopy=False)
            if trial.state == optuna.trial.TrialState.COMPLETE
        ]
        for trial in completed:
            self._add_distributions(trial.distributions)
