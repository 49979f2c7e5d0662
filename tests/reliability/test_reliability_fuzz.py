"""API fuzzing: every public logging function under hostile input.

Hypothesis drives each target below with random shapes and dtypes (bool, every int and float
width, complex, datetime, strings, bytes, objects), NaN and ±Inf, empty arrays, odd objects
(``__array__`` or ``__float__`` that raise or lie, ragged lists), odd tags (empty, unicode, lone
surrogates, very long, ``/``, ``..``, NUL, non-strings) and odd steps (negative, every NumPy int
type, bools, floats, beyond int64, arrays). Huge arrays (zero-copy broadcast views of 16 M
elements) are tried once per target outside Hypothesis.

Contract checked for every call:

* it returns normally, or raises ``ValueError`` or ``TypeError`` whose message names the tag
  (non-string tags: names the argument);
* a call that raised wrote nothing: the number of payloads in the ``MemorySink`` (and its
  sub-runs) is unchanged; a call that returned wrote records TensorBoard's protos parse;
* the writer stays usable: a valid call right after works and writes exactly one record.

Fast runs use ``MemorySink``; one end-to-end run drives a real ``FileSink`` (add_scalars sub-run
directories included) and reads everything back with TensorBoard's ``EventAccumulator``.

**Adding a public function is one line** in ``WRITER_TARGETS`` (``SummaryWriter`` methods),
``TF2_TARGETS`` (``npsummary.*``), ``V1_TARGETS`` (``npsummary.v1.*``) or ``FILEWRITER_TARGETS``
(``v1.FileWriter`` methods). ``test_every_public_function_is_fuzzed`` fails until it is added.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import npsummary
from _reliability_child import HEAVY, check_event_file, event_files, report
from conftest import examples
from lying import LyingArray as _LyingArray
from lying import LyingFloat as _LyingFloat
from npsummary import MemorySink, SummaryWriter, v1
from npsummary import experimental as _exp

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

EXAMPLES = 400 if HEAVY else examples(100)
COUNTS: Counter[str] = Counter()
KNOWN: Counter[str] = Counter()

pytestmark = pytest.mark.filterwarnings(
    # v1 warns when summaries pile up unmerged, and NumPy on odd casts; neither is under test.
    "ignore::RuntimeWarning",
    "ignore::numpy.exceptions.ComplexWarning" if hasattr(np, "exceptions") else "ignore::Warning",
    "ignore::DeprecationWarning",
)


# -- targets: one line per public function --------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A fuzz target. ``call(obj, tag, value, step)`` calls the public function; ``obj`` is the
    SummaryWriter / FileWriter for method targets and unused otherwise. ``tag_named``: errors
    must name the tag. ``valid`` is a value the call accepts (for the huge-array check)."""

    call: Callable[[Any, Any, Any, Any], Any]
    tag_named: bool = True
    also_raises: tuple[type[BaseException], ...] = ()  # documented refusals beyond the contract


