"""The HParams plugin's three summaries, as ``torch.utils.tensorboard``'s ``add_hparams`` writes.

``add_hparams`` writes three events, each a ``Summary`` with one value that has a tag, plugin
``hparams`` metadata and no data: ``_hparams_/experiment`` (an ``Experiment`` naming every
hyperparameter with its type and every metric tag), ``_hparams_/session_start_info`` (the values)
and ``_hparams_/session_end_info`` (status SUCCESS). The metrics themselves are ordinary scalars
in the same run, which the HParams dashboard links to the session (the run) by tag.

Value types follow torch, whose writer the frameworks (Lightning, accelerate, SB3) use:
``bool`` and ``numpy.bool_`` are the numbers 0/1 (torch tests ``int`` first; tensorboardX would
record booleans); ``int``, ``float``, NumPy integers and floats, and size-1 numeric arrays or
tensors are numbers; ``str`` is text; ``None`` is skipped, as torch does. Anything else raises
``TypeError`` naming the key.

Format notes: docs/FORMAT.md §4.6.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
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
    "HParamValue",
    "hparams_summaries",
    "metric_values",
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


def _summary(tag: str, content: Any) -> bytes:
    from .. import proto

    summary = proto.Summary()
    entry = summary.value.add(tag=tag)
    entry.metadata.plugin_data.plugin_name = PLUGIN_HPARAMS
    entry.metadata.plugin_data.content = content.SerializeToString()
    return bytes(summary.SerializeToString())


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
