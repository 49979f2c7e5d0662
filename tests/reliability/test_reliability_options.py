"""Every argument of every public function and method, fuzzed one at a time.

The API fuzzer (``test_reliability_fuzz.py``) drives each function's main value, tag and step.
This suite drives **every other argument** (``fps``, ``rescale``, ``max_outputs``,
``sample_rate``, ``num_thresholds``, ``weights``, ``walltime``, ``dataformats``, ``labels``,
``config_dict``, ``display_name``, reader options, constructor options, ...): each public
callable has one valid call below, and each of its parameters in turn is replaced by odd values
while the others stay valid.

Contract, for every call:

* it returns normally, or raises ``TypeError`` / ``ValueError`` (or a documented refusal);
* the message names the tag (where the callable has one) **and** the argument that was wrong;
* a refused call wrote nothing, and the writer stays usable.

Two sweeps: a fixed list of odd values that runs on every test run (``test_every_option``), and
random values from hypothesis (``test_explore_options``, marked ``fuzz``, which explores with
``HYPOTHESIS_PROFILE=explore python -m pytest -m fuzz``).
``test_every_public_callable_has_a_valid_call`` fails when a public function or method is added
without a line in ``VALID_CALLS``, and ``test_every_parameter_is_fuzzed`` when a parameter is
added without being fuzzed or listed as exempt with its reason.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npsummary
from conftest import examples
from lying import LyingArray as _LyingArray
from lying import LyingFloat as _LyingFloat
from lying import LyingIndex as _LyingIndex
from lying import LyingIter as _LyingIter
from lying import LyingStr as _LyingStr
from npsummary import MemorySink, SummaryWriter, reader, v1
from npsummary import experimental as tf2_experimental

pytestmark = pytest.mark.filterwarnings(
    "ignore::RuntimeWarning",
    "ignore::DeprecationWarning",
    "ignore::UserWarning",
)

TAG = "opt_tag"


try:
    import ml_dtypes

    _EXTENSION: list[Any] = [ml_dtypes.bfloat16(1.5), np.ones(3, ml_dtypes.bfloat16)]
except ImportError:  # pragma: no cover - a test extra
    _EXTENSION = []

# The fixed sweep: every kind of value a user (or a framework) can pass by mistake.
ODD_VALUES: list[Any] = [
    None, True, False, np.bool_(True), 0, -1, 1, 3, 1 << 31, 1 << 70, -(1 << 70), 2.5, -0.0,
    math.nan, math.inf, -math.inf, 5e-324, 1e-3, 1e308, 10**400, np.float64(1e-300),
    np.int64(3), np.uint64((1 << 64) - 1), np.int8(-1), np.float16(0.5), np.longdouble(2.5),
    np.timedelta64(3, "s"), np.datetime64(3, "s"), 1 + 2j, np.complex64(1j),
    "", "x", "NCHW", "\ud800", "nul\x00", "../escape", "a" * 300, b"bytes", bytearray(b"b"),
    [], [1], [1.0, 2.0], [0.0, math.nan], [[1], [2, 3]], ["a", "b"], (), (1, 2), {}, {"a": 1},
    {"a": [1]}, {1, 2},
    np.array(4), np.array(4.0), np.array([4]), np.array([]), np.zeros((2, 2)),
    np.array(["a"]), np.array([None], dtype=object), np.ma.masked_array([1.0], mask=[True]),
    np.frombuffer(b"\x00" * 8, ">f4"), object(), _LyingFloat(RuntimeError("no")),
    _LyingFloat("3"), _LyingArray(RuntimeError("no")), _LyingIndex(), _LyingIter(),
    _LyingStr("lying"), print, Path("relative/path"), *_EXTENSION,
]  # fmt: skip

# Names an error may use for an argument (a step is a step whatever the parameter is called).
ALIASES: dict[str, tuple[str, ...]] = {
    "global_step": ("step",),
    "step": ("step",),
    "walltime": ("walltime", "wall time"),
    # tensorboardX's positional order: a str where torch has rescale is the dataformats.
    "rescale": ("rescale", "dataformats"),
}

# -- shared fixtures for the valid calls ----------------------------------------------------------

_CHW = np.zeros((3, 4, 5), np.uint8)
_NCHW = np.zeros((2, 3, 4, 5), np.float32)
_NHWC = np.zeros((2, 4, 5, 3), np.float32)
_RAMP = np.linspace(-1.0, 1.0, 11)
_CLIP = np.zeros(16, np.float32)
_LABELS = np.array([0, 1, 1, 0])
_PREDICTIONS = np.array([0.1, 0.8, 0.4, 0.5])
_VIDEO = np.zeros((1, 2, 3, 4, 4), np.uint8)
_BOXES = np.array([[0.0, 0.0, 2.0, 3.0]])
_VERTICES = np.zeros((1, 4, 3), np.float32)
_COUNTS = np.array([4.0, 3.0, 1.0])
# NodeDef{name: "t" op: "TensorSummary" attr {key: "description" value {s: "{}"}}}
_NODE_DEF = b"\n\x01t\x12\rTensorSummary*\x13\n\x0bdescription\x12\x04\x12\x02{}"


@dataclass
class Ctx:
    """Writers under test, all over MemorySinks, and a small logdir for the reader."""

    logdir: Path
    writer: SummaryWriter = field(init=False)
    writer_sink: MemorySink = field(default_factory=MemorySink)
    tf2_sink: MemorySink = field(default_factory=MemorySink)
    fw_sink: MemorySink = field(default_factory=MemorySink)

    def __post_init__(self) -> None:
        self.writer = SummaryWriter(self.writer_sink)
        # add_embedding writes the projector's files beside the event file: it needs a disk.
        self.disk_writer = SummaryWriter(self.logdir.parent / "embeddings", max_queue=1000)
        self.tf2 = npsummary.create_file_writer(self.tf2_sink)
        self.filewriter = v1.FileWriter(self.fw_sink)

    def records(self) -> int:
        def count(sink: MemorySink) -> int:
            return len(sink.payloads) + sum(count(c) for c in sink.children.values())

        return sum(count(s) for s in (self.writer_sink, self.tf2_sink, self.fw_sink))

    def probe(self) -> None:
        """The writers stay usable: one valid call each writes exactly one record."""
        before = self.records()
        self.writer.add_scalar("probe", 1.0, 0)
        with self.tf2.as_default(step=0):
            npsummary.scalar("probe", 1.0)
        self.filewriter.add_summary(v1.scalar("probe", 1.0), 0)
        v1.merge_all()
        assert self.records() == before + 3, "a writer is not usable after that call"


def _figure() -> Any:
    figure_module = pytest.importorskip("matplotlib.figure")
    figure = figure_module.Figure(figsize=(1, 1), dpi=10)
    figure.add_subplot().plot([0, 1])
    return figure


def _graph_def() -> bytes:
    return b"\n\x10\n\x01x\x12\x0bPlaceholder"  # GraphDef{node {name: "x" op: "Placeholder"}}


def _summary_bytes() -> bytes:
    return v1.scalar("v1_value", 1.0)


@dataclass(frozen=True)
class Call:
    """One valid call: ``make(ctx)`` returns the callable and its keyword arguments. ``tag``:
    the parameter holding the tag (errors must name its value), or None. ``exempt``: parameters
    not fuzzed here, each with its reason. ``also_raises``: documented refusals."""

    make: Callable[[Ctx], tuple[Callable[..., Any], dict[str, Any]]]
    tag: str | None = None
    exempt: dict[str, str] = field(default_factory=dict)
    also_raises: tuple[type[BaseException], ...] = ()
    family: str = "writer"


def _w(method: str, /, *, tag_param: str | None = "tag", **kwargs: Any) -> Call:
    """A SummaryWriter method call with keyword arguments (values may be factories)."""

    def make(ctx: Ctx) -> tuple[Callable[..., Any], dict[str, Any]]:
        args = {
            k: (v() if callable(v) and not isinstance(v, type) else v) for k, v in kwargs.items()
        }
        return getattr(ctx.writer, method), args

    return Call(make, tag_param)


def _f(function: Callable[..., Any], tag_param: str | None, family: str, /, **kwargs: Any) -> Call:
    def make(ctx: Ctx) -> tuple[Callable[..., Any], dict[str, Any]]:
        return function, dict(kwargs)

    return Call(make, tag_param, family=family)


def _fw(method: str, **kwargs: Any) -> Call:
    def make(ctx: Ctx) -> tuple[Callable[..., Any], dict[str, Any]]:
        args = {k: (v() if callable(v) else v) for k, v in kwargs.items()}
        return getattr(ctx.filewriter, method), args

    return Call(make, None, family="filewriter")


@functools.wraps(reader.configure_fetch)
def _configure_fetch(**kwargs: Any) -> None:
    """reader.configure_fetch, with the process-wide setting put back after the call."""
    from npsummary.reader._storage import options as fetch_options

    saved = fetch_options.current()
    try:
        reader.configure_fetch(**kwargs)
    finally:
        fetch_options.replace(saved)


def _r(function: Callable[..., Any], **kwargs: Any) -> Call:
    def make(ctx: Ctx) -> tuple[Callable[..., Any], dict[str, Any]]:
        return function, {"logdir": ctx.logdir, **kwargs}

    return Call(make, None, family="reader")


def _exempt(call: Call, **reasons: str) -> Call:
    return Call(call.make, call.tag, reasons, call.also_raises, call.family)


_HP = {"lr": 0.1, "opt": "adam", "deep": True}
_METRICS = {"loss": 0.5}

VALID_CALLS: dict[str, Call] = {
    # SummaryWriter (tensorboardX / torch.utils.tensorboard)
    "SummaryWriter.add_scalar": _w(
        "add_scalar", tag=TAG, scalar_value=1.0, global_step=1, walltime=1.0,
        display_name="shown", summary_description="about", new_style=False,
        double_precision=False,
    ),
    "SummaryWriter.add_scalars": _w(
        "add_scalars", tag_param="main_tag", main_tag=TAG, tag_scalar_dict={"a": 1.0},
        global_step=1, walltime=1.0,
    ),
    "SummaryWriter.add_histogram": _w(
        "add_histogram", tag=TAG, values=_RAMP, global_step=1, bins="tensorflow", walltime=1.0,
        max_bins=None, nonfinite="warn", process_group=None,
    ),
    "SummaryWriter.add_histogram_raw": _w(
        "add_histogram_raw", tag=TAG, min=0.0, max=2.0, num=8, sum=7.0, sum_squares=9.0,
        bucket_limits=np.array([0.5, 1.5, 2.0]), bucket_counts=_COUNTS, global_step=1,
        walltime=1.0,
    ),
    "SummaryWriter.add_distribution": _w(
        "add_distribution", tag=TAG, values=_RAMP, global_step=1, walltime=1.0, buckets=5,
        description="about", nonfinite="warn", process_group=None,
    ),
    "SummaryWriter.add_variable_summaries": _w(
        "add_variable_summaries", tag=TAG, values=_RAMP, global_step=1, walltime=1.0,
        nonfinite="warn",
    ),
    "SummaryWriter.add_image": _w(
        "add_image", tag=TAG, img_tensor=_CHW, global_step=1, walltime=1.0, dataformats="CHW",
        description="about",
    ),
    "SummaryWriter.add_images": _w(
        "add_images", tag=TAG, img_tensor=_NCHW, global_step=1, walltime=1.0,
        dataformats="NCHW", ncols=2, padding=1, description="about",
    ),
    "SummaryWriter.add_figure": _w(
        "add_figure", tag=TAG, figure=_figure, global_step=1, close=True, walltime=1.0
    ),
    "SummaryWriter.add_filters": _w(
        "add_filters", tag=TAG, weights=np.zeros((3, 3, 2, 4), np.float32), global_step=1,
        walltime=1.0, layout="HWIO", normalize="tile", ncols=2, padding=1,
    ),
    "SummaryWriter.add_feature_maps": _w(
        "add_feature_maps", tag=TAG, activations=_NCHW, global_step=1, walltime=1.0,
        dataformats="NCHW", sample=0, normalize="tile", ncols=2, padding=1,
    ),
    "SummaryWriter.add_text": _w(
        "add_text", tag=TAG, text_string="hello", global_step=1, walltime=1.0
    ),
    "SummaryWriter.add_audio": _w(
        "add_audio", tag=TAG, snd_tensor=_CLIP, global_step=1, sample_rate=8000, walltime=1.0
    ),
    "SummaryWriter.add_video": _w(
        "add_video", tag=TAG, vid_tensor=_VIDEO, global_step=1, fps=4, walltime=1.0,
        dataformats="NTCHW",
    ),
    "SummaryWriter.add_image_with_boxes": _w(
        "add_image_with_boxes", tag=TAG, img_tensor=_CHW, box_tensor=_BOXES, global_step=1,
        walltime=1.0, rescale=1, dataformats="CHW", labels=["a"],
    ),
    "SummaryWriter.add_pr_curve": _w(
        "add_pr_curve", tag=TAG, labels=_LABELS, predictions=_PREDICTIONS, global_step=1,
        num_thresholds=11, weights=np.ones(4), walltime=1.0,
    ),
    "SummaryWriter.add_pr_curve_raw": _w(
        "add_pr_curve_raw", tag=TAG, true_positive_counts=np.array([2.0, 1.0]),
        false_positive_counts=np.array([2.0, 0.0]), true_negative_counts=np.array([0.0, 2.0]),
        false_negative_counts=np.array([0.0, 1.0]), precision=np.array([0.5, 1.0]),
        recall=np.array([1.0, 0.5]), global_step=1, num_thresholds=2, weights=None,
        walltime=1.0,
    ),
    "SummaryWriter.add_mesh": _w(
        "add_mesh", tag=TAG, vertices=_VERTICES, colors=np.zeros((1, 4, 3), np.uint8),
        faces=np.array([[[0, 1, 2]]]), config_dict={"camera": {"cls": "PerspectiveCamera"}},
        global_step=1, walltime=1.0,
    ),
    "SummaryWriter.add_tensor": _w(
        "add_tensor", tag=TAG, tensor=np.ones(3, np.float32), global_step=1, walltime=1.0
    ),
    "SummaryWriter.add_embedding": Call(
        lambda ctx: (ctx.disk_writer.add_embedding, {
            "tag": TAG, "mat": np.zeros((2, 3)), "metadata": ["a", "b"],
            "label_img": np.zeros((2, 3, 4, 4)), "global_step": 1, "metadata_header": None,
        }),
        "tag",
    ),
    "SummaryWriter.add_hparams": _w(
        "add_hparams", tag_param=None, hparam_dict=_HP, metric_dict=_METRICS,
        hparam_domain_discrete={"opt": ["adam", "sgd"]}, run_name=".", global_step=1,
        name=None,
    ),
    "SummaryWriter.add_custom_scalars": _w(
        "add_custom_scalars", tag_param=None,
        layout={"cat": {"chart": ["Multiline", ["loss", "acc"]]}},
    ),
    "SummaryWriter.add_custom_scalars_multilinechart": _w(
        "add_custom_scalars_multilinechart", tag_param=None, tags=["a", "b"], category="c",
        title="t",
    ),
    "SummaryWriter.add_custom_scalars_marginchart": _w(
        "add_custom_scalars_marginchart", tag_param=None, tags=["a", "b", "c"], category="c",
        title="t",
    ),
    "SummaryWriter.set_step": _w("set_step", tag_param=None, step=3),
    "SummaryWriter.use_metadata": Call(
        lambda ctx: (
            lambda **kw: _enter(ctx.writer.use_metadata(**kw)),
            {"global_step": 1, "walltime": 1.0},
        ),
        None,
    ),
    "SummaryWriter.add_graph": _exempt(
        _w("add_graph", tag_param=None, model=_graph_def),
        input_to_model="used only to trace a torch model (tested with torch)",
        verbose="used only to trace a torch model (tested with torch)",
        use_strict_trace="used only to trace a torch model (tested with torch)",
    ),
    # tf.summary
    "npsummary.scalar": _f(npsummary.scalar, "name", "tf2", name=TAG, data=1.0, step=1,
                           description="about"),
    "npsummary.histogram": _f(npsummary.histogram, "name", "tf2", name=TAG, data=_RAMP, step=1,
                              buckets=5, description="about", process_group=None),
    "npsummary.distribution": _f(npsummary.distribution, "name", "tf2", name=TAG, data=_RAMP,
                                 step=1, buckets=5, description="about", process_group=None),
    "npsummary.image": _f(npsummary.image, "name", "tf2", name=TAG, data=_NHWC, step=1,
                          max_outputs=2, description="about"),
    "npsummary.audio": _f(npsummary.audio, "name", "tf2", name=TAG,
                          data=np.zeros((1, 16, 1), np.float32), sample_rate=8000, step=1,
                          max_outputs=1, encoding="wav", description="about"),
    "npsummary.text": _f(npsummary.text, "name", "tf2", name=TAG, data="hello", step=1,
                         description="about"),
    "npsummary.write": _f(npsummary.write, "tag", "tf2", tag=TAG, tensor=np.ones(2), step=1,
                          metadata=None, name="w"),
    "npsummary.name_scope": Call(lambda ctx: (lambda **kw: _enter(npsummary.name_scope(**kw)),
                                              {"name": "scope"}), None, family="tf2"),
    "npsummary.record_if": Call(lambda ctx: (lambda **kw: _enter(npsummary.record_if(**kw)),
                                             {"condition": True}), None, family="tf2"),
    "npsummary.flush": Call(lambda ctx: (npsummary.flush, {"writer": ctx.tf2, "name": None}),
                            None, family="tf2"),
    "npsummary.trace_on": Call(
        lambda ctx: (npsummary.trace_on,
                     {"graph": True, "profiler": False, "profiler_outdir": None}),
        None, also_raises=(NotImplementedError,), family="tf2",
    ),
    "npsummary.trace_export": Call(
        lambda ctx: (npsummary.trace_export, {"name": TAG, "step": 1, "profiler_outdir": None}),
        "name", also_raises=(NotImplementedError,), family="tf2",
    ),
    "npsummary.graph": Call(
        lambda ctx: (npsummary.graph, {"graph_data": _graph_def()}), None,
        also_raises=(NotImplementedError,), family="tf2",
    ),
    "npsummary.create_file_writer": Call(
        lambda ctx: (_closed(npsummary.create_file_writer), {
            "logdir": MemorySink(), "max_queue": 5, "flush_millis": 1000,
            "filename_suffix": ".x", "name": "w", "experimental_trackable": False,
            "experimental_mesh": None, "rank": 0, "ranks": None,
        }),
        None, family="ctor",
    ),
    "npsummary.experimental.set_step": _f(tf2_experimental.set_step, None, "tf2", step=3),
    "npsummary.experimental.summary_scope": Call(
        lambda ctx: (lambda **kw: _enter(tf2_experimental.summary_scope(**kw)),
                     {"name": "s", "default_name": "summary", "values": None}),
        None, family="tf2",
    ),
    "npsummary.experimental.write_raw_pb": Call(
        lambda ctx: (tf2_experimental.write_raw_pb,
                     {"tensor": _summary_bytes(), "step": 1, "name": "raw"}),
        None, family="tf2",
    ),
    # tf.compat.v1.summary
    "v1.scalar": _f(v1.scalar, "name", "v1", name=TAG, tensor=1.0, collections=None,
                    family="fam"),
    "v1.histogram": _f(v1.histogram, "name", "v1", name=TAG, values=_RAMP, collections=None,
                       family="fam", process_group=None),
    "v1.image": _f(v1.image, "name", "v1", name=TAG, tensor=_NHWC, max_outputs=2,
                   collections=None, family="fam"),
    "v1.audio": _f(v1.audio, "name", "v1", name=TAG, tensor=np.zeros((1, 16), np.float32),
                   sample_rate=8000, max_outputs=1, collections=None, family="fam"),
    "v1.text": _f(v1.text, "name", "v1", name=TAG, tensor="hello", collections=None),
    "v1.tensor_summary": _f(v1.tensor_summary, "name", "v1", name=TAG, tensor=np.ones(2),
                            summary_description="about", collections=None,
                            summary_metadata=None, family="fam", display_name="shown"),
    "v1.merge": Call(lambda ctx: (v1.merge, {"inputs": [_summary_bytes()], "collections": None,
                                             "name": "m"}), None, family="v1"),
    "v1.merge_all": _f(v1.merge_all, None, "v1", key="summaries", scope=None, name="m"),
    "v1.clean_tag": _f(v1.clean_tag, None, "v1", name="a b"),
    "v1.get_summary_description": _f(v1.get_summary_description, None, "v1",
                                     node_def=_NODE_DEF),
    "v1.FileWriter": Call(
        lambda ctx: (_closed(v1.FileWriter), {
            "logdir": MemorySink(), "graph": None, "max_queue": 5, "flush_secs": 10,
            "graph_def": None, "filename_suffix": ".x", "session": None, "rank": 0,
            "ranks": None,
        }),
        None, family="ctor",
    ),
    "FileWriter.add_summary": _fw("add_summary", summary=_summary_bytes, global_step=1),
    "FileWriter.add_event": _fw("add_event", event=lambda: bytes(_event()), ),
    "FileWriter.add_session_log": _fw("add_session_log", session_log=lambda: _session_log(),
                                      global_step=1),
    "FileWriter.add_graph": _fw("add_graph", graph=_graph_def, global_step=1, graph_def=None),
    "FileWriter.add_meta_graph": _fw("add_meta_graph", meta_graph_def=lambda: b"",
                                     global_step=1),
    "FileWriter.add_run_metadata": _fw("add_run_metadata", run_metadata=lambda: b"",
                                       tag="run_tag", global_step=1),
    "SummaryWriter": Call(
        lambda ctx: (_closed(SummaryWriter), {
            "logdir": MemorySink(), "comment": "", "purge_step": None, "max_queue": 5,
            "flush_secs": 10, "filename_suffix": ".x", "write_to_disk": True,
            "comet_config": {"disabled": True}, "rank": 0, "ranks": None,
        }),
        None, family="ctor",
    ),
    # npsummary.reader
    "reader.load": _r(reader.load, kinds=None, runs=None, tags=None, strict=False, decode=True,
                      max_image_pixels=1 << 26, workers=1, progress=None),
    "reader.iter_runs": _r(lambda **kw: list(reader.iter_runs(**kw)), kinds=None, runs=None,
                           tags=None, strict=False, decode=True, max_image_pixels=1 << 26,
                           workers=1, stats=None, progress=None),
    "reader.scalars": _r(reader.scalars, runs=None, tags=None, last_write_wins=False,
                         strict=False, workers=1),
    "reader.histograms": _r(reader.histograms, runs=None, tags=None, last_write_wins=False,
                            workers=1),
    "reader.images": _r(reader.images, runs=None, tags=None, decode=True,
                        max_image_pixels=1 << 26, workers=1),
    "reader.audio": _r(reader.audio, runs=None, tags=None, decode=True, workers=1),
    "reader.text": _r(reader.text, runs=None, tags=None, workers=1),
    "reader.hparams": _r(reader.hparams, runs=None, workers=1),
    "reader.pr_curves": _r(reader.pr_curves, runs=None, tags=None, workers=1),
    "reader.tensors": _r(reader.tensors, runs=None, tags=None, plugin=None, workers=1),
    "reader.to_pandas": _r(reader.to_pandas, kind="scalars", runs=None, tags=None, workers=1),
    "reader.to_arrow": _r(reader.to_arrow, kind="scalars", runs=None, tags=None, workers=1),
    "reader.iter_batches": _r(lambda **kw: list(reader.iter_batches(**kw)), kind="scalars",
                              runs=None, tags=None, strict=False, workers=1, rows=1000,
                              stats=None, progress=None),
    "reader.events": Call(
        lambda ctx: (lambda **kw: list(reader.events(**kw)),
                     {"path": _first_event_file(ctx.logdir), "strict": False, "stats": None}),
        None, family="reader",
    ),
    "reader.compress_histogram": _f(reader.compress_histogram, None, "reader",
                                    buckets=np.array([[0.0, 1.0, 3.0], [1.0, 2.0, 1.0]]),
                                    bps=(0, 5000, 10000)),
    "reader.decode_gif": Call(lambda ctx: (reader.decode_gif, {"data": _gif_bytes()}), None,
                              family="reader"),
    "reader.configure_fetch": _f(_configure_fetch, None, "reader", concurrency=32,
                                 max_bytes_in_flight=128 << 20, attempts=5),
}  # fmt: skip

# Parameters not fuzzed here, with the reason (each is tested where the reason says).
EXEMPT: dict[str, str] = {
    "logdir": "a path: where files go is tested in test_reliability_security.py",
    "log_dir": "a path: where files go is tested in test_reliability_security.py",
    "path": "a path: where files go is tested in test_reliability_security.py",
}
# Public callables with nothing to fuzz, or fuzzed elsewhere.
NOT_FUZZED_HERE: dict[str, str] = {
    "SummaryWriter.close": "no arguments",
    "SummaryWriter.flush": "no arguments",
    "SummaryWriter.get_logdir": "no arguments",
    "SummaryWriter.export_scalars_to_json": "its only argument is an output path",
    "SummaryWriter.add_onnx_graph": "reads an ONNX file; needs onnx (tested with it)",
    "SummaryWriter.add_openvino_graph": "reads an OpenVINO XML file (tested in its own tests)",
    "FileWriter.close": "no arguments",
    "FileWriter.flush": "no arguments",
    "FileWriter.get_logdir": "no arguments",
    "FileWriter.reopen": "no arguments",
    "npsummary.create_noop_writer": "no arguments",
    "reader.to_dask": "needs dask and a cluster: tests/reader/test_dask.py checks its options",
    "npsummary.should_record_summaries": "no arguments",
    "npsummary.trace_off": "no arguments",
    "npsummary.patch": "no arguments",
    "npsummary.unpatch": "no arguments",
    "npsummary.experimental.get_step": "no arguments",
    "reader.to_parquet": "writes a file: its path argument is tested in the CLI/export tests",
    "reader.legacy_to_buckets": "takes a HistogramProto; fuzzed in the reader's own tests",
    "reader.register_filesystem": "registers a user's filesystem; tested in test_reader_remote",
}


def _enter(manager: Any) -> None:
    with manager:
        pass


def _closed(factory: Callable[..., Any]) -> Callable[..., Any]:
    def call(**kwargs: Any) -> None:
        writer = factory(**kwargs)
        writer.close()

    return call


def _event() -> bytes:
    from npsummary.proto import Event

    return bytes(Event(wall_time=1.0, step=1).SerializeToString())


def _session_log() -> Any:
    return v1.SessionLog(status=v1.SessionLog.START)


def _gif_bytes() -> bytes:
    from npsummary._format.gif import encode_gif

    return encode_gif(np.zeros((2, 4, 4, 3), np.uint8), delay_cs=25)


def _first_event_file(logdir: Path) -> str:
    return str(next(p for p in sorted(logdir.rglob("*")) if "tfevents" in p.name))


def _parameters(name: str, call: Call, ctx: Ctx) -> list[str]:
    """The parameters of ``name`` this suite fuzzes (its valid call gives every one a value)."""
    _, kwargs = call.make(ctx)
    return [p for p in kwargs if p not in EXEMPT and p not in call.exempt]


@pytest.fixture(scope="module")
def small_logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A logdir with one of each kind, for the reader's options."""
    logdir = tmp_path_factory.mktemp("options") / "logs"
    with SummaryWriter(logdir / "run") as writer:
        writer.add_scalar("loss", 0.5, 1)
        writer.add_histogram("w", _RAMP, 1)
        writer.add_image("img", _CHW, 1)
        writer.add_audio("snd", _CLIP, 1, sample_rate=8000)
        writer.add_text("txt", "hi", 1)
        writer.add_pr_curve("pr", _LABELS, _PREDICTIONS, 1, num_thresholds=5)
        writer.add_hparams({"lr": 0.1}, {"hp/m": 1.0}, run_name=".")
    return logdir