WRITER_TARGETS: dict[str, T] = {
    "add_scalar": T(lambda w, t, v, s: w.add_scalar(t, v, s)),
    "add_scalar(walltime)": T(lambda w, t, v, s: w.add_scalar(t, 1.0, s, walltime=v)),
    "add_scalars": T(lambda w, t, v, s: w.add_scalars(t, {"a": v, "b/c": 1.0}, s)),
    "add_scalars(keys)": T(lambda w, t, v, s: w.add_scalars("main", {t: v}, s), tag_named=False),
    "set_step": T(lambda w, t, v, s: w.set_step(s), tag_named=False),
    "add_histogram": T(lambda w, t, v, s: w.add_histogram(t, v, s)),
    "add_histogram(bins)": T(lambda w, t, v, s: w.add_histogram(t, _RAMP, s, bins=v)),
    "add_histogram(max_bins)": T(lambda w, t, v, s: w.add_histogram(t, _RAMP, s, max_bins=v)),
    "add_histogram(nonfinite)": T(lambda w, t, v, s: w.add_histogram(t, _NAN, s, nonfinite=v)),
    "add_histogram_raw": T(lambda w, t, v, s: w.add_histogram_raw(t, v, v, v, v, v, v, v, s)),
    "add_histogram_raw(buckets)": T(
        lambda w, t, v, s: w.add_histogram_raw(t, 0, 1, 2, 1, 1, v, v, s)
    ),
    "add_distribution": T(lambda w, t, v, s: w.add_distribution(t, v, s)),
    "add_distribution(buckets)": T(lambda w, t, v, s: w.add_distribution(t, _RAMP, s, buckets=v)),
    "add_variable_summaries": T(lambda w, t, v, s: w.add_variable_summaries(t, v, s)),
    "add_image": T(lambda w, t, v, s: w.add_image(t, v, s)),
    "add_image(HWC)": T(lambda w, t, v, s: w.add_image(t, v, s, dataformats="HWC")),
    "add_image(dataformats)": T(lambda w, t, v, s: w.add_image(t, _CHW, s, dataformats=v)),
    "add_images": T(lambda w, t, v, s: w.add_images(t, v, s)),
    "add_images(NHWC)": T(lambda w, t, v, s: w.add_images(t, v, s, dataformats="NHWC")),
    "add_images(ncols)": T(lambda w, t, v, s: w.add_images(t, _NCHW, s, ncols=v)),
    "add_images(padding)": T(lambda w, t, v, s: w.add_images(t, _NCHW, s, padding=v)),
    "add_figure": T(lambda w, t, v, s: w.add_figure(t, v, s)),
    "add_filters": T(lambda w, t, v, s: w.add_filters(t, v, s)),
    "add_filters(layout)": T(lambda w, t, v, s: w.add_filters(t, _NCHW, s, layout=v)),
    "add_feature_maps": T(lambda w, t, v, s: w.add_feature_maps(t, v, s)),
    "add_feature_maps(sample)": T(lambda w, t, v, s: w.add_feature_maps(t, _NCHW, s, sample=v)),
    "add_text": T(lambda w, t, v, s: w.add_text(t, v, s)),
    "add_audio": T(lambda w, t, v, s: w.add_audio(t, v, s)),
    "add_audio(sample_rate)": T(lambda w, t, v, s: w.add_audio(t, _CLIP, s, sample_rate=v)),
    "add_scalar(new_style)": T(lambda w, t, v, s: w.add_scalar(t, v, s, new_style=True)),
    "add_scalar(double_precision)": T(
        lambda w, t, v, s: w.add_scalar(t, 1.0, s, new_style=True, double_precision=v)
    ),
    "add_scalar(display_name)": T(lambda w, t, v, s: w.add_scalar(t, 1.0, s, None, v)),
    "add_graph": T(lambda w, t, v, s: w.add_graph(v), tag_named=False),
    "add_onnx_graph": T(
        lambda w, t, v, s: w.add_onnx_graph(v), tag_named=False, also_raises=(ImportError,)
    ),
    "add_openvino_graph": T(lambda w, t, v, s: w.add_openvino_graph(v), tag_named=False),
    "use_metadata": T(lambda w, t, v, s: _in_metadata(w, t, v), tag_named=False),
    "add_hparams": T(lambda w, t, v, s: w.add_hparams({"h": v}, {"m": 1.0}, None, "hp", s), False),
    "add_hparams(keys)": T(lambda w, t, v, s: w.add_hparams({t: 0.1}, {t: v}, run_name="."), False),
    "add_hparams(run_name)": T(
        lambda w, t, v, s: w.add_hparams({"h": 1}, {"m": 1}, None, v), False
    ),
    "add_pr_curve": T(lambda w, t, v, s: w.add_pr_curve(t, _LABELS, v, s)),
    "add_pr_curve(labels)": T(lambda w, t, v, s: w.add_pr_curve(t, v, _PREDICTIONS, s)),
    "add_pr_curve(options)": T(
        lambda w, t, v, s: w.add_pr_curve(t, _LABELS, _PREDICTIONS, s, num_thresholds=v, weights=v)
    ),
    "add_pr_curve_raw": T(lambda w, t, v, s: w.add_pr_curve_raw(t, v, v, v, v, v, v, s)),
    "add_custom_scalars": T(lambda w, t, v, s: w.add_custom_scalars({t: {"c": v}}), False),
    "add_custom_scalars_multilinechart": T(
        lambda w, t, v, s: w.add_custom_scalars_multilinechart(v, t), tag_named=False
    ),
    "add_custom_scalars_marginchart": T(
        lambda w, t, v, s: w.add_custom_scalars_marginchart(v, title=t), tag_named=False
    ),
    "add_embedding": T(lambda w, t, v, s: w.add_embedding(v, global_step=s, tag=t)),
    "add_embedding(metadata)": T(lambda w, t, v, s: w.add_embedding(_MAT, v, v, s, t, v)),
    "add_video": T(lambda w, t, v, s: w.add_video(t, v, s)),
    "add_video(options)": T(lambda w, t, v, s: w.add_video(t, _VIDEO, s, fps=v, dataformats=v)),
    "add_image_with_boxes": T(lambda w, t, v, s: w.add_image_with_boxes(t, _CHW, v, s)),
    "add_image_with_boxes(img)": T(
        lambda w, t, v, s: w.add_image_with_boxes(t, v, _BOXES, s, labels=["a"])
    ),
    "add_image_with_boxes(options)": T(
        lambda w, t, v, s: w.add_image_with_boxes(t, _CHW, _BOXES, s, None, v, v, v)
    ),
    "add_mesh": T(lambda w, t, v, s: w.add_mesh(t, v, global_step=s)),
    "add_mesh(parts)": T(lambda w, t, v, s: w.add_mesh(t, _VERTICES, v, v, v, s)),
    "add_tensor": T(lambda w, t, v, s: w.add_tensor(t, v, s)),
}


def _in_metadata(writer: Any, tag: Any, step: Any) -> None:
    with writer.use_metadata(global_step=step):
        writer.add_scalar("in_metadata", 1.0)


