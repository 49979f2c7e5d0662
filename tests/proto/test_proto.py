"""npsummary.proto: schema parity with TensorBoard, byte equality, pool isolation."""

from __future__ import annotations

import math
import os
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool

import npsummary.proto as p
from npsummary.proto._descriptors import FILES

SRC_DIR = Path(p.__file__).resolve().parents[2]
REPO = SRC_DIR.parent

# docs/FORMAT.md §3.4: tf.summary.scalar("loss", 0.5, step=3) as written by TF 2.21.
TF2_SCALAR_EVENT = bytes.fromhex(
    "09732b39c235c3da41"  # wall_time
    "1003"  # step = 3
    "2a210a1f"  # summary { value {
    "0a046c6f7373"  # tag "loss"
    "420a0801120022040000003f"  # tensor { DT_FLOAT, shape {}, content f32 0.5 }
    "4a0b0a090a07" + b"scalars".hex()  # metadata { plugin_data { plugin_name } }
)
TF2_SCALAR_WALL_TIME = struct.unpack("<d", bytes.fromhex("732b39c235c3da41"))[0]

MESSAGE_EXPORTS = [
    name for name in p.__all__ if name[0].isupper() and not name.isupper() and name != "POOL"
]
CONSTANT_EXPORTS = [name for name in p.__all__ if name.isupper() and name != "POOL"]


def _build_scalar_event(module: Any) -> Any:
    event = module.Event(wall_time=TF2_SCALAR_WALL_TIME, step=3)
    value = event.summary.value.add(tag="loss")
    value.tensor.dtype = 1  # DT_FLOAT
    value.tensor.tensor_shape.SetInParent()
    value.tensor.tensor_content = struct.pack("<f", 0.5)
    value.metadata.plugin_data.plugin_name = "scalars"
    return event


# --- TensorBoard reference descriptors ------------------------------------------------------

TB_MODULES = [
    "tensorboard.compat.proto.event_pb2",
    "tensorboard.compat.proto.summary_pb2",
    "tensorboard.compat.proto.tensor_pb2",
    "tensorboard.compat.proto.types_pb2",
    "tensorboard.plugins.scalar.plugin_data_pb2",
    "tensorboard.plugins.histogram.plugin_data_pb2",
    "tensorboard.plugins.image.plugin_data_pb2",
    "tensorboard.plugins.audio.plugin_data_pb2",
    "tensorboard.plugins.text.plugin_data_pb2",
    "tensorboard.plugins.pr_curve.plugin_data_pb2",
    "tensorboard.plugins.custom_scalar.layout_pb2",
    "tensorboard.plugins.hparams.api_pb2",
    "tensorboard.plugins.hparams.plugin_data_pb2",
    "tensorboard.plugins.mesh.plugin_data_pb2",
]


@pytest.fixture(scope="module")
def tb_pool() -> Any:
    """TensorBoard's default pool with every module we mirror loaded."""
    pytest.importorskip("tensorboard")
    import importlib

    for name in TB_MODULES:
        importlib.import_module(name)
    return descriptor_pool.Default()


@pytest.fixture(scope="module")
def tb_event_pb2(tb_pool: Any) -> ModuleType:
    from tensorboard.compat.proto import event_pb2

    return cast(ModuleType, event_pb2)


def _to_tb(full_name: str) -> str:
    if full_name.startswith("npsummary."):
        return "tensorboard." + full_name[len("npsummary.") :]
    return full_name


def _to_ours(full_name: str) -> str:
    if full_name.startswith("tensorboard."):
        return "npsummary." + full_name[len("tensorboard.") :]
    return full_name


def _is_repeated(field: Any) -> bool:
    flag = getattr(field, "is_repeated", None)
    if flag is None:  # protobuf < 6.33 has only `label`, >= 7.34 only `is_repeated`
        return bool(field.label == 3)
    return bool(flag)


def _field_signature(field: Any) -> tuple[Any, ...]:
    type_name = None
    if field.message_type is not None:
        type_name = _to_ours(field.message_type.full_name)
    elif field.enum_type is not None:
        type_name = _to_ours(field.enum_type.full_name)
    oneof = field.containing_oneof
    return (field.name, field.number, field.type, _is_repeated(field), type_name,
            None if oneof is None else oneof.name)  # fmt: skip


def _oneofs(message: Any) -> dict[str, list[str]]:
    return {o.name: sorted(f.name for f in o.fields) for o in message.oneofs}


def _walk_messages(message: Any) -> Iterator[Any]:
    yield message
    for nested in message.nested_types:
        yield from _walk_messages(nested)


