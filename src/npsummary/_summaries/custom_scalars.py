"""The custom scalars plugin's layout, as tensorboardX and torch write it.

One value tagged ``custom_scalars__config__`` with plugin ``custom_scalars`` metadata (no
content) and a DT_STRING rank-0 tensor holding a serialized ``Layout``: categories, each with
charts that are either multiline (a list of tag regexes) or margin (value, lower, upper tags).

The layout argument is tensorboardX's and torch's dict: ``{category: {chart title: [kind,
tags]}}`` where kind is ``'Multiline'`` or ``'Margin'`` (exactly three tags). Like tensorboardX
and torch, any kind other than ``'Margin'`` is a multiline chart.

Format notes: docs/FORMAT.md §4.8.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._common.compat_errors import MarginChartError
from .._common.convert import check_tag
from .metadata import PLUGIN_CUSTOM_SCALARS

__all__ = ["CONFIG_TAG", "layout_value"]

CONFIG_TAG = "custom_scalars__config__"


def _tags(where: str, tags: Any) -> list[str]:
    if isinstance(tags, (str, bytes)) or not isinstance(tags, Sequence):
        raise TypeError(f"{where}: tags must be a list of str, got {type(tags).__name__}")
    return [check_tag(tag, f"{where}: tags[{i}]") for i, tag in enumerate(tags)]


def _chart(layout: Any, category: str, title: str, spec: Any) -> None:
    where = f"custom scalars layout: chart {category!r}/{title!r}"
    if isinstance(spec, (str, bytes)) or not isinstance(spec, Sequence) or len(spec) != 2:
        raise TypeError(f"{where}: expected [kind, tags] with kind 'Multiline' or 'Margin'")
    kind, tags = spec
    names = _tags(where, tags)
    chart = layout.chart.add(title=title)
    if kind == "Margin":
        if len(names) != 3:
            raise MarginChartError(
                f"{where}: a margin chart needs exactly 3 tags, got {len(names)}"
            )
        chart.margin.series.add(value=names[0], lower=names[1], upper=names[2])
    else:
        chart.multiline.tag.extend(names)
        chart.multiline.SetInParent()


def layout_value(layout: Any) -> bytes:
    """Serialized custom-scalars config value for a ``layout`` dict (tensorboardX's and torch's).

    Raises:
      TypeError: the layout is not ``{str: {str: [kind, [str, ...]]}}``.
      ValueError: a margin chart does not have exactly 3 tags.
    """
    from .. import proto

    if not isinstance(layout, Mapping):
        raise TypeError(f"custom scalars layout must be a dict, got {type(layout).__name__}")
    message = proto.Layout()
    for category_title, charts in layout.items():
        category = message.category.add(
            title=check_tag(category_title, "custom scalars layout: category title")
        )
        if not isinstance(charts, Mapping):
            raise TypeError(
                f"custom scalars layout: category {category_title!r} must be a dict of chart "
                f"title -> [kind, tags], got {type(charts).__name__}"
            )
        for title, spec in charts.items():
            _chart(
                category,
                category.title,
                check_tag(title, "custom scalars layout: chart title"),
                spec,
            )
    value = proto.SummaryValue(tag=CONFIG_TAG)
    value.metadata.plugin_data.plugin_name = PLUGIN_CUSTOM_SCALARS
    tensor = value.tensor
    tensor.dtype = proto.DT_STRING
    tensor.tensor_shape.SetInParent()
    tensor.string_val.append(message.SerializeToString())
    return bytes(value.SerializeToString())
