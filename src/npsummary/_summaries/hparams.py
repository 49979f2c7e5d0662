"""The HParams plugin's summaries, in the two forms npsummary writes.

Each summary is a ``Summary`` with one value that has a tag, plugin ``hparams`` metadata and no
data: ``_hparams_/experiment`` (an ``Experiment`` naming every hyperparameter with its type and
every metric tag), ``_hparams_/session_start_info`` (the values) and
``_hparams_/session_end_info`` (the status). The metrics themselves are ordinary scalars in the
same run, which the HParams dashboard links to the session (the run) by tag.

* ``torch.utils.tensorboard``'s and tensorboardX's ``add_hparams`` (:func:`hparams_summaries`)
  write all three at once. Value types follow torch, whose writer the frameworks (Lightning,
  accelerate, SB3) use: ``bool`` and ``numpy.bool_`` are the numbers 0/1 (torch tests ``int``
  first; tensorboardX would record booleans); ``int``, ``float``, NumPy integers and floats, and
  size-1 numeric arrays or tensors are numbers; ``str`` is text; ``None`` is skipped, as torch
  does. Anything else raises ``TypeError`` naming the key.
* TensorBoard's HParams API (``tensorboard.plugins.hparams.summary_v2``, the builders behind
  :mod:`npsummary.hparams`): the domains, :class:`HParam` and :class:`Metric` declarations and
  :func:`hparams_pb`, :func:`hparams_config_pb`, :func:`session_end_pb`, whose values also hold
  TensorBoard's empty float tensor.

Format notes: docs/FORMAT.md §4.6.
"""

from __future__ import annotations

import abc
import hashlib
import json
import numbers
import random
import time
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from .._common.compat_errors import HparamValueTypeError
from .._common.convert import (
    as_native_array,
    check_tag,
    is_numeric,
    scalar_dict,
    to_float,
)
from .metadata import PLUGIN_HPARAMS

__all__ = [
    "EXPERIMENT_TAG",
    "SESSION_END_INFO_TAG",
    "SESSION_START_INFO_TAG",
    "Discrete",
    "Domain",
    "HParam",
    "HParamValue",
    "IntInterval",
    "Metric",
    "RealInterval",
    "hparams_config_pb",
    "hparams_pb",
    "hparams_summaries",
    "metric_values",
    "session_end_pb",
]

EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"

#: A checked hyperparameter value: bool, float or str.
HParamValue = bool | float | str


def _hparam_value(key: str, value: Any, where: str = "hparam_dict") -> HParamValue | None:
    """Classify one value; ``None`` means skip it (as torch does)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return float(value)  # torch: a bool is an int, so a number
    if isinstance(value, str):
        return check_tag(value, f"{where}[{key!r}]")
    if isinstance(value, (np.timedelta64, np.datetime64)):
        pass  # a duration or a date is no hyperparameter value: refused below
    elif isinstance(value, (numbers.Real, np.integer, np.floating)):
        return to_float(value, key, f"{where} value")  # beyond float64: saturated, as scalars
    elif hasattr(value, "__array__") and not isinstance(value, (bytes, dict)):
        array = as_native_array(value, key, f"{where} value")
        if array.size == 1 and is_numeric(array.dtype):
            return to_float(array, key, f"{where} value")
    raise HparamValueTypeError(
        f"{where}[{key!r}]: value must be a bool, int, float, str or NumPy scalar, "
        f"got {type(value).__name__}"
    )


def _domain(key: str, value: HParamValue, domain: Any) -> list[HParamValue]:
    if not isinstance(domain, (list, tuple)):
        raise TypeError(
            f"hparam_domain_discrete[{key!r}] must be a list of the values {key!r} can take, "
            f"got {type(domain).__name__}"
        )
    out = [_hparam_value(key, item, "hparam_domain_discrete") for item in domain]
    if any(type(item) is not type(value) for item in out):
        raise TypeError(
            f"hparam_domain_discrete[{key!r}] must hold values of the same type as "
            f"hparam_dict[{key!r}] ({type(value).__name__}), got {domain!r}"
        )
    return [item for item in out if item is not None]


def _set_value(target: Any, value: HParamValue) -> None:
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, str):
        target.string_value = value
    else:
        target.number_value = value


def _summary_pb(tag: str, plugin_data: Any, *, empty_tensor: bool) -> Any:
    """A ``Summary`` with one value: ``tag`` and hparams plugin metadata holding
    ``plugin_data``; ``empty_tensor`` adds the empty float tensor TensorBoard's API writes."""
    from .. import proto

    summary = proto.Summary()
    value = summary.value.add(tag=tag)
    value.metadata.plugin_data.plugin_name = PLUGIN_HPARAMS
    value.metadata.plugin_data.content = plugin_data.SerializeToString()
    if empty_tensor:
        value.tensor.dtype = proto.DT_FLOAT
        value.tensor.tensor_shape.dim.add(size=0)
    return summary


def _summary(tag: str, plugin_data: Any) -> bytes:
    """The serialized ``Summary`` of ``add_hparams`` (no tensor, as torch writes it)."""
    return bytes(_summary_pb(tag, plugin_data, empty_tensor=False).SerializeToString())


# -- add_hparams (torch, tensorboardX) ------------------------------------------------------------