def _our_files() -> list[descriptor_pb2.FileDescriptorProto]:
    return [descriptor_pb2.FileDescriptorProto.FromString(blob) for blob in FILES]


def _our_messages() -> list[Any]:
    out: list[Any] = []
    for fdp in _our_files():
        if fdp.package.startswith("npsummary"):
            file_desc = p.POOL.FindFileByName(fdp.name)
            for top in file_desc.message_types_by_name.values():
                out.extend(_walk_messages(top))
    return out


def _our_enums() -> list[Any]:
    out = []
    for fdp in _our_files():
        if fdp.package.startswith("npsummary"):
            file_desc = p.POOL.FindFileByName(fdp.name)
            out.extend(file_desc.enum_types_by_name.values())
            for message in _walk_messages_of(file_desc):
                out.extend(message.enum_types)
    return out


def _walk_messages_of(file_desc: Any) -> Iterator[Any]:
    for top in file_desc.message_types_by_name.values():
        yield from _walk_messages(top)


OUR_MESSAGE_NAMES = [m.full_name for m in _our_messages()]
OUR_ENUM_NAMES = [e.full_name for e in _our_enums()]


@pytest.mark.parametrize("full_name", OUR_MESSAGE_NAMES)
def test_message_fields_match_tensorboard(tb_pool: Any, full_name: str) -> None:
    ours = p.POOL.FindMessageTypeByName(full_name)
    theirs = tb_pool.FindMessageTypeByName(_to_tb(full_name))
    assert sorted(map(_field_signature, ours.fields)) == sorted(
        map(_field_signature, theirs.fields)
    )
    assert _oneofs(ours) == _oneofs(theirs)
    assert sorted(n.name for n in ours.nested_types) == sorted(n.name for n in theirs.nested_types)
    assert sorted(e.name for e in ours.enum_types) == sorted(e.name for e in theirs.enum_types)
    assert ours.GetOptions().map_entry == theirs.GetOptions().map_entry


@pytest.mark.parametrize("full_name", OUR_ENUM_NAMES)
def test_enum_values_match_tensorboard(tb_pool: Any, full_name: str) -> None:
    ours = p.POOL.FindEnumTypeByName(full_name)
    theirs = tb_pool.FindEnumTypeByName(_to_tb(full_name))
    assert [(v.name, v.number) for v in ours.values] == [(v.name, v.number) for v in theirs.values]


@pytest.mark.parametrize(
    "root",
    [
        "tensorboard.Event",
        "tensorboard.ScalarPluginData",
        "tensorboard.HistogramPluginData",
        "tensorboard.ImagePluginData",
        "tensorboard.AudioPluginData",
        "tensorboard.TextPluginData",
        "tensorboard.PrCurvePluginData",
        "tensorboard.Layout",
        "tensorboard.hparams.HParamsPluginData",
    ],
)
def test_every_reachable_tensorboard_message_is_defined(tb_pool: Any, root: str) -> None:
    seen: set[str] = set()
    stack = [tb_pool.FindMessageTypeByName(root)]
    while stack:
        message = stack.pop()
        if message.full_name in seen:
            continue
        seen.add(message.full_name)
        stack.extend(f.message_type for f in message.fields if f.message_type is not None)
    missing = []
    for name in sorted(seen):
        try:
            p.POOL.FindMessageTypeByName(_to_ours(name))
        except KeyError:
            missing.append(name)
    assert missing == []


@pytest.mark.parametrize("name", MESSAGE_EXPORTS)
def test_exported_class_is_the_pool_message(name: str) -> None:
    cls = getattr(p, name)
    assert cls.DESCRIPTOR.file.pool is p.POOL
    assert cls.DESCRIPTOR.full_name.startswith("npsummary.")
    assert cls().SerializeToString() == b""


def test_nested_exports_are_the_nested_classes() -> None:
    assert p.Summary().value.add().DESCRIPTOR is p.SummaryValue.DESCRIPTOR
    assert p.SummaryValue().image.DESCRIPTOR is p.SummaryImage.DESCRIPTOR
    assert p.SummaryValue().audio.DESCRIPTOR is p.SummaryAudio.DESCRIPTOR
    assert p.SummaryMetadata().plugin_data.DESCRIPTOR is p.PluginData.DESCRIPTOR
    assert p.TensorShapeProto().dim.add().DESCRIPTOR is p.TensorShapeDim.DESCRIPTOR
    assert p.MarginChartContent().series.add().DESCRIPTOR is p.MarginSeries.DESCRIPTOR
    assert isinstance(p.Summary(value=[p.SummaryValue(tag="t")]).value[0], p.SummaryValue)