TF2_TARGETS: dict[str, T] = {
    "scalar": T(lambda _, t, v, s: npsummary.scalar(t, v, step=s)),
    "text": T(lambda _, t, v, s: npsummary.text(t, v, step=s)),
    "audio": T(lambda _, t, v, s: npsummary.audio(t, v, 8000, step=s)),
    "audio(sample_rate)": T(lambda _, t, v, s: npsummary.audio(t, np.zeros((1, 4, 1)), v, step=s)),
    "write": T(lambda _, t, v, s: npsummary.write(t, v, step=s)),
    "histogram": T(lambda _, t, v, s: npsummary.histogram(t, v, step=s)),
    "histogram(buckets)": T(lambda _, t, v, s: npsummary.histogram(t, _RAMP, step=s, buckets=v)),
    "distribution(buckets)": T(
        lambda _, t, v, s: npsummary.distribution(t, _RAMP, step=s, buckets=v)
    ),
    "distribution": T(lambda _, t, v, s: npsummary.distribution(t, v, step=s)),
    "image": T(lambda _, t, v, s: npsummary.image(t, v, step=s)),
    "image(max_outputs)": T(lambda _, t, v, s: npsummary.image(t, _NHWC, step=s, max_outputs=v)),
    # Documented: no TensorFlow graph exists, so graph() and trace_export() always refuse.
    "graph": T(lambda _, t, v, s: npsummary.graph(v), False, (NotImplementedError,)),
    "name_scope": T(lambda _, t, v, s: _enter(npsummary.name_scope(t))),
    "record_if": T(lambda _, t, v, s: _enter(npsummary.record_if(v)), tag_named=False),
    "trace_export": T(
        lambda _, t, v, s: npsummary.trace_export(t, step=s), True, (NotImplementedError,)
    ),
    "experimental.set_step": T(lambda _, t, v, s: npsummary.experimental.set_step(s), False),
    "experimental.summary_scope": T(lambda _, t, v, s: _enter(_exp.summary_scope(t))),
    "experimental.write_raw_pb": T(lambda _, t, v, s: _exp.write_raw_pb(v, step=s), False),
}

V1_TARGETS: dict[str, T] = {
    "scalar": T(lambda _, t, v, s: v1.scalar(t, v)),
    "histogram": T(lambda _, t, v, s: v1.histogram(t, v)),
    "image": T(lambda _, t, v, s: v1.image(t, v)),
    "audio": T(lambda _, t, v, s: v1.audio(t, v, 8000)),
    "text": T(lambda _, t, v, s: v1.text(t, v)),
    "tensor_summary": T(lambda _, t, v, s: v1.tensor_summary(t, v)),
    "clean_tag": T(lambda _, t, v, s: v1.clean_tag(t)),
    "merge": T(lambda _, t, v, s: v1.merge(v), tag_named=False),
    "merge_all": T(lambda _, t, v, s: v1.merge_all(t), tag_named=False),
}

FILEWRITER_TARGETS: dict[str, T] = {
    "add_summary": T(lambda fw, t, v, s: fw.add_summary(v, s), tag_named=False),
    "add_summary(v1.scalar)": T(lambda fw, t, v, s: fw.add_summary(v1.scalar("x", v), s), False),
    "add_event": T(lambda fw, t, v, s: fw.add_event(v), tag_named=False),
    "add_session_log": T(lambda fw, t, v, s: fw.add_session_log(v, s), tag_named=False),
    "add_graph": T(lambda fw, t, v, s: fw.add_graph(v, s), tag_named=False),
    "add_meta_graph": T(lambda fw, t, v, s: fw.add_meta_graph(v, s), tag_named=False),
    "add_run_metadata": T(lambda fw, t, v, s: fw.add_run_metadata(v, t, s), tag_named=False),
}

# Public callables that take no data to fuzz (constructors are fuzzed in their own tests).
NOT_DATA = {
    "npsummary": {
        "create_file_writer", "create_noop_writer", "flush", "should_record_summaries",
        "trace_on", "trace_off", "EventSink", "EventWriteError", "FileSink", "MemorySink",
        "NoopSummaryWriter", "SummaryFileWriter", "SummaryWriter", "NonFiniteWarning",
        "BinCountCappedWarning", "SegmentSink", "patch", "unpatch",
        # constructors whose methods are SummaryWriter's (fuzzed there) with steps counted
        # (GlobalSummaryWriter) or tags cleaned (TensorboardXSummaryWriter)
        "TensorboardXSummaryWriter", "GlobalSummaryWriter",
    },
    "v1": {"FileWriter", "Event", "SessionLog", "Summary", "TaggedRunMetadata",
           "SummaryDescription", "get_summary_description"},  # tagless: fuzzed in test_v1_arguments
    "SummaryWriter": {"close", "flush", "get_logdir", "sink", "export_scalars_to_json"},
    "FileWriter": {"close", "flush", "get_logdir", "reopen"},
}  # fmt: skip


# Reported bugs in modules this suite does not own (see RELIABILITY.md, "Open issues"). A
# contract violation matching one is counted, not raised, so that the fuzzer stays strict about
# everything else. Each has a strict-xfail regression test at the end of this file: when the bug
# is fixed, that test XPASSes and fails, and both it and the entry here must go.
# Predicates get (family, target name, tag, value, exception or None, what was violated).
KNOWN_ISSUES: dict[str, Callable[[str, str, Any, Any, Any, str], bool]] = {
    # None open: the last three were fixed in 3b3c45b (see the test_fixed_* tests).
}


