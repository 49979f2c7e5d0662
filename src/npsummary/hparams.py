"""TensorBoard's HParams API (``tensorboard.plugins.hparams.api``) without TensorFlow.

The same names and the same files as ``from tensorboard.plugins.hparams import api as hp``,
writing through npsummary's default writer::

    from npsummary import hparams as hp
    import npsummary

    HP_LR = hp.HParam("lr", hp.RealInterval(1e-4, 1e-1))
    with npsummary.create_file_writer("logs").as_default():
        hp.hparams_config(hparams=[HP_LR], metrics=[hp.Metric("loss", group="validation")])
    with npsummary.create_file_writer("logs/trial-0").as_default():
        hp.hparams({HP_LR: 0.01}, trial_id="trial-0")
        npsummary.scalar("loss", 0.25, step=1)

Semantics follow ``tensorboard/plugins/hparams/summary_v2.py`` (TensorBoard 2.21):

* :func:`hparams` writes one ``_hparams_/session_start_info`` summary at step 0: the values
  (``bool``, ``int``, ``float``, ``str`` or NumPy scalars; keys are names or :class:`HParam`),
  the group name (``trial_id``, else the SHA-256 of the values as sorted compact JSON) and the
  start time. :func:`hparams_config` writes one ``_hparams_/experiment`` summary declaring the
  hyperparameters, their domains and the metrics. Each returns whether it wrote (TensorFlow
  returns the same as a tensor).
* :func:`hparams_pb` and :func:`hparams_config_pb` return the ``Summary`` protos
  (``npsummary.proto`` classes, wire-compatible with TensorBoard's) without writing.
* Integer hyperparameters are stored as ``DATA_TYPE_FLOAT64``, as TensorBoard does.
* :class:`~npsummary.integrations.keras.KerasCallback` (Keras 3, imported when first used;
  also ``hp.KerasCallback``) writes the session start when
  training begins and a ``_hparams_/session_end_info`` (status SUCCESS) when it ends.
* No rank rule of its own: :func:`hparams` and :func:`hparams_config` write through the default
  writer the caller made (``npsummary.create_file_writer`` writes on rank 0 only unless told
  otherwise); ``KerasCallback`` given a logdir creates a writer on every process, as
  TensorBoard's does with ``tf.summary.create_file_writer``.
"""

from __future__ import annotations

import abc
import hashlib
import json
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from . import experimental

__all__ = [
    "Discrete",
    "Domain",
    "HParam",
    "IntInterval",
    "Metric",
    "RealInterval",
    "hparams",
    "hparams_config",
    "hparams_config_pb",
    "hparams_pb",
    "session_end_pb",
]

PLUGIN_NAME = "hparams"
EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"


# -- domains and declarations --------------------------------------------------------------------


class Domain(abc.ABC):
    """The set of values a hyperparameter can take."""

    @property
    @abc.abstractmethod
    def dtype(self) -> type:
        """The Python type of the domain's values (``int``, ``float``, ``bool`` or ``str``)."""

    @abc.abstractmethod
    def sample_uniform(self, rng: Any = random) -> Any:
        """A value drawn uniformly from the domain with ``rng`` (a ``random.Random``)."""

    @abc.abstractmethod
    def update_hparam_info(self, hparam_info: Any) -> None:
        """Set the ``type`` and domain fields of an ``HParamInfo`` proto."""


class _Interval(Domain):
    """A closed interval ``[min_value, max_value]`` of ``_type`` values (int or float)."""

    _type: type = float
    _type_name = "a float"

    def __init__(self, min_value: Any = None, max_value: Any = None) -> None:
        if not isinstance(min_value, self._type):
            raise TypeError(f"min_value must be {self._type_name}: {min_value!r}")
        if not isinstance(max_value, self._type):
            raise TypeError(f"max_value must be {self._type_name}: {max_value!r}")
        lower: Any = min_value  # int or float, as _type says
        if lower > max_value:
            raise ValueError(f"{min_value!r} > {max_value!r}")
        self._min_value = min_value
        self._max_value = max_value

    def __str__(self) -> str:
        return f"[{self._min_value}, {self._max_value}]"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._min_value!r}, {self._max_value!r})"

    @property
    def dtype(self) -> type:
        return self._type

    @property
    def min_value(self) -> Any:
        return self._min_value

    @property
    def max_value(self) -> Any:
        return self._max_value

    def update_hparam_info(self, hparam_info: Any) -> None:
        from . import proto

        hparam_info.type = proto.DATA_TYPE_FLOAT64  # TensorBoard has no integer type
        hparam_info.domain_interval.min_value = self._min_value
        hparam_info.domain_interval.max_value = self._max_value