def test_constants_have_tensorboard_values() -> None:
    expected = {
        "DT_INVALID": 0, "DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4,
        "DT_INT16": 5, "DT_INT8": 6, "DT_STRING": 7, "DT_COMPLEX64": 8, "DT_INT64": 9,
        "DT_BOOL": 10, "DT_BFLOAT16": 14, "DT_UINT16": 17, "DT_COMPLEX128": 18, "DT_HALF": 19,
        "DT_UINT32": 22, "DT_UINT64": 23,
        "SESSION_LOG_STATUS_UNSPECIFIED": 0, "SESSION_LOG_START": 1, "SESSION_LOG_STOP": 2,
        "SESSION_LOG_CHECKPOINT": 3,
        "DATA_CLASS_UNKNOWN": 0, "DATA_CLASS_SCALAR": 1, "DATA_CLASS_TENSOR": 2,
        "DATA_CLASS_BLOB_SEQUENCE": 3,
        "AUDIO_ENCODING_UNKNOWN": 0, "AUDIO_ENCODING_WAV": 11,
        "DATA_TYPE_UNSET": 0, "DATA_TYPE_STRING": 1, "DATA_TYPE_BOOL": 2, "DATA_TYPE_FLOAT64": 3,
        "DATASET_UNKNOWN": 0, "DATASET_TRAINING": 1, "DATASET_VALIDATION": 2,
        "STATUS_UNKNOWN": 0, "STATUS_SUCCESS": 1, "STATUS_FAILURE": 2, "STATUS_RUNNING": 3,
    }  # fmt: skip
    assert {name: getattr(p, name) for name in CONSTANT_EXPORTS} == expected
    assert all(type(getattr(p, name)) is int for name in CONSTANT_EXPORTS)


def test_constants_match_tensorboard_modules(tb_pool: Any) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2, types_pb2
    from tensorboard.plugins.audio import plugin_data_pb2 as audio_pb2
    from tensorboard.plugins.hparams import api_pb2

    for name in CONSTANT_EXPORTS:
        if name.startswith("DT_"):
            assert getattr(p, name) == getattr(types_pb2, name)
        elif name.startswith("SESSION_LOG_"):
            suffix = name[len("SESSION_LOG_") :]
            assert getattr(p, name) == getattr(event_pb2.SessionLog, suffix)
        elif name.startswith("DATA_CLASS_"):
            assert getattr(p, name) == getattr(summary_pb2, name)
        elif name.startswith("AUDIO_ENCODING_"):
            suffix = name[len("AUDIO_ENCODING_") :]
            assert getattr(p, name) == getattr(audio_pb2.AudioPluginData, suffix)
        else:
            assert getattr(p, name) == getattr(api_pb2, name)


# --- isolation ------------------------------------------------------------------------------


def test_schema_uses_only_own_packages_and_paths() -> None:
    files = _our_files()
    names = [f.name for f in files]
    assert len(names) == len(set(names))
    for fdp in files:
        if fdp.package == "google.protobuf":
            assert fdp.name == "google/protobuf/struct.proto"
            continue
        assert fdp.package in {"npsummary", "npsummary.hparams", "npsummary.mesh"}
        assert fdp.name.startswith("npsummary/proto/")
        # dependency order: each file only imports files listed before it
        assert set(fdp.dependency) <= set(names[: names.index(fdp.name)])


def test_default_pool_untouched() -> None:
    default = descriptor_pool.Default()
    for fdp in _our_files():
        if fdp.package.startswith("npsummary"):
            with pytest.raises(KeyError):
                default.FindFileByName(fdp.name)
    with pytest.raises(KeyError):
        default.FindMessageTypeByName("npsummary.Event")


def test_descriptors_are_up_to_date() -> None:
    pytest.importorskip("grpc_tools")
    script = REPO / "scripts" / "gen_descriptors.py"
    if not script.exists():
        pytest.skip("source checkout only")
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


# --- bytes ----------------------------------------------------------------------------------


def test_tf2_scalar_event_bytes() -> None:
    assert len(TF2_SCALAR_EVENT) == 46
    event = _build_scalar_event(p)
    assert event.SerializeToString() == TF2_SCALAR_EVENT
    parsed = p.Event.FromString(TF2_SCALAR_EVENT)
    assert parsed == event
    assert parsed.summary.value[0].tensor.HasField("tensor_shape")
    assert parsed.SerializeToString() == TF2_SCALAR_EVENT