def metric_values(metric_dict: Any) -> list[tuple[str, float]]:
    """Check ``metric_dict`` (tag -> real number) and return its items in order, each value
    saturated to float32's range as ``add_scalar`` stores it."""
    return scalar_dict(metric_dict, "metric_dict")


def hparams_summaries(
    hparam_dict: Any,
    metric_tags: list[str],
    hparam_domain_discrete: Any = None,
    *,
    tensorboardx_values: bool = False,
) -> tuple[bytes, bytes, bytes]:
    """Serialized ``Summary`` protos: (experiment, session start, session end).

    Booleans are the numbers 0/1, and a value of another type than bool, number, str or None is
    refused, as torch does. ``tensorboardx_values=True`` follows tensorboardX instead: booleans
    are booleans (``DATA_TYPE_BOOL``), a callable is its ``__name__``, and a value of any other
    type (a list, a dict, ...) gets an entry of unset type and no value.

    Raises:
      TypeError: ``hparam_dict`` is not a dict, a key is not a str, a value has an unsupported
        type, or a discrete domain is not a list of values of the hyperparameter's type.
      ValueError: ``hparam_domain_discrete`` names a key missing from ``hparam_dict``.
    """
    from .. import proto

    if not isinstance(hparam_dict, Mapping):
        raise TypeError(
            f"add_hparams: hparam_dict must be a dict of name -> value, "
            f"got {type(hparam_dict).__name__}"
        )
    domains = {} if hparam_domain_discrete is None else hparam_domain_discrete
    if not isinstance(domains, Mapping):
        raise TypeError(
            "add_hparams: hparam_domain_discrete must be a dict of name -> list of values, "
            f"got {type(domains).__name__}"
        )
    for key in domains:
        if key not in hparam_dict:
            raise ValueError(
                f"hparam_domain_discrete[{key!r}]: {key!r} is not a key of hparam_dict"
            )
    start = proto.SessionStartInfo()
    experiment = proto.Experiment()
    for key, raw in hparam_dict.items():
        name = check_tag(key, "add_hparams: hparam_dict key")
        try:
            value = _hparam_value(name, raw)
        except HparamValueTypeError:
            if not tensorboardx_values:
                raise
            if not callable(raw):
                experiment.hparam_infos.add(name=name, type=proto.DATA_TYPE_UNSET)
                continue
            value = check_tag(getattr(raw, "__name__", str(raw)), f"hparam_dict[{name!r}]")
        if value is None:
            continue
        if tensorboardx_values and isinstance(raw, (bool, np.bool_)):
            value = bool(raw)
        _set_value(start.hparams[name], value)
        info = experiment.hparam_infos.add(name=name)
        if isinstance(value, bool):
            info.type = proto.DATA_TYPE_BOOL
        elif isinstance(value, str):
            info.type = proto.DATA_TYPE_STRING
        else:
            info.type = proto.DATA_TYPE_FLOAT64
        if key in domains:
            listing = info.domain_discrete
            listing.SetInParent()
            as_bool = isinstance(
                value, bool
            )  # tensorboardx_values: the domain's 0/1 become booleans
            for item in _domain(name, float(value) if as_bool else value, domains[key]):
                _set_value(listing.values.add(), bool(item) if as_bool else item)
    for tag in metric_tags:
        experiment.metric_infos.add().name.tag = tag
    end = proto.SessionEndInfo(status=proto.STATUS_SUCCESS)
    return (
        _summary(EXPERIMENT_TAG, proto.HParamsPluginData(experiment=experiment)),
        _summary(SESSION_START_INFO_TAG, proto.HParamsPluginData(session_start_info=start)),
        _summary(SESSION_END_INFO_TAG, proto.HParamsPluginData(session_end_info=end)),
    )


# -- TensorBoard's HParams API: domains and declarations ------------------------------------------


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
        from .. import proto

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
        from .. import proto

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
        from .. import proto

        return proto.MetricInfo(
            name=proto.MetricName(group=self._group, tag=self._tag),
            display_name=self._display_name,
            description=self._description,
            dataset_type=self._dataset_type,
        )


# -- TensorBoard's HParams API: the summaries -----------------------------------------------------


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
    from .. import proto

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
    return _summary_pb(
        SESSION_START_INFO_TAG, proto.HParamsPluginData(session_start_info=start), empty_tensor=True
    )


def hparams_config_pb(
    hparams: Iterable[HParam], metrics: Iterable[Metric], time_created_secs: float | None = None
) -> Any:
    """The ``Summary`` proto that :func:`hparams_config` writes (see there)."""
    from .. import proto

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
    return _summary_pb(
        EXPERIMENT_TAG, proto.HParamsPluginData(experiment=experiment), empty_tensor=True
    )


def session_end_pb(status: int | None = None, end_time_secs: float | None = None) -> Any:
    """The ``_hparams_/session_end_info`` ``Summary`` proto (default status SUCCESS, end time
    now), as ``tensorboard.plugins.hparams.summary.session_end_pb`` builds it."""
    from .. import proto

    info = proto.SessionEndInfo(
        status=proto.STATUS_SUCCESS if status is None else status,
        end_time_secs=time.time() if end_time_secs is None else end_time_secs,
    )
    return _summary_pb(
        SESSION_END_INFO_TAG, proto.HParamsPluginData(session_end_info=info), empty_tensor=True
    )
