"""Custom scalars layout: tensorboardX's bytes, and clear errors for malformed layouts."""

from __future__ import annotations

from typing import Any

import pytest

from npsummary import MemorySink, SummaryWriter, proto
from npsummary._summaries.custom_scalars import layout_value

LAYOUT = {
    "Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
    "USA": {
        "dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
        "empty": ["Multiline", []],
    },
}


def test_bytes_equal_tensorboardx() -> None:
    tbx_summary = pytest.importorskip("tensorboardX.summary")
    theirs = tbx_summary.custom_scalars(LAYOUT).value[0].SerializeToString()
    assert layout_value(LAYOUT) == theirs


def test_shorthands_write_one_layout_each() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_custom_scalars_multilinechart(["a", "b"], category="c", title="t")
    writer.add_custom_scalars_marginchart(["v", "lo", "hi"])
    layouts = []
    for payload in sink.payloads:
        event = proto.Event.FromString(payload)
        (value,) = event.summary.value
        assert value.tag == "custom_scalars__config__"
        layouts.append(proto.Layout.FromString(value.tensor.string_val[0]))
    assert layouts[0].category[0].title == "c"
    assert list(layouts[0].category[0].chart[0].multiline.tag) == ["a", "b"]
    series = layouts[1].category[0].chart[0].margin.series[0]
    assert (series.value, series.lower, series.upper) == ("v", "lo", "hi")


@pytest.mark.parametrize(
    ("layout", "error", "match"),
    [
        ([("cat", {})], TypeError, "dict"),
        ({"cat": ["Multiline", ["a"]]}, TypeError, "'cat'"),
        ({"cat": {"chart": ["Margin", ["a", "b"]]}}, ValueError, "exactly 3 tags"),
        ({"cat": {"chart": ["Multiline", "a"]}}, TypeError, "list of str"),
        ({"cat": {"chart": ["Multiline", [1]]}}, TypeError, "tag"),
        ({"cat": {"chart": "Multiline"}}, TypeError, "kind"),
    ],
)
def test_malformed_layouts_raise_and_write_nothing(layout: Any, error: type, match: str) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises(error, match=match):
        writer.add_custom_scalars(layout)
    with pytest.raises(ValueError, match="3 tags"):
        writer.add_custom_scalars_marginchart(["a", "b"])
    assert sink.payloads == []