_CASES = sorted(VALID_CALLS)


def _data(kwargs: dict[str, Any], call: Call) -> str | None:
    """The main data argument: the first one after the tag."""
    names = [k for k in kwargs if k != call.tag]
    return names[0] if names else None


def _function_name(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _names_argument(message: str, parameter: str) -> bool:
    names = (parameter, *ALIASES.get(parameter, ()))
    return any(name in message for name in names)


def check_call(ctx: Ctx, name: str, parameter: str, value: Any) -> str:
    """Call ``name`` with ``parameter=value``; check the contract; return "ok" or "error"."""
    call = VALID_CALLS[name]
    function, kwargs = call.make(ctx)
    kwargs[parameter] = value
    before = ctx.records()
    try:
        with ctx.tf2.as_default(step=0) if call.family == "tf2" else contextlib.nullcontext():
            function(**kwargs)
    except Exception as exc:
        message = str(exc)
        where = f"{name}({parameter}={value!r:.60})"
        if not isinstance(exc, (TypeError, ValueError, *call.also_raises)):
            raise AssertionError(f"{where}: {type(exc).__name__}: {exc}") from exc
        if isinstance(exc, call.also_raises) and not isinstance(exc, (TypeError, ValueError)):
            return "refused"
        assert message, f"{where}: empty message"
        if call.tag is not None and parameter != call.tag:
            assert TAG in message, f"{where}: the tag is not named: {exc!r}"
        if parameter != call.tag and not (
            call.tag is not None and parameter == _data(kwargs, call)
        ):
            # The data itself may be named by what it is ("audio must have shape ..."): the
            # tag says which call; every other argument is named as the signature spells it.
            assert _names_argument(message, parameter) or (
                call.tag is None and _function_name(name) in message
            ), f"{where}: the argument is not named: {exc!r}"
        assert ctx.records() == before, f"{where} raised {exc!r} but wrote a record"
        outcome = "error"
    else:
        outcome = "ok"
    finally:
        if call.family == "v1":
            with contextlib.suppress(ValueError, TypeError):
                v1.merge_all()
    if call.family not in ("reader", "ctor"):
        ctx.probe()
    return outcome


def test_every_public_callable_has_a_valid_call() -> None:
    def public(prefix: str, owner: Any) -> set[str]:
        names = getattr(owner, "__all__", None) or dir(owner)
        return {
            f"{prefix}.{n}"
            for n in names
            if not n.startswith("_")
            and callable(getattr(owner, n, None))
            and not (
                isinstance(getattr(owner, n), type) and issubclass(getattr(owner, n), Exception)
            )
        }

    def functions(names: set[str]) -> set[str]:
        return {n for n in names if n.rsplit(".", 1)[1][0].islower()}

    wanted = (
        public("SummaryWriter", SummaryWriter)
        | public("FileWriter", v1.FileWriter)
        | functions(public("npsummary", npsummary))
        | public("npsummary.experimental", tf2_experimental)
        | functions(public("v1", v1))
        | functions(public("reader", reader))
        | {"SummaryWriter", "v1.FileWriter"}
    ) - {"npsummary.experimental", "npsummary.v1"}
    missing = sorted(wanted - set(VALID_CALLS) - set(NOT_FUZZED_HERE))
    assert not missing, f"public callables without a valid call in VALID_CALLS: {missing}"


def test_every_parameter_is_fuzzed(small_logdir: Path) -> None:
    ctx = Ctx(small_logdir)
    for name, call in VALID_CALLS.items():
        function, kwargs = call.make(ctx)
        constructors: dict[str, Callable[..., Any]] = {
            "SummaryWriter": SummaryWriter,
            "v1.FileWriter": v1.FileWriter,
            "npsummary.create_file_writer": npsummary.create_file_writer,
        }
        target = constructors.get(name, function)
        if name.startswith("SummaryWriter."):
            target = getattr(SummaryWriter, name.split(".", 1)[1])
        elif name.startswith("FileWriter."):
            target = getattr(v1.FileWriter, name.split(".", 1)[1])
        elif name in ("npsummary.name_scope", "npsummary.record_if"):
            target = getattr(npsummary, name.split(".")[1])
        elif name == "npsummary.experimental.summary_scope":
            target = tf2_experimental.summary_scope
        elif name == "reader.events":
            target = reader.events
        elif name in ("reader.iter_runs", "reader.iter_batches"):
            target = getattr(reader, name.split(".")[1])
        parameters = [
            p
            for p in inspect.signature(target).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        missing = [
            p.name
            for p in parameters
            if p.name not in kwargs and p.name not in EXEMPT and p.name not in call.exempt
        ]
        assert not missing, f"{name}: parameters without a value in its valid call: {missing}"


@pytest.mark.parametrize("name", _CASES)
def test_valid_call_succeeds(name: str, small_logdir: Path) -> None:
    ctx = Ctx(small_logdir)
    call = VALID_CALLS[name]
    function, kwargs = call.make(ctx)
    try:
        with ctx.tf2.as_default(step=0) if call.family == "tf2" else contextlib.nullcontext():
            function(**kwargs)
    except call.also_raises:
        pass


@pytest.mark.parametrize("name", _CASES)
def test_every_option(name: str, small_logdir: Path) -> None:
    ctx = Ctx(small_logdir)
    failures: list[str] = []
    _, valid = VALID_CALLS[name].make(ctx)
    for parameter in _parameters(name, VALID_CALLS[name], ctx):
        for value in ODD_VALUES:
            # Containers are fuzzed inside too: a dict's values and keys, a list's items.
            for variant in _variants(valid[parameter], value):
                try:
                    check_call(ctx, name, parameter, variant)
                except AssertionError as failure:
                    failures.append(str(failure).splitlines()[0])
    assert not failures, f"{len(failures)} contract violations:\n" + "\n".join(failures)


def _variants(valid: Any, odd: Any) -> list[Any]:
    """``odd`` itself, and for a dict or list argument the valid container with ``odd`` in it."""
    out = [odd]
    if isinstance(valid, dict) and valid:
        key, first = next(iter(valid.items()))
        out.append({**valid, key: odd})
        with contextlib.suppress(TypeError):  # an unhashable odd value cannot be a key
            out.append({odd: first})
    elif isinstance(valid, list) and valid:
        out.append([odd, *valid[1:]])
    return out


_option_values = st.one_of(
    st.sampled_from(ODD_VALUES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(1 << 80), 1 << 80),
    st.text(max_size=12),
    st.binary(max_size=8),
    st.lists(st.one_of(st.floats(), st.integers(-5, 5), st.text(max_size=3)), max_size=4),
    st.dictionaries(st.text(max_size=4), st.one_of(st.floats(), st.text(max_size=3)), max_size=3),
)


@pytest.mark.fuzz
@pytest.mark.parametrize("name", _CASES)
def test_explore_options(name: str, small_logdir: Path) -> None:
    ctx = Ctx(small_logdir)
    parameters = _parameters(name, VALID_CALLS[name], ctx)

    @settings(
        max_examples=examples(30),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(parameter=st.sampled_from(parameters), value=_option_values)
    def run(parameter: str, value: Any) -> None:
        check_call(ctx, name, parameter, value)

    run()


# -- regressions found by the fuzzers (issue 18 and the exploration runs) -------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda w: w.add_video(TAG, _VIDEO, 1, fps=np.timedelta64(3, "s")), "fps"),
        (lambda w: w.add_pr_curve(TAG, _LABELS, _PREDICTIONS, 1, np.timedelta64(3, "s")), "num"),
        (lambda w: w.add_image_with_boxes(TAG, _CHW, _BOXES, rescale=math.inf), "rescale"),
        (lambda w: w.add_hparams({"seed": "\ud800"}, {"m": 1.0}), "hparam_dict"),
        (lambda w: w.add_hparams({"h": 1}, {"m": 1.0}, run_name="a\x00b"), "run_name"),
        (lambda w: w.add_feature_maps(TAG, _NCHW, normalize=np.array(["tile"])), "normalize"),
        (lambda w: w.add_figure(TAG, _figure(), close=np.zeros(2)), "close"),
        # found by the explore profile: a rate whose WAV byte rate overflows 32 bits
        (lambda w: w.add_audio(TAG, _CLIP, 1, sample_rate=1 << 31), "sample_rate"),
    ],
)
def test_options_refused_naming_tag_and_argument(call: Any, argument: str) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    with pytest.raises((TypeError, ValueError), match=argument):
        call(writer)
    assert sink.payloads == [] and sink.children == {}


@pytest.mark.parametrize("fps", [0.001, 5e-324, 1e300])
def test_any_positive_fps_is_written(fps: float) -> None:
    sink = MemorySink()
    SummaryWriter(sink).add_video(TAG, _VIDEO, 1, fps=fps)
    assert len(sink.payloads) == 1
