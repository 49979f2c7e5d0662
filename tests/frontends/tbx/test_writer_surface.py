"""The tensorboardX / torch ``SummaryWriter`` surface beyond the ``add_*`` kinds: torch's scalar
forms, ``file_writer`` and ``all_writers``, ``use_metadata``, ``write_to_disk``, ``comet_config``,
``export_scalars_to_json``, the graph methods, ``add_images`` of a list, and ``patch()``."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

import npsummary
from conftest import only_event_file, read_events
from npsummary import EventSink, MemorySink, SummaryWriter, TensorboardXSummaryWriter, proto
from npsummary._frontends.tbx.file_writer import RunFileWriter

summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")
event_pb2 = pytest.importorskip("tensorboard.compat.proto.event_pb2")
graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")


def _payloads(sink: EventSink) -> list[bytes]:
    """What a writer built on a MemorySink wrote (its ``sink`` property is typed EventSink)."""
    return cast(MemorySink, sink).payloads


def _file_writer(writer: SummaryWriter) -> RunFileWriter:
    """``writer.file_writer``, which is None only after ``close()``."""
    file_writer = writer.file_writer
    assert file_writer is not None
    return file_writer


def _values(sink: MemorySink) -> list[Any]:
    return [v for p in sink.payloads for v in event_pb2.Event.FromString(p).summary.value]


# -- add_scalar: the forms of both anchors -------------------------------------------------------


def _torch_scalar(tag: str, value: float, double: bool) -> bytes:
    """What torch's summary.scalar(new_style=True) builds, with TensorBoard's own protos."""
    tensor_pb2 = pytest.importorskip("tensorboard.compat.proto.tensor_pb2")
    if double:
        tensor = tensor_pb2.TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        tensor = tensor_pb2.TensorProto(float_val=[value], dtype="DT_FLOAT")
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
    )
    value_pb = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=metadata)
    return bytes(value_pb.SerializeToString())


@pytest.mark.parametrize(
    ("args", "kwargs", "double"),
    [
        ((), {"new_style": True}, False),
        ((), {"new_style": True, "double_precision": True}, True),
        ((True,), {}, False),
        ((True, True), {}, True),
    ],
)
def test_torch_new_style_bytes_equal_torchs(args: Any, kwargs: Any, double: bool) -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_scalar("loss", 0.1, 3, 10.0, *args, **kwargs)
    (value,) = _values(sink)
    assert value.SerializeToString() == _torch_scalar("loss", 0.1, double)


def test_double_precision_keeps_float64() -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_scalar("x", 0.1, new_style=True, double_precision=True)
    (value,) = _values(sink)
    assert value.tensor.double_val[0] == 0.1  # not rounded to float32


def test_tensorboardx_positions_are_display_name_and_description() -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_scalar("x", 2.0, 1, None, "Title", "Text")
    (value,) = _values(sink)
    assert value.simple_value == 2.0
    assert (value.metadata.display_name, value.metadata.summary_description) == ("Title", "Text")
    assert not value.metadata.HasField("plugin_data")  # as tensorboardX writes it


def test_bad_double_precision_is_refused_with_the_tag() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(TypeError, match=r"'x'.*double_precision"):
        writer.add_scalar(
            "x",
            1.0,
            new_style=True,
            double_precision=np.array([1, 0]),  # type: ignore[arg-type]
        )
    assert _payloads(writer.sink) == []


def test_flags_are_read_as_if_value_reads_them() -> None:
    """torch and tensorboardX test new_style, double_precision and write_to_disk with ``if``:
    1 and 0 are flags, as close=1 and decode=1 are elsewhere (one rule: check_flag)."""
    sink = MemorySink()
    SummaryWriter(sink).add_scalar(
        "x",
        1.0,
        1,
        new_style=1,  # type: ignore[arg-type]
        double_precision=0,  # type: ignore[arg-type]
    )
    (event,) = [proto.Event.FromString(p) for p in sink.payloads if b"x" in p]
    assert event.summary.value[0].HasField("tensor")
    TensorboardXSummaryWriter(MemorySink(), write_to_disk=1).close()  # type: ignore[arg-type]


# -- file_writer / all_writers --------------------------------------------------------------------


def _summaries() -> list[Any]:
    tbx_summary = pytest.importorskip("tensorboardX.proto.summary_pb2")
    return [
        summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="tb", simple_value=1.0)]),
        tbx_summary.Summary(value=[tbx_summary.Summary.Value(tag="tbx", simple_value=2.0)]),
        proto.Summary(value=[proto.SummaryValue(tag="ours", simple_value=3.0)]),
        summary_pb2.Summary(
            value=[summary_pb2.Summary.Value(tag="bytes", simple_value=4.0)]
        ).SerializeToString(),
    ]


def test_file_writer_add_summary_goes_into_the_same_file(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("direct", 0.5, 1)
        for step, summary in enumerate(_summaries()):
            _file_writer(writer).add_summary(summary, step, walltime=100.0 + step)
        writer._get_file_writer().add_summary(_summaries()[0])  # no step: 0
        assert _file_writer(writer).get_logdir() == str(tmp_path)
    events = read_events(only_event_file(tmp_path))
    got = [(e.step, e.wall_time, v.tag, v.simple_value) for e in events for v in e.summary.value]
    assert got[1:5] == [
        (0, 100.0, "tb", 1.0),
        (1, 101.0, "tbx", 2.0),
        (2, 102.0, "ours", 3.0),
        (3, 103.0, "bytes", 4.0),
    ]
    assert got[0][2] == "direct" and got[-1][:1] == (0,) and got[-1][2] == "tb"


def test_file_writer_refuses_what_is_not_a_summary() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(TypeError, match="Summary"):
        _file_writer(writer).add_summary(proto.Event())
    with pytest.raises(TypeError, match="Summary"):
        _file_writer(writer).add_summary("text")
    with pytest.raises(ValueError, match="not a serialized Summary"):
        _file_writer(writer).add_summary(b"\xff\xff\xff")
    assert _payloads(writer.sink) == []


def test_file_writer_add_event_sets_wall_time_and_step() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    event = event_pb2.Event(step=5, file_version="x")
    _file_writer(writer).add_event(event, walltime=7.5)
    _file_writer(writer).add_event(event.SerializeToString(), step=9, walltime=8.0)
    first, second = (proto.Event.FromString(p) for p in sink.payloads)
    assert (first.step, first.wall_time, first.file_version) == (5, 7.5, "x")
    assert (second.step, second.wall_time) == (9, 8.0)


def test_all_writers_lists_sub_runs(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalars("m", {"a": 1.0, "b": 2.0}, 0)
        writers = writer.all_writers
        assert writers is not None
        assert sorted(writers) == sorted(
            [str(tmp_path), str(tmp_path / "m_a"), str(tmp_path / "m_b")]
        )
        writers[str(tmp_path / "m_a")].add_summary(
            summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag="m", simple_value=9.0)]), 1
        )
    events = read_events(only_event_file(tmp_path / "m_a"))
    assert [(e.step, e.summary.value[0].simple_value) for e in events[1:]] == [(0, 1.0), (1, 9.0)]


def test_closed_writer_has_no_file_writer_and_reopens_on_demand(tmp_path: Path) -> None:
    writer = SummaryWriter(tmp_path)
    writer.close()
    assert writer.file_writer is None and writer.all_writers is None
    writer._get_file_writer().add_summary(_summaries()[0], 1)  # Lightning's call after close
    writer.close()
    assert len(list(tmp_path.glob("*tfevents*"))) == 2


# -- use_metadata, write_to_disk, comet_config ---------------------------------------------------


def test_use_metadata_sets_default_step_and_walltime() -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with writer.use_metadata(global_step=10, walltime=5.0) as same:
        assert same is writer
        writer.add_scalar("a", 1.0)
        writer.add_scalar("b", 2.0, 3)
        _file_writer(writer).add_summary(_summaries()[2])
    writer.add_scalar("c", 3.0)
    events = [proto.Event.FromString(p) for p in sink.payloads]
    assert [(e.step, e.wall_time) for e in events[:3]] == [(10, 5.0), (3, 5.0), (10, 5.0)]
    assert events[3].step == 0 and events[3].wall_time != 5.0


def test_use_metadata_refuses_nesting_and_empty_defaults() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(ValueError, match="global_step, walltime"), writer.use_metadata():
        pass
    with (
        writer.use_metadata(global_step=1),
        pytest.raises(RuntimeError, match="already set"),
        writer.use_metadata(walltime=1.0),
    ):
        pass
    with writer.use_metadata(walltime=2.0):  # usable again after the errors
        writer.add_scalar("x", 1.0)


def test_write_to_disk_false_accepts_every_call_and_writes_nothing(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    with SummaryWriter(logdir, write_to_disk=False) as writer:
        writer.add_scalar("x", 1.0, 0)
        writer.add_scalars("m", {"a": 1.0})
        writer.add_histogram("h", np.arange(10.0))
        writer.add_image("i", np.zeros((3, 2, 2)))
        writer.add_text("t", "hello")
        _file_writer(writer).add_summary(_summaries()[0])
        with pytest.raises(TypeError, match="'x'"):
            writer.add_scalar("x", "not a number")
        assert writer.logdir == str(logdir)
    assert not logdir.exists()


def test_comet_config_only_disabled_and_no_unknown_kwargs(tmp_path: Path) -> None:
    SummaryWriter(tmp_path, comet_config={"disabled": True}).close()
    SummaryWriter(tmp_path, comet_config=None).close()
    with pytest.raises(ValueError, match="Comet"):
        SummaryWriter(tmp_path / "c", comet_config={"api_key": "k"})
    with pytest.raises(TypeError, match=r"unexpected keyword.*colour"):
        SummaryWriter(tmp_path / "k", colour="red")


# -- export_scalars_to_json -----------------------------------------------------------------------


def _log_for_export(writer: Any) -> None:
    for step in range(3):
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=10.0 + step)
        writer.add_scalars("pair", {"a": step, "b": -step}, step, walltime=20.0 + step)


def test_export_scalars_to_json_matches_tensorboardx(tmp_path: Path) -> None:
    tensorboardX = pytest.importorskip("tensorboardX")
    theirs = tensorboardX.SummaryWriter(str(tmp_path / "tbx"))
    _log_for_export(theirs)
    theirs.export_scalars_to_json(tmp_path / "tbx.json")
    theirs.close()
    with SummaryWriter(tmp_path / "ours") as ours:
        _log_for_export(ours)
        ours.export_scalars_to_json(tmp_path / "ours.json")
    expected = json.loads((tmp_path / "tbx.json").read_text())
    got = json.loads((tmp_path / "ours.json").read_text())
    # Keys of sub-runs name their directory: tensorboardX nests <main>/<key>, torch and
    # npsummary use <main>_<key>.
    renamed = {
        k.replace(str(tmp_path / "tbx"), str(tmp_path / "ours")): v for k, v in expected.items()
    }
    renamed = {k.replace("pair/", "pair_"): v for k, v in renamed.items()}
    # tensorboardX 2.6 exports add_scalars values only (its docstring promises all scalars);
    # npsummary also exports add_scalar's, keyed by tag.
    assert got.pop("loss") == [[10.0, 0, 1.0], [11.0, 1, 0.5], [12.0, 2, np.float32(1 / 3)]]
    assert got == renamed


def test_export_holds_what_was_logged_since_the_last_export(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as writer:
        writer.add_scalar("x", 1.0, 0, walltime=1.0)
        writer.export_scalars_to_json(tmp_path / "1.json")
        writer.add_scalar("x", 2.0, 1, walltime=2.0)
        writer.export_scalars_to_json(tmp_path / "2.json")
    assert json.loads((tmp_path / "1.json").read_text()) == {"x": [[1.0, 0, 1.0]]}
    assert json.loads((tmp_path / "2.json").read_text()) == {"x": [[2.0, 1, 2.0]]}


def test_export_reads_torch_style_scalars_too(tmp_path: Path) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    writer.add_scalar("n", 0.25, 1, 3.0, new_style=True)
    writer.add_scalar("d", 0.1, 2, 4.0, new_style=True, double_precision=True)
    writer.export_scalars_to_json(tmp_path / "x.json")
    assert json.loads((tmp_path / "x.json").read_text()) == {
        "n": [[3.0, 1, 0.25]],
        "d": [[4.0, 2, 0.1]],
    }


# -- graphs ----------------------------------------------------------------------------------------


def _graph() -> Any:
    graph = graph_pb2.GraphDef()
    node = graph.node.add(name="x", op="Placeholder")
    graph.node.add(name="y", op="Relu", input=[node.name])
    return graph


@pytest.mark.parametrize("as_bytes", [False, True])
def test_add_graph_of_a_graph_def_reads_back(tmp_path: Path, as_bytes: bool) -> None:
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    graph = _graph()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(graph.SerializeToString() if as_bytes else graph)
    acc = ea.EventAccumulator(str(tmp_path))
    acc.Reload()
    assert acc.Graph() == graph


def test_add_graph_refuses_other_objects() -> None:
    writer = SummaryWriter(MemorySink())
    with pytest.raises(TypeError, match="GraphDef"):
        writer.add_graph(object())
    with pytest.raises(TypeError, match="GraphDef"):
        writer.add_graph(summary_pb2.Summary())
    assert _payloads(writer.sink) == []


def test_add_openvino_graph_reads_the_ir_xml(tmp_path: Path) -> None:
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    xml = tmp_path / "model.xml"
    xml.write_text(
        '<net name="m"><layers><layer id="0" name="input" type="Parameter"/>'
        '<layer id="1" name="relu" type="ReLU"/><layer id="2" name="out" type="Result"/>'
        '</layers><edges><edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>'
        '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/></edges></net>'
    )
    with SummaryWriter(tmp_path / "run") as writer:
        writer.add_openvino_graph(str(xml))
    acc = ea.EventAccumulator(str(tmp_path / "run"))
    acc.Reload()
    nodes = [(n.name, n.op, list(n.input)) for n in acc.Graph().node]
    assert nodes == [("relu", "op", ["input"]), ("out", "op", ["relu"])]
    tensorboardX = pytest.importorskip("tensorboardX.openvino_graph")
    assert acc.Graph().SerializeToString() == (
        tensorboardX.load_openvino_graph(str(xml)).SerializeToString()
    )


def test_add_onnx_graph_names_what_to_install(tmp_path: Path) -> None:
    model = tmp_path / "m.onnx"
    model.write_bytes(b"")
    writer = SummaryWriter(MemorySink())
    try:
        import onnx  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install onnx"):
            writer.add_onnx_graph(str(model))
    with pytest.raises(ValueError, match="no such file"):
        writer.add_onnx_graph(prototxt=str(tmp_path / "missing.onnx"))
    with pytest.raises(TypeError, match="once"):
        writer.add_onnx_graph()


# -- add_images of a list, patch ---------------------------------------------------------------


def test_add_images_stacks_a_list_in_the_per_image_layout() -> None:
    chw = [np.full((3, 2, 4), k, np.uint8) for k in (10, 20)]
    sink_list, sink_array = MemorySink(), MemorySink()
    SummaryWriter(sink_list).add_images("b", chw, 0, dataformats="CHW")
    SummaryWriter(sink_array).add_images("b", np.stack(chw), 0, dataformats="NCHW")
    assert _values(sink_list)[0].image == _values(sink_array)[0].image
    hwc = [image.transpose(1, 2, 0) for image in chw]
    sink_hwc = MemorySink()
    SummaryWriter(sink_hwc).add_images("b", hwc, 0, dataformats="HWC")
    assert _values(sink_hwc)[0].image == _values(sink_array)[0].image


def test_patch_and_unpatch_tensorboardx() -> None:
    tensorboardX = pytest.importorskip("tensorboardX")
    original = tensorboardX.SummaryWriter
    try:
        patched = npsummary.patch()
        assert "tensorboardX.SummaryWriter" in patched
        # tensorboardX gets the tensorboardX flavour (issue 21, item 4), a SummaryWriter
        assert tensorboardX.SummaryWriter is npsummary.TensorboardXSummaryWriter
        assert tensorboardX.writer.SummaryWriter is npsummary.TensorboardXSummaryWriter
        assert issubclass(tensorboardX.SummaryWriter, SummaryWriter)
        assert npsummary.patch() == []  # already patched: nothing more to do
    finally:
        npsummary.unpatch()
    assert tensorboardX.SummaryWriter is original
    assert tensorboardX.writer.SummaryWriter is original


def test_default_bins_are_tensorboardxs() -> None:
    bins = SummaryWriter(MemorySink()).default_bins
    assert bins[len(bins) // 2] == 0.0 and math.isclose(bins[-1] / bins[-2], 1.1)


def test_add_graph_of_a_torch_object_without_torch_is_a_clear_error() -> None:
    fake_module = type("Linear", (), {"__module__": "torch.nn.modules.linear"})()
    writer = SummaryWriter(MemorySink())
    with pytest.raises(TypeError, match="torch is not importable"):
        writer.add_graph(fake_module)
    assert _payloads(writer.sink) == []