class IntInterval(_Interval):
    """All integers in the closed interval ``[min_value, max_value]``."""

    _type = int
    _type_name = "an int"

    def sample_uniform(self, rng: Any = random) -> int:
        return int(rng.randint(self._min_value, self._max_value))


class RealInterval(_Interval):
    """All reals in the closed interval ``[min_value, max_value]``."""

    def sample_uniform(self, rng: Any = random) -> float:
        return float(rng.uniform(self._min_value, self._max_value))


class Discrete(Domain):
    """A finite set of values of one type (``int``, ``float``, ``bool`` or ``str``), kept
    sorted. ``dtype`` defaults to the type of the first value (required if there is none)."""

    def __init__(self, values: Iterable[Any], dtype: type | None = None) -> None:
        self._values = list(values)
        if dtype is None:
            if not self._values:
                raise ValueError("Empty domain with no dtype specified")
            dtype = type(self._values[0])
        if dtype not in (int, float, bool, str):
            raise ValueError(f"Unknown dtype: {dtype!r}")
        self._dtype: type = dtype
        for value in self._values:
            if not isinstance(value, dtype):
                raise TypeError(f"dtype mismatch: not isinstance({value!r}, {dtype.__name__})")
        self._values.sort()

    def __str__(self) -> str:
        return "{" + ", ".join(repr(x) for x in self._values) + "}"

    def __repr__(self) -> str:
        return f"Discrete({self._values!r})"

    @property
    def dtype(self) -> type:
        return self._dtype

    @property
    def values(self) -> list[Any]:
        return list(self._values)

    def sample_uniform(self, rng: Any = random) -> Any:
        return rng.choice(self._values)

    def update_hparam_info(self, hparam_info: Any) -> None:
        from . import proto

        hparam_info.type = {
            int: proto.DATA_TYPE_FLOAT64,
            float: proto.DATA_TYPE_FLOAT64,
            bool: proto.DATA_TYPE_BOOL,
            str: proto.DATA_TYPE_STRING,
        }[self._dtype]
        hparam_info.ClearField("domain_discrete")
        hparam_info.domain_discrete.extend(self._values)


class HParam:
    """A hyperparameter of an experiment: a name, an optional :class:`Domain`, and how
    TensorBoard shows it. Usable as a key of the dicts given to :func:`hparams`."""

    def __init__(
        self,
        name: str,
        domain: Domain | None = None,
        display_name: str | None = None,
        description: str | None = None,
    ) -> None:
        self._name = name
        self._domain = domain
        self._display_name = display_name
        self._description = description
        if not isinstance(domain, (Domain, type(None))):
            raise ValueError(f"not a domain: {domain!r}")

    def __str__(self) -> str:
        return f"<HParam {self._name!r}: {self._domain}>"

    def __repr__(self) -> str:
        fields = [
            ("name", self._name),
            ("domain", self._domain),
            ("display_name", self._display_name),
            ("description", self._description),
        ]
        shown = ", ".join(f"{key}={value!r}" for key, value in fields if value is not None)
        return f"HParam({shown})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def domain(self) -> Domain | None:
        return self._domain

    @property
    def display_name(self) -> str | None:
        return self._display_name

    @property
    def description(self) -> str | None:
        return self._description


class Metric:
    """A metric of an experiment: the scalar summary ``tag`` in the session's subdirectory
    ``group`` ("" for the session's own run)."""

    TRAINING = 1  # api.proto DATASET_TRAINING
    VALIDATION = 2  # api.proto DATASET_VALIDATION

    def __init__(
        self,
        tag: str,
        group: str | None = None,
        display_name: str | None = None,
        description: str | None = None,
        dataset_type: int | None = None,
    ) -> None:
        self._tag = tag
        self._group = group
        self._display_name = display_name
        self._description = description
        self._dataset_type = dataset_type
        if dataset_type not in (None, Metric.TRAINING, Metric.VALIDATION):
            raise ValueError(f"invalid dataset type: {dataset_type!r}")

    def as_proto(self) -> Any:
        """The ``MetricInfo`` proto."""
        from . import proto

        return proto.MetricInfo(
            name=proto.MetricName(group=self._group, tag=self._tag),
            display_name=self._display_name,
            description=self._description,
            dataset_type=self._dataset_type,
        )