def test_tf2_scalar_event_cross_parses_with_tensorboard(tb_event_pb2: ModuleType) -> None:
    theirs = _build_scalar_event(tb_event_pb2)
    assert theirs.SerializeToString() == TF2_SCALAR_EVENT
    assert tb_event_pb2.Event.FromString(_build_scalar_event(p).SerializeToString()) == theirs
    ours = p.Event.FromString(theirs.SerializeToString())
    assert ours.summary.value[0].metadata.plugin_data.plugin_name == "scalars"
    assert ours.SerializeToString() == TF2_SCALAR_EVENT


EDGE_EVENTS = [
    dict(wall_time=0.0, step=0, tag="", simple_value=0.0),
    dict(wall_time=-0.0, step=-1, tag="a/b c", simple_value=-0.0),
    dict(wall_time=1.7e9 + 0.123456, step=2**63 - 1, tag="ünïcødé/标签", simple_value=3.4e38),
    dict(wall_time=math.inf, step=-(2**63), tag="x" * 300, simple_value=math.nan),
    dict(wall_time=5e-324, step=2**31, tag="\x00nul", simple_value=-math.inf),
]


def _build_edge_event(module: Any, case: dict[str, Any]) -> Any:
    event = module.Event(wall_time=case["wall_time"], step=case["step"])
    event.source_metadata.writer = "npsummary"
    value = event.summary.value.add(tag=case["tag"], simple_value=case["simple_value"])
    value.metadata.plugin_data.plugin_name = "scalars"
    value.metadata.data_class = 1
    histo = event.summary.value.add(tag=case["tag"] + "/h").histo
    histo.min, histo.max, histo.num = -1.0, case["wall_time"], 3.0
    histo.bucket_limit.extend([-1.0, 0.0, 1.5e308])
    histo.bucket.extend([1.0, 0.0, 2.0])
    image = event.summary.value.add(tag="img").image
    image.height, image.width, image.colorspace = 2, 3, 4
    image.encoded_image_string = b"\x89PNG\r\n"
    tensor = event.summary.value.add(tag="t").tensor
    tensor.dtype = 7
    tensor.tensor_shape.dim.add(size=2)
    tensor.string_val.extend([b"", case["tag"].encode()])
    return event


@pytest.mark.parametrize("case", EDGE_EVENTS)
def test_edge_events_roundtrip(case: dict[str, Any]) -> None:
    event = _build_edge_event(p, case)
    data = event.SerializeToString()
    again = p.Event.FromString(data)
    assert again.SerializeToString() == data
    assert again.step == case["step"]


@pytest.mark.parametrize("case", EDGE_EVENTS)
def test_edge_events_match_tensorboard_bytes(
    tb_event_pb2: ModuleType, case: dict[str, Any]
) -> None:
    ours = _build_edge_event(p, case).SerializeToString()
    theirs = _build_edge_event(tb_event_pb2, case).SerializeToString()
    assert ours == theirs
    assert tb_event_pb2.Event.FromString(ours).SerializeToString() == ours


def test_plugin_contents_match_tensorboard(tb_pool: Any) -> None:
    from tensorboard.plugins.audio import plugin_data_pb2 as audio_pb2
    from tensorboard.plugins.custom_scalar import layout_pb2
    from tensorboard.plugins.hparams import api_pb2
    from tensorboard.plugins.hparams import plugin_data_pb2 as hp_pb2
    from tensorboard.plugins.pr_curve import plugin_data_pb2 as pr_pb2

    assert p.ScalarPluginData(version=0).SerializeToString() == b""
    assert p.AudioPluginData(encoding=p.AUDIO_ENCODING_WAV).SerializeToString() == b"\x10\x0b"
    assert (
        p.PrCurvePluginData(num_thresholds=5).SerializeToString()
        == pr_pb2.PrCurvePluginData(num_thresholds=5).SerializeToString()
        == b"\x10\x05"
    )
    assert (
        p.AudioPluginData(encoding=11, converted_to_tensor=True).SerializeToString()
        == audio_pb2.AudioPluginData(encoding=11, converted_to_tensor=True).SerializeToString()
    )

    def layout(mod: Any) -> bytes:
        lay = mod.Layout()
        cat = lay.category.add(title="losses", closed=True)
        cat.chart.add(title="all").multiline.tag.extend([r"loss/.*", "acc"])
        cat.chart.add(title="band").margin.series.add(value="m", lower="lo", upper="hi")
        return bytes(lay.SerializeToString())

    assert layout(p) == layout(layout_pb2)

    def hparams(api: Any, plugin: Any) -> list[bytes]:
        start = plugin.HParamsPluginData(version=0)
        info = start.session_start_info
        info.hparams["lr"].number_value = 0.1
        info.hparams["opt"].string_value = "adam"
        info.hparams["bn"].bool_value = True
        info.group_name, info.start_time_secs = "t1", 1.5
        exp = plugin.HParamsPluginData()
        hp = exp.experiment.hparam_infos.add(name="opt", type=1)
        hp.domain_discrete.values.add().string_value = "adam"
        exp.experiment.hparam_infos.add(name="lr", type=3).domain_interval.max_value = 1.0
        metric = exp.experiment.metric_infos.add(display_name="Loss", dataset_type=2)
        metric.name.tag = "loss"
        end = plugin.HParamsPluginData()
        end.session_end_info.status = 1
        # map entry order is unspecified unless serialization is deterministic
        return [m.SerializeToString(deterministic=True) for m in (start, exp, end)]

    ours = hparams(p, p)
    assert ours == hparams(api_pb2, hp_pb2)
    for blob in ours:
        assert (
            hp_pb2.HParamsPluginData.FromString(blob).SerializeToString(deterministic=True) == blob
        )