def known(family: str, name: str, tag: Any, value: Any, exc: Any, what: str) -> None:
    """Count a contract violation that matches a known issue; fail on any other."""
    for issue, matches in KNOWN_ISSUES.items():
        if matches(family, name, tag, value, exc, what):
            KNOWN[issue] += 1
            return
    raise AssertionError(f"{family}.{name}: {what}: {exc!r} (tag={tag!r}, value={value!r})") from (
        exc if isinstance(exc, BaseException) else None
    )


def assert_names_tag(family: str, name: str, tag: Any, value: Any, exc: BaseException) -> None:
    if not _names_tag(tag, str(exc), family):
        known(family, name, tag, value, exc, "tag not named")


_RAMP: np.ndarray = np.linspace(-1.0, 1.0, 11)
_CHW: np.ndarray = np.zeros((3, 4, 5), np.uint8)
_CLIP: np.ndarray = np.zeros(16, np.float32)
_NCHW: np.ndarray = np.zeros((2, 3, 4, 5), np.float32)
_NHWC: np.ndarray = np.zeros((2, 4, 5, 3), np.float32)
_NAN: np.ndarray = np.array([1.0, np.nan, np.inf])
_LABELS: np.ndarray = np.array([0, 1, 1, 0])
_PREDICTIONS: np.ndarray = np.array([0.1, 0.8, 0.4, 0.5])
_MAT: np.ndarray = np.zeros((2, 3))
_VIDEO: np.ndarray = np.zeros((1, 2, 3, 4, 4), np.uint8)
_BOXES: np.ndarray = np.array([[0.0, 0.0, 2.0, 3.0]])
_VERTICES: np.ndarray = np.zeros((1, 4, 3), np.float32)


def _enter(cm: Any) -> None:
    with cm:
        pass


# -- strategies -----------------------------------------------------------------------------------

_DTYPES: list[DTypeLike] = [
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128,
    np.dtype("U3"), np.dtype("S3"), np.dtype("M8[s]"), np.dtype("m8[ms]"),
    np.dtype(">f8"), np.dtype(">i4"), np.longdouble,
]  # fmt: skip
try:  # extension floats (JAX's, torch bfloat16's through NumPy): accepted wherever floats are
    import ml_dtypes

    _EXTENSION = [np.dtype(ml_dtypes.bfloat16), np.dtype(ml_dtypes.float8_e4m3fn)]
except ImportError:  # pragma: no cover - a test extra
    _EXTENSION = []

arrays = hnp.arrays(
    dtype=st.sampled_from(_DTYPES),
    shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6),
)
image_like = hnp.arrays(
    dtype=st.sampled_from([np.uint8, np.float32, np.float64, np.int64, np.bool_]),
    shape=st.sampled_from([(4, 5, 3), (2, 4, 5, 1), (3, 4, 5), (4, 5), (1, 4, 5, 4), (0, 4, 4, 3)]),
)


class _Index:
    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


odd_objects = st.sampled_from(
    [
        None, "text", b"bytes", 1 + 2j, [1.0, [2.0, 3.0]], [[1.0], [2.0, 3.0]], (), {}, {"a": 1},
        object(), _LyingArray(RuntimeError("no")), _LyingArray("not an array"),
        _LyingArray(np.ones((2, 2))), _LyingFloat(ValueError("no")), _LyingFloat("3"),
        _LyingFloat(float("nan")), np.array([None, "x", 1.0], dtype=object), np.float64("nan"),
        np.ones((1, 1, 1)), np.array(2.5), np.ma.masked_array([1.0, 2.0], mask=[True, False]),
        np.zeros((3, 0)), np.arange(6).reshape(2, 3)[:, ::2], np.frombuffer(b"\x00" * 8, ">f4"),
        _LyingFloat(RuntimeError("no")), _LyingArray(LookupError("no")),
    ]
)  # fmt: skip
values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(1 << 80), 1 << 80),
    st.booleans(),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 3.4e38, 1e308, 5e-324]),
    # NumPy scalars of every kind and array subclasses get the treatment plain arrays get.
    st.sampled_from(
        [np.timedelta64(3, "s"), np.datetime64(3, "s"), np.longdouble(2.5), np.float16(0.5)]
        + [dt.type(1.5) for dt in _EXTENSION]
    ),
    st.builds(lambda a: np.ma.masked_array(a, mask=np.zeros(a.shape, bool)), arrays),
    st.builds(
        lambda a, dt: a.astype(dt),  # hypothesis cannot draw extension dtypes itself
        hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)),
        st.sampled_from(_EXTENSION or [np.dtype(np.float32)]),
    ),
    arrays,
    image_like,
    odd_objects,
    st.text(max_size=20),
    st.binary(max_size=20),
    st.lists(st.floats(), max_size=5),
)