# -- the summaries ---------------------------------------------------------------------------


def _summary_pb(tag: str, plugin_data: Any) -> Any:
    """A ``Summary`` with one value: ``tag``, hparams plugin metadata, TensorBoard's empty
    float tensor."""
    from . import proto

    summary = proto.Summary()
    value = summary.value.add(tag=tag)
    value.metadata.plugin_data.plugin_name = PLUGIN_NAME
    value.metadata.plugin_data.content = plugin_data.SerializeToString()
    value.tensor.dtype = proto.DT_FLOAT
    value.tensor.tensor_shape.dim.add(size=0)
    return summary


def _normalize_hparams(values: Mapping[Any, Any]) -> dict[str, Any]:
    if not isinstance(values, Mapping):
        raise TypeError(f"hparams must be a dict of name -> value, got {type(values).__name__}")
    result: dict[str, Any] = {}
    for key, value in values.items():
        name = key.name if isinstance(key, HParam) else key
        if name in result:
            raise ValueError(f"multiple values specified for hparam {name!r}")
        result[name] = value.item() if isinstance(value, np.generic) else value
    return result


def _group_name(trial_id: Any, values: dict[str, Any]) -> str:
    if trial_id is not None:
        if not isinstance(trial_id, str):
            raise TypeError(f"`trial_id` should be a `str`, but got: {trial_id!r}")
        return trial_id
    try:
        encoded = json.dumps(values, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as exc:  # a key that is no str, or a value JSON cannot hold
        raise TypeError(f"hparams: cannot derive a trial id from {values!r}: {exc}") from exc
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def hparams_pb(
    hparams: Mapping[Any, Any], trial_id: str | None = None, start_time_secs: float | None = None
) -> Any:
    """The ``Summary`` proto that :func:`hparams` writes (see there)."""
    from . import proto

    if start_time_secs is None:
        start_time_secs = time.time()
    values = _normalize_hparams(hparams)
    start = proto.SessionStartInfo(
        group_name=_group_name(trial_id, values), start_time_secs=start_time_secs
    )
    for name in sorted(values):
        value = values[name]
        if not isinstance(name, str):
            raise TypeError(f"hparams: names must be str, got {name!r}")
        if isinstance(value, bool):
            start.hparams[name].bool_value = value
        elif isinstance(value, (float, int)):
            start.hparams[name].number_value = value
        elif isinstance(value, str):
            start.hparams[name].string_value = value
        else:
            raise TypeError(f"hparams[{name!r}] = {value!r}, of unsupported type {type(value)!r}")
    return _summary_pb(SESSION_START_INFO_TAG, proto.HParamsPluginData(session_start_info=start))


def hparams(
    hparams: Mapping[Any, Any], trial_id: str | None = None, start_time_secs: float | None = None
) -> bool:
    """Write the hyperparameter values of one trial (session) at step 0.

    Args:
      hparams: name (or :class:`HParam`) -> value: ``bool``, ``int``, ``float``, ``str`` or a
        NumPy scalar of those.
      trial_id: the session group name; default: a hash of the values, so trials with equal
        values are grouped.
      start_time_secs: the session's start, in seconds since the epoch; default: now.

    Returns:
      Whether it was written (False without a default writer or when recording is off).

    Raises:
      TypeError: a value of another type, or a ``trial_id`` that is no str.
      ValueError: two keys with the same name.
    """
    pb = hparams_pb(hparams, trial_id=trial_id, start_time_secs=start_time_secs)
    return experimental.write_raw_pb(pb.SerializeToString(), step=0)


def hparams_config_pb(
    hparams: Iterable[HParam], metrics: Iterable[Metric], time_created_secs: float | None = None
) -> Any:
    """The ``Summary`` proto that :func:`hparams_config` writes (see there)."""
    from . import proto

    infos = []
    for hparam in hparams:
        if not isinstance(hparam, HParam):
            raise TypeError(f"hparams_config: hparams must be HParam objects, got {hparam!r}")
        info = proto.HParamInfo(
            name=hparam.name, description=hparam.description, display_name=hparam.display_name
        )
        if hparam.domain is not None:
            hparam.domain.update_hparam_info(info)
        infos.append(info)
    metric_infos = []
    for metric in metrics:
        if not isinstance(metric, Metric):
            raise TypeError(f"hparams_config: metrics must be Metric objects, got {metric!r}")
        metric_infos.append(metric.as_proto())
    experiment = proto.Experiment(
        hparam_infos=infos, metric_infos=metric_infos, time_created_secs=time_created_secs
    )
    return _summary_pb(EXPERIMENT_TAG, proto.HParamsPluginData(experiment=experiment))


def hparams_config(
    hparams: Iterable[HParam], metrics: Iterable[Metric], time_created_secs: float | None = None
) -> bool:
    """Write the experiment's configuration (usually into the top-level logdir): the
    hyperparameters with their domains and the metrics TensorBoard shows for every session.

    Returns:
      Whether it was written (False without a default writer or when recording is off).
    """
    pb = hparams_config_pb(hparams, metrics, time_created_secs=time_created_secs)
    return experimental.write_raw_pb(pb.SerializeToString(), step=0)


def session_end_pb(status: int | None = None, end_time_secs: float | None = None) -> Any:
    """The ``_hparams_/session_end_info`` ``Summary`` proto (default status SUCCESS, end time
    now), as ``tensorboard.plugins.hparams.summary.session_end_pb`` builds it."""
    from . import proto

    info = proto.SessionEndInfo(
        status=proto.STATUS_SUCCESS if status is None else status,
        end_time_secs=time.time() if end_time_secs is None else end_time_secs,
    )
    return _summary_pb(SESSION_END_INFO_TAG, proto.HParamsPluginData(session_end_info=info))


_KERAS_CALLBACK: Any = None


def _keras_callback_class() -> Any:
    """``KerasCallback``, defined on first use: it subclasses Keras's Callback, so Keras is
    imported only by a user who asks for it."""
    global _KERAS_CALLBACK
    if _KERAS_CALLBACK is not None:
        return _KERAS_CALLBACK
    import os

    import keras  # type: ignore[import-not-found, unused-ignore]

    from ._frontends.tf2.writer import create_file_writer
    from .experimental import write_raw_pb

    class KerasCallback(keras.callbacks.Callback):  # type: ignore[misc, unused-ignore]
        """The HParams API's Keras callback (``hp.KerasCallback``): writes the session's
        hyperparameters when training begins and its end (status SUCCESS) when it ends.

        Args:
          writer: a writer from :func:`npsummary.create_file_writer`, or a logdir to create one.
          hparams: name (or :class:`npsummary.hparams.HParam`) -> value, as for
            :func:`npsummary.hparams.hparams`.
          trial_id: the session group name; default: a hash of the values.

        Like TensorBoard's, one callback serves one ``fit`` call.
        """

        def __init__(self, writer: Any, hparams: Mapping[Any, Any], trial_id: str | None = None):
            super().__init__()
            self._hparams = dict(hparams)
            self._trial_id = trial_id
            hparams_pb(self._hparams, trial_id=trial_id)  # fail now on bad values
            if writer is None:
                raise TypeError("writer must be a `SummaryWriter` or `str`, not None")
            if isinstance(writer, (str, os.PathLike)):
                # Every process, as TensorBoard's callback (no rank rule; module docstring).
                writer = create_file_writer(writer, rank=0)
            self._writer: Any = writer

        def _get_writer(self) -> Any:
            if self._writer is None:
                raise RuntimeError(
                    "hparams Keras callback cannot be reused across training sessions"
                )
            return self._writer

        def on_train_begin(self, logs: Any = None) -> None:
            with self._get_writer().as_default():
                hparams(self._hparams, trial_id=self._trial_id)

        def on_train_end(self, logs: Any = None) -> None:
            with self._get_writer().as_default():
                pb = session_end_pb()
                write_raw_pb(pb.SerializeToString(), step=0)
            self._writer = None

    _KERAS_CALLBACK = KerasCallback
    return KerasCallback


def __getattr__(name: str) -> Any:
    # Not in __all__: it imports Keras, so `import *` must not reach it.
    if name == "KerasCallback":
        return _keras_callback_class()
    raise AttributeError(f"module 'npsummary.hparams' has no attribute {name!r}")