def test_numpy_scalars_coerced_with_int_and_float() -> None:
    np = pytest.importorskip("numpy")
    event = p.Event(wall_time=float(np.float64(1.25)), step=int(np.int64(7)))
    event.summary.value.add(tag="x", simple_value=float(np.float32(0.5)))
    assert p.Event.FromString(event.SerializeToString()) == event


# --- coexistence ----------------------------------------------------------------------------

_COEXIST = """
import importlib, sys
order = sys.argv[1].split(",")
mods = {name: importlib.import_module(name) for name in order}
p = mods["npsummary.proto"]
e = p.Event(step=3, wall_time=1.5)
e.summary.value.add(tag="loss", simple_value=0.5)
data = e.SerializeToString()
from tensorboard.compat.proto import event_pb2
assert event_pb2.Event.FromString(data).summary.value[0].simple_value == 0.5
import tensorboardX.proto.event_pb2 as tbx
assert tbx.Event.FromString(data).SerializeToString() == data
assert p.Event.FromString(event_pb2.Event(step=9).SerializeToString()).step == 9
print("ok", data.hex())
"""


@pytest.mark.parametrize(
    "order",
    [
        "tensorboard.compat.proto.event_pb2,tensorboardX,npsummary.proto",
        "npsummary.proto,tensorboardX,tensorboard.compat.proto.event_pb2",
    ],
)
def test_coexists_with_tensorboard_and_tensorboardx(order: str) -> None:
    pytest.importorskip("tensorboard")
    pytest.importorskip("tensorboardX")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC_DIR), *sys.path]))
    result = subprocess.run(
        [sys.executable, "-c", _COEXIST, order],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok ")


_PURE_PYTHON = """
import struct
from google.protobuf.internal import api_implementation
import npsummary.proto as p
e = p.Event(wall_time=struct.unpack("<d", bytes.fromhex("732b39c235c3da41"))[0], step=3)
v = e.summary.value.add(tag="loss")
v.tensor.dtype = p.DT_FLOAT
v.tensor.tensor_shape.SetInParent()
v.tensor.tensor_content = struct.pack("<f", 0.5)
v.metadata.plugin_data.plugin_name = "scalars"
print(api_implementation.Type(), e.SerializeToString().hex())
"""


def test_pure_python_backend_gives_same_bytes() -> None:
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(SRC_DIR), *sys.path]),
        PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python",
    )
    result = subprocess.run(
        [sys.executable, "-c", _PURE_PYTHON], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["python", TF2_SCALAR_EVENT.hex()]


def test_message_classes_name_their_module_and_path() -> None:
    # tensorboardX's own tests rebuild a returned message's class from type(msg).__module__
    # and its name; the generated classes said __module__ None.
    import importlib

    classes = [getattr(p, name) for name in p.__all__ if isinstance(getattr(p, name), type)]
    assert p.SummaryValue in classes and p.MarginSeries in classes
    for cls in classes:
        found: Any = importlib.import_module(cls.__module__)
        for part in cls.__qualname__.split("."):
            found = getattr(found, part)
        assert found is cls
    assert p.SummaryValue.__qualname__ == "Summary.Value"
    assert type(p.Summary()).__module__ == "npsummary.proto"