_LONG = "x" * 5000
odd_tags = st.one_of(
    st.text(st.characters(codec=None, exclude_categories=()), max_size=30),
    st.sampled_from(
        [
            "", "/", "a/b", "a//b/", "..", "../..", "../../../etc/passwd", "/abs/path", "C:\\x",
            "a\\b", "nul\x00byte", _LONG, "é/ü/日本/🎉", "\ud800", "tab\there", " ", "a" * 255,
        ]
    ),
    st.sampled_from([None, 1, 2.5, b"bytes", np.str_("numpy_str"), ("t",), object()]),
)  # fmt: skip
_INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
odd_steps = st.one_of(
    st.none(),
    st.integers(-(1 << 70), 1 << 70),
    st.sampled_from([(1 << 63) - 1, 1 << 63, -(1 << 63), -(1 << 63) - 1, -1, 0]),
    st.builds(lambda t, i: t(i), st.sampled_from(_INT_TYPES), st.integers(0, 127)),
    st.sampled_from([np.uint64((1 << 64) - 1), np.int64(-(1 << 63)), _Index(5), _Index(1 << 70)]),
    st.booleans(),
    st.sampled_from([np.bool_(True), 1.0, 2.5, math.nan, math.inf, "3", b"3", [1], ()]),
    st.sampled_from([np.array(4), np.array(4.0), np.array([4]), np.array([], dtype=np.int64)]),
)  # fmt: skip


# -- the contract ---------------------------------------------------------------------------------


def _snapshot(sink: MemorySink) -> tuple[Any, ...]:
    return (len(sink.payloads), *((n, _snapshot(c)) for n, c in sorted(sink.children.items())))


def _records_only(snapshot: Any) -> int:
    """Total payload count in a snapshot (sub-runs created without records do not count)."""
    if isinstance(snapshot, int):
        return snapshot
    return sum(_records_only(part) for part in snapshot if not isinstance(part, str))


def _all_payloads(sink: MemorySink) -> list[bytes]:
    out = list(sink.payloads)
    for child in sink.children.values():
        out.extend(_all_payloads(child))
    return out


def _names_tag(tag: Any, message: str, family: str = "") -> bool:
    if isinstance(tag, str):
        if family == "v1":  # TF1 semantics: the tag written (and named) is the cleaned one
            with contextlib.suppress(ValueError, TypeError):
                tag = v1.clean_tag(tag)
        shown = repr(tag)[1:-1]
        return tag in message or shown in message or shown[:60] in message
    lowered = message.lower()
    return "tag" in lowered or "name" in lowered


@dataclass
class Ctx:
    """Writers under test, all over MemorySinks."""

    writer: SummaryWriter
    writer_sink: MemorySink
    tf2: Any
    tf2_sink: MemorySink
    filewriter: Any
    fw_sink: MemorySink

    @classmethod
    def make(cls) -> Ctx:
        wsink, tsink, fsink = MemorySink(), MemorySink(), MemorySink()
        return cls(
            SummaryWriter(wsink), wsink, npsummary.create_file_writer(tsink), tsink,
            v1.FileWriter(fsink), fsink,
        )  # fmt: skip

    def sinks(self) -> tuple[Any, ...]:
        return tuple(_snapshot(s) for s in (self.writer_sink, self.tf2_sink, self.fw_sink))

    def payloads(self) -> list[bytes]:
        return [
            p for s in (self.writer_sink, self.tf2_sink, self.fw_sink) for p in _all_payloads(s)
        ]

    def probe(self) -> None:
        """The writers stay usable: one valid call each writes exactly one record."""
        before = [len(s.payloads) for s in (self.writer_sink, self.tf2_sink, self.fw_sink)]
        self.writer.add_scalar("probe", 1.0, 0)
        with self.tf2.as_default(step=0):
            assert npsummary.scalar("probe", 1.0)
        self.filewriter.add_summary(v1.scalar("probe", 1.0), 0)
        v1.merge_all()
        after = [len(s.payloads) for s in (self.writer_sink, self.tf2_sink, self.fw_sink)]
        assert after == [b + 1 for b in before], "the writer is not usable after that call"


def check_call(ctx: Ctx, family: str, name: str, target: T, tag: Any, value: Any, step: Any) -> str:
    """Call ``target`` once; assert the contract; return "ok" or "error"."""
    from tensorboard.compat.proto import event_pb2, summary_pb2

    obj = {"writer": ctx.writer, "filewriter": ctx.filewriter}.get(family)
    before = ctx.sinks()
    n_before = len(ctx.payloads())
    outcome = "ok"
    try:
        with ctx.tf2.as_default(step=0) if family == "tf2" else contextlib.nullcontext():
            result = target.call(obj, tag, value, step)
    except Exception as exc:
        outcome = "error"
        if not isinstance(exc, (ValueError, TypeError, *target.also_raises)):
            known(family, name, tag, value, exc, "exception type")
        assert str(exc), f"{family}.{name}: empty error message"
        if target.tag_named and not isinstance(exc, target.also_raises):
            assert_names_tag(family, name, tag, value, exc)
        after = ctx.sinks()
        if after != before:
            assert _records_only(after) == _records_only(before), (
                f"{family}.{name} raised {exc!r} but wrote a record"
            )
            known(family, name, tag, value, exc, "empty sub-run")
    else:
        for payload in ctx.payloads()[n_before:]:
            try:
                event = event_pb2.Event.FromString(payload)
            except Exception:
                known(family, name, tag, value, None, "unparseable record")
                continue
            assert math.isfinite(event.wall_time)
        if family == "v1" and isinstance(result, bytes):
            summary_pb2.Summary.FromString(result)
    finally:
        if family == "v1":
            with contextlib.suppress(ValueError, TypeError):
                v1.merge_all()
    ctx.probe()
    COUNTS[f"{family}.{name}.{outcome}"] += 1
    return outcome


