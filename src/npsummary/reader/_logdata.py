"""A logdir read into series: :class:`Logdata` and the shaping of raw run data into it."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import proto
from ._framing import ReadStats
from ._load import RunData
from ._series import (
    AudioSeries,
    HistogramSeries,
    HParams,
    ImageSeries,
    PrCurveSeries,
    ScalarSeries,
    TensorSeries,
    TextSeries,
    last_write_wins_index,
)

__all__ = ["Logdata", "build"]

Key = tuple[str, str]
_STATUS = {
    proto.STATUS_UNKNOWN: "STATUS_UNKNOWN",
    proto.STATUS_SUCCESS: "STATUS_SUCCESS",
    proto.STATUS_FAILURE: "STATUS_FAILURE",
    proto.STATUS_RUNNING: "STATUS_RUNNING",
}


@dataclass
class Logdata:
    """Everything read from a logdir, keyed by ``(run, tag)`` (``hparams`` by run).

    Attributes:
        runs: run names, sorted (``"."`` is the logdir itself).
        stats: what the read met (files, records, corrupt and torn records).
    """

    runs: list[str] = field(default_factory=list)
    scalars: dict[Key, ScalarSeries] = field(default_factory=dict)
    histograms: dict[Key, HistogramSeries] = field(default_factory=dict)
    images: dict[Key, ImageSeries] = field(default_factory=dict)
    audio: dict[Key, AudioSeries] = field(default_factory=dict)
    text: dict[Key, TextSeries] = field(default_factory=dict)
    pr_curves: dict[Key, PrCurveSeries] = field(default_factory=dict)
    tensors: dict[Key, TensorSeries] = field(default_factory=dict)
    hparams: dict[str, HParams] = field(default_factory=dict)
    stats: ReadStats = field(default_factory=ReadStats)


def _columns(items: list[tuple[int, int, float, Any]]) -> tuple[np.ndarray, np.ndarray, list[Any]]:
    items.sort(key=lambda item: item[0])
    steps = np.array([item[1] for item in items], np.int64)
    walls = np.array([item[2] for item in items], np.float64)
    return steps, walls, [item[3] for item in items]


def _series(kind: str, run: RunData, tag: str, items: list[Any]) -> Any:
    steps, walls, values = _columns(items)
    if kind == "histograms":
        return HistogramSeries(steps, walls, values)
    if kind == "images":
        return ImageSeries(
            steps,
            walls,
            np.array([v[0] for v in values], np.int64),
            np.array([v[1] for v in values], np.int64),
            [v[2] for v in values],
        )
    if kind == "audio":
        clips = [v[1] for v in values]
        rates = np.array([v[0] for v in values], np.float64)
        return AudioSeries(steps, walls, rates, clips, [v[2] for v in values])
    if kind == "text":
        return TextSeries(steps, walls, values)
    if kind == "pr_curves":
        return PrCurveSeries(steps, walls, values)
    name, content = run.plugins.get(tag, ("", b""))
    return TensorSeries(steps, walls, name, content, values)


def _value(v: Any) -> bool | float | str:
    which = v.WhichOneof("kind")
    if which == "bool_value":
        return bool(v.bool_value)
    if which == "number_value":
        return float(v.number_value)
    if which == "string_value":
        return str(v.string_value)
    return str(v)


def _hparams(runs: list[RunData], scalars: dict[Key, ScalarSeries]) -> dict[str, HParams]:
    metric_tags: list[tuple[str, str]] = []
    sessions: dict[str, dict[str, Any]] = {}
    for run in runs:
        for (kind, _tag), items in run.items.items():
            if kind != "hparams":
                continue
            for _, _, _, data in sorted(items, key=lambda item: item[0]):
                which = data.WhichOneof("data")
                if which == "experiment":
                    for info in data.experiment.metric_infos:
                        pair = (info.name.group, info.name.tag)
                        if pair not in metric_tags:
                            metric_tags.append(pair)
                elif which == "session_start_info":
                    s = data.session_start_info
                    sessions.setdefault(run.name, {}).update(
                        hparams={k: _value(v) for k, v in sorted(s.hparams.items())},
                        group_name=s.group_name,
                        start_time_secs=s.start_time_secs,
                    )
                elif which == "session_end_info":
                    e = data.session_end_info
                    sessions.setdefault(run.name, {}).update(
                        status=_STATUS.get(e.status, str(e.status)),
                        end_time_secs=e.end_time_secs,
                    )
    out: dict[str, HParams] = {}
    for name, info in sorted(sessions.items()):
        metrics: dict[str, float] = {}
        for group, tag in metric_tags:
            where = name if not group else (group if name == "." else f"{name}/{group}")
            series = scalars.get((where, tag))
            if series is not None and len(series):
                metrics[f"{group}/{tag}" if group else tag] = float(
                    series.values[last_write_wins_index(series.steps)[-1]]
                )
        out[name] = HParams(
            hparams=info.get("hparams", {}),
            metrics=metrics,
            group_name=info.get("group_name", ""),
            start_time_secs=info.get("start_time_secs", math.nan),
            status=info.get("status", ""),
            end_time_secs=info.get("end_time_secs", math.nan),
        )
    return out


def build(runs: Iterable[RunData], stats: ReadStats) -> Logdata:
    """Shape raw run data into a :class:`Logdata` (images and audio decoded while reading)."""
    runs = list(runs)
    data = Logdata(runs=[run.name for run in runs], stats=stats)
    for run in runs:
        for tag in sorted(run.scalars):
            steps, walls, values = run.scalar_arrays(tag)
            data.scalars[(run.name, tag)] = ScalarSeries(steps, walls, values)
        for kind, tag in sorted(run.items):
            if kind == "hparams":
                continue
            series = _series(kind, run, tag, run.items[(kind, tag)])
            getattr(data, kind)[(run.name, tag)] = series
    data.hparams = _hparams(runs, data.scalars)
    return data