FAMILIES = {
    "writer": WRITER_TARGETS,
    "tf2": TF2_TARGETS,
    "v1": V1_TARGETS,
    "filewriter": FILEWRITER_TARGETS,
}
ALL = [(family, name) for family, targets in FAMILIES.items() for name in targets]


@pytest.mark.fuzz
@pytest.mark.parametrize(("family", "name"), ALL, ids=[f"{f}.{n}" for f, n in ALL])
def test_fuzz(family: str, name: str) -> None:
    target = FAMILIES[family][name]
    ctx = Ctx.make()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(tag=odd_tags, value=values, step=odd_steps)
    def run(tag: Any, value: Any, step: Any) -> None:
        check_call(ctx, family, name, target, tag, value, step)

    run()


@pytest.mark.parametrize(("family", "name"), ALL, ids=[f"{f}.{n}" for f, n in ALL])
def test_huge_and_empty_arrays(family: str, name: str) -> None:
    # Zero-copy views: 16 M elements (64 MB if copied as float32) without allocating them here.
    ctx = Ctx.make()
    target = FAMILIES[family][name]
    for value in (
        np.broadcast_to(np.float32(1.5), (1 << 24,)),
        np.broadcast_to(np.float64(np.nan), (1 << 12, 1 << 12)),
        np.broadcast_to(np.uint8(7), (2, 1 << 11, 1 << 11, 3)),
        np.empty((0,), np.float32),
        np.empty((0, 5, 5, 3), np.uint8),
    ):
        check_call(ctx, family, name, target, "huge", value, 1)


def test_nan_and_inf_are_logged_not_refused() -> None:
    # ANCHORS §4 #6: NaN must never kill a training run. Scalars store it as is.
    ctx = Ctx.make()
    for value in (math.nan, math.inf, -math.inf, np.float32("nan"), np.array([np.inf])):
        for family, name in (
            ("writer", "add_scalar"),
            ("writer", "add_scalars"),
            ("tf2", "scalar"),
        ):
            assert check_call(ctx, family, name, FAMILIES[family][name], "x", value, 1) == "ok"


def test_every_public_function_is_fuzzed() -> None:
    def public(obj: Any) -> set[str]:
        names = getattr(obj, "__all__", None) or dir(obj)
        return {n for n in names if not n.startswith("_") and callable(getattr(obj, n, None))}

    def covered(targets: dict[str, T]) -> set[str]:
        return {name.split("(")[0] for name in targets}

    missing = {
        "SummaryWriter": public(SummaryWriter)
        - covered(WRITER_TARGETS)
        - NOT_DATA["SummaryWriter"],
        "npsummary": public(npsummary)
        - covered(TF2_TARGETS)
        - NOT_DATA["npsummary"]
        - {"experimental", "v1"},
        "npsummary.experimental": {
            f"experimental.{n}" for n in public(npsummary.experimental) if n != "get_step"
        }
        - covered(TF2_TARGETS),
        "npsummary.v1": public(v1) - covered(V1_TARGETS) - NOT_DATA["v1"],
        "v1.FileWriter": public(v1.FileWriter)
        - covered(FILEWRITER_TARGETS)
        - NOT_DATA["FileWriter"],
    }
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, (
        f"public functions not fuzzed: {missing}; add one line per function to the target tables "
        "in tests/reliability/test_reliability_fuzz.py"
    )


# -- constructors ---------------------------------------------------------------------------------

odd_options = st.one_of(
    st.none(), st.integers(-5, 100), st.sampled_from([0, 1 << 70, -(1 << 70)]), st.floats(),
    st.booleans(), st.text(max_size=5), st.sampled_from(["../x", "a/b", "\x00", b"x", [1], 1.5]),
)  # fmt: skip


@pytest.mark.fuzz
def test_fuzz_constructor_arguments(tmp_path: Path) -> None:
    made: list[object] = []

    @settings(max_examples=EXAMPLES, deadline=None)
    @given(
        which=st.sampled_from(["create_file_writer", "SummaryWriter", "FileWriter"]),
        a=odd_options,
        b=odd_options,
        c=odd_options,
    )
    def run(which: str, a: Any, b: Any, c: Any) -> None:
        logdir = tmp_path / f"w{len(made)}"
        before = set(os.listdir(tmp_path))
        w: npsummary.SummaryFileWriter | SummaryWriter | v1.FileWriter
        try:
            if which == "create_file_writer":
                w = npsummary.create_file_writer(
                    logdir, max_queue=a, flush_millis=b, filename_suffix=c
                )
            elif which == "SummaryWriter":
                w = SummaryWriter(logdir, max_queue=a, flush_secs=b, filename_suffix=c)
            else:
                w = v1.FileWriter(logdir, max_queue=a, flush_secs=b, filename_suffix=c)
        except (AttributeError, OverflowError) as exc:
            known("ctor", which, None, (a, b, c), exc, "exception type")
            return
        except (ValueError, TypeError) as exc:
            COUNTS[f"ctor.{which}.error"] += 1
            assert str(exc)
            # A refused constructor leaves no file behind (an empty directory is allowed).
            assert not [p for p in event_files(str(tmp_path)) if str(logdir) in p]
            return
        COUNTS[f"ctor.{which}.ok"] += 1
        made.append(w)
        # Whatever it accepted, the file stays inside the logdir.
        assert set(os.listdir(tmp_path)) - before <= {logdir.name}
        w.close()

    run()
    for path in event_files(str(tmp_path)):
        check_event_file(path)


# -- end to end with real files -------------------------------------------------------------------


@pytest.mark.fuzz
def test_end_to_end_file_sink_read_by_tensorboard(tmp_path: Path) -> None:
    """A sample of fuzz inputs against real files; TensorBoard then loads every run."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    logdir = tmp_path / "run"
    writer = SummaryWriter(logdir, max_queue=5)
    tf2 = npsummary.create_file_writer(tmp_path / "tf2")
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES * 2,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        name=st.sampled_from(
            [
                "add_scalar",
                "add_scalars",
                "add_histogram",
                "add_image(HWC)",
                "add_images",
                "scalar",
                "text",
                "write",
                "histogram",
                "image",
            ]
        ),
        tag=odd_tags,
        value=values,
        step=odd_steps,
    )
    def run(name: str, tag: Any, value: Any, step: Any) -> None:
        target = WRITER_TARGETS.get(name) or TF2_TARGETS[name]
        if isinstance(tag, str):
            # One tag per summary kind: TensorBoard types a tag by its first value (#29).
            tag = f"{name}/{tag}"
        try:
            if name in WRITER_TARGETS:
                target.call(writer, tag, value, step)
            else:
                with tf2.as_default(step=0):
                    target.call(None, tag, value, step)
            outcomes["ok"] += 1
        except Exception as exc:
            outcomes["error"] += 1
            family = "writer" if name in WRITER_TARGETS else "tf2"
            if not isinstance(exc, (ValueError, TypeError)):
                known(family, name, tag, value, exc, "exception type")
            if target.tag_named:
                assert_names_tag(family, name, tag, value, exc)
        writer.add_scalar("probe", 1.0, 0)

    run()
    writer.close()
    tf2.close()
    files = event_files(str(tmp_path))
    for path in files:
        check_event_file(path)
    # Every run TensorBoard finds loads, and every tensor it serves decodes.
    runs = sorted({os.path.dirname(p) for p in files})
    for run_dir in runs:
        acc = pea.EventAccumulator(run_dir, size_guidance=pea.STORE_EVERYTHING_SIZE_GUIDANCE)
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            md = acc.summary_metadata.get(tag)
            plugin = md.plugin_data.plugin_name if md is not None else ""
            for event in acc.Tensors(tag):
                try:
                    tensor_util.make_ndarray(event.tensor_proto)
                except TypeError:
                    # A plugin-less write() of e.g. uint32 is stored as TF stores it; TensorBoard's
                    # tensor_util cannot decode those dtypes, and no dashboard shows them anyway.
                    if plugin:
                        raise
    # Sub-runs never leave the logdir.
    for path in files:
        real = os.path.realpath(path)
        assert real.startswith(os.path.realpath(tmp_path) + os.sep)
    COUNTS["end_to_end.ok"] += outcomes["ok"]
    COUNTS["end_to_end.error"] += outcomes["error"]
    report("fuzz.end_to_end", calls=sum(outcomes.values()), runs_loaded=len(runs), files=len(files))


@pytest.fixture(scope="module", autouse=True)
def _report_counts() -> Iterator[None]:
    yield
    per_target: Counter[str] = Counter()
    for key, n in COUNTS.items():
        per_target[key.rsplit(".", 1)[0]] += n
    report(
        "fuzz.api",
        known_issue_hits=dict(KNOWN),
        examples_per_target=dict(per_target),
        total_calls=sum(COUNTS.values()),
        refused=sum(n for k, n in COUNTS.items() if k.endswith(".error")),
        accepted=sum(n for k, n in COUNTS.items() if k.endswith(".ok")),
    )


# -- regression tests for the issues this fuzzer found --------------------------------------------
# test_fixed_*: found by the fuzzer and fixed (f31ef65 and the _events/_record commits); they keep
# the contract. test_issue_*: still open, strict xfail; when one is fixed it XPASSes, which fails
# the suite: rename it to test_fixed_*, drop the marker and its KNOWN_ISSUES entry.


def _tf2_writer() -> Any:
    return npsummary.create_file_writer(MemorySink())


def _issue(key: str) -> Any:
    assert key in KNOWN_ISSUES, key
    return pytest.mark.xfail(strict=True, reason=f"known issue: {key}")


def test_fixed_tf2_step_error_names_the_tag() -> None:
    with _tf2_writer().as_default(step=0), pytest.raises(TypeError, match="my_tag"):
        npsummary.scalar("my_tag", 1.0, step=2.5)  # type: ignore[arg-type]


def test_fixed_audio_sample_rate_error_names_the_tag() -> None:
    with pytest.raises(ValueError, match="my_tag"):
        SummaryWriter(MemorySink()).add_audio("my_tag", _CLIP, 0, sample_rate=1 << 40)


def test_fixed_failing_array_conversion_is_a_type_error() -> None:
    with _tf2_writer().as_default(step=0), pytest.raises(TypeError, match="my_tag"):
        npsummary.text("my_tag", _LyingArray(RuntimeError("boom")))


def test_fixed_clean_tag_names_its_argument() -> None:
    with pytest.raises(TypeError, match="name"):
        v1.clean_tag(None)  # type: ignore[arg-type]


def test_fixed_add_summary_refuses_garbage_with_value_error() -> None:
    with pytest.raises(ValueError):
        v1.FileWriter(MemorySink()).add_summary(b"\x00", 1)


def test_fixed_add_event_refuses_bytes_that_are_not_an_event() -> None:
    sink = MemorySink()
    writer = v1.FileWriter(sink)
    before = len(sink.payloads)
    with pytest.raises((ValueError, TypeError)):
        writer.add_event(b"\xff\xff")
    assert len(sink.payloads) == before


def test_fixed_refused_add_scalars_creates_no_sub_run() -> None:
    sink = MemorySink()
    with pytest.raises(ValueError):
        SummaryWriter(sink).add_scalars("bad\ud800", {"a": 1.0}, 0)
    assert sink.children == {}


def test_fixed_unsupported_dtype_error_names_the_tag() -> None:
    with _tf2_writer().as_default(step=0), pytest.raises(TypeError, match="my_tag"):
        npsummary.write("my_tag", np.array([0], dtype="M8[s]"))


def test_fixed_empty_image_error_names_the_tag() -> None:
    with pytest.raises(ValueError, match="my_tag"):
        v1.image("my_tag", np.zeros((1, 0, 0, 1), np.uint8))


def test_fixed_make_grid_errors_name_the_tag() -> None:
    with pytest.raises(ValueError, match="my_tag"):
        SummaryWriter(MemorySink()).add_images("my_tag", _NCHW, 0, ncols=0)


def test_fixed_add_images_ncols_none_names_the_tag() -> None:
    with pytest.raises((TypeError, ValueError), match="my_tag"):
        SummaryWriter(MemorySink()).add_images("my_tag", _NCHW, 0, ncols=None)  # type: ignore[arg-type]


def test_fixed_add_images_empty_sequence_error_names_the_tag() -> None:
    with pytest.raises(ValueError, match="my_tag"):
        SummaryWriter(MemorySink()).add_images("my_tag", (), 0)


def test_fixed_add_figure_refuses_a_non_figure_with_type_error() -> None:
    with pytest.raises(TypeError, match="my_tag"):
        SummaryWriter(MemorySink()).add_figure("my_tag", 1.0, 0)


def test_fixed_add_feature_maps_validates_sample() -> None:
    with pytest.raises((TypeError, ValueError), match="my_tag"):
        SummaryWriter(MemorySink()).add_feature_maps("my_tag", _NCHW, 0, sample=0.5)  # type: ignore[arg-type]


def test_fixed_create_file_writer_checks_suffix_type(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        npsummary.create_file_writer(tmp_path, filename_suffix=5)  # type: ignore[arg-type]


def test_fixed_create_file_writer_checks_max_queue(tmp_path: Path) -> None:
    with pytest.raises((TypeError, ValueError)):
        npsummary.create_file_writer(tmp_path, max_queue=math.inf)  # type: ignore[arg-type]


def test_fixed_unencodable_tag_error_names_the_tag() -> None:
    with pytest.raises(ValueError, match="bad_tag"):
        SummaryWriter(MemorySink()).add_scalar("bad_tag\ud800", 1.0, 0)


def test_fixed_absurd_bucket_count_is_refused_up_front() -> None:
    # Before the fix, any count up to int32 was allocated: 1e9 buckets got the process
    # OOM-killed. Now counts too large to be useful are refused before any allocation.
    with pytest.raises(ValueError, match="my_tag"):
        SummaryWriter(MemorySink()).add_distribution("my_tag", _RAMP, 0, buckets=1 << 22)


def test_fixed_add_scalars_with_a_long_tag_works_on_disk(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path / "run") as w:
        w.add_scalars("x" * 300, {"a": 1.0}, 0)
    (sub,) = [p for p in event_files(str(tmp_path / "run")) if os.sep + "x" in p]
    assert os.path.realpath(sub).startswith(os.path.realpath(tmp_path / "run") + os.sep)


def test_every_known_issue_has_a_regression_test() -> None:
    tests = [obj for name, obj in globals().items() if name.startswith("test_issue_")]
    reasons = " ".join(
        mark.kwargs.get("reason", "")
        for test in tests
        for mark in getattr(test, "pytestmark", [])
        if mark.name == "xfail"
    )
    for issue in KNOWN_ISSUES:
        assert f"known issue: {issue}" in reasons, f"no regression test for known issue {issue!r}"
