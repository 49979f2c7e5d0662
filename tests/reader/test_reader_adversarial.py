"""The reader and the CLI against every record a writer produces, and corrupt variants of each.

Sources: the golden files of tensorboardX, torch, TF1 and TF2 (tests/golden/reader,
tests/conformance/golden) and files npsummary writes here with both APIs, every kind, several
shapes and dtypes. Variants keep valid TFRecord framing (the CRCs are recomputed), so the damage
reaches the protobuf parser and every plugin's decoder: payloads cut short, bits flipped, bytes
zeroed, payloads spliced. Promises checked on every variant:

- ``reader.load(decode=True)`` returns (no exception), with every record framed and counted;
- a failure is counted exactly when ``strict=True`` raises, and it raises only
  :class:`CorruptRecordError` (which names the file; value errors also name run, tag and step);
- memory stays within a fixed multiple of the input plus the output (tracemalloc);
- ``npsummary inspect`` and ``export`` end with status 0 or a one-line error, never a traceback.

Time is bounded by construction (work linear in the input and output: see the PNG, walk and
FIFO tests); no test here measures it.
"""

from __future__ import annotations

import dataclasses
import io
import tracemalloc
import warnings
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary import reader
from npsummary._cli import main
from npsummary._format.record import CorruptRecordError, frame_record, iter_records
from npsummary.proto import Event
from paths import TESTS

GOLDEN = sorted(
    p
    for root in (TESTS / "golden" / "reader", TESTS / "conformance" / "golden")
    for p in root.rglob("*tfevents*")
    if p.is_file()
)
MEMORY_FACTOR = 16
MEMORY_SLACK = 4 << 20


def _ours(root: Path) -> list[Path]:
    """Every kind npsummary writes, through SummaryWriter and the tf.summary-style API."""
    import npsummary
    from npsummary import SummaryWriter

    rng = np.random.default_rng(0)
    with SummaryWriter(str(root / "tbx")) as w:
        for dtype in (np.float16, np.float32, np.float64, np.int8, np.uint8, np.int64, bool):
            name = np.dtype(dtype).name
            w.add_scalar(f"scalar/{name}", np.array(1, dtype)[()], 0)
            w.add_histogram(f"hist/{name}", rng.integers(0, 2, 50).astype(dtype), 0)
        w.add_scalar("scalar/big", 1.7e308, 1)
        w.add_scalars("group", {"a": 1.0, "b": float("nan")}, 0)
        w.add_image(
            "img/hwc", rng.integers(0, 255, (9, 7, 3), dtype=np.uint8), 0, dataformats="HWC"
        )
        w.add_image("img/chw_float", rng.random((1, 5, 6)), 0)
        w.add_image("img/hw", rng.random((4, 4)), 0, dataformats="HW")
        w.add_images("imgs", rng.random((3, 3, 8, 8)), 0)
        w.add_image_with_boxes("boxes", rng.random((3, 16, 16)), np.array([[1, 1, 8, 8]]), 0)
        w.add_video("video", rng.random((1, 4, 3, 8, 8)), 0, fps=4)
        w.add_audio("audio", rng.uniform(-1, 1, 800).astype(np.float32), 0, sample_rate=8000)
        w.add_text("text", "héllo **markdown**", 0)
        w.add_pr_curve("pr", rng.integers(0, 2, 40), rng.random(40), 0)
        w.add_mesh("mesh", rng.random((1, 5, 3)).astype(np.float32), global_step=0)
        w.add_embedding(rng.random((6, 4)), metadata=list("abcdef"), global_step=0, tag="emb")
        w.add_custom_scalars({"c": {"loss": ["Multiline", ["scalar/float32"]]}})
        w.add_tensor("tensor", rng.random((2, 3)).astype(np.float32), 0)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "wide": True}, {"hp/acc": 0.5}, run_name="hp")
    writer = npsummary.create_file_writer(str(root / "tf2"))
    with writer.as_default():
        npsummary.scalar("s", 0.5, step=0)
        npsummary.histogram("h", rng.random(30), step=0)
        npsummary.image("i", rng.random((2, 6, 6, 3)), step=0)
        npsummary.audio("a", rng.uniform(-1, 1, (1, 400, 1)), 8000, step=0)
        npsummary.text("t", np.array([["a", "b"], ["c", "d"]]), step=0)
        npsummary.write("raw", np.arange(6, dtype=np.int32).reshape(2, 3), step=0)
    writer.close()
    return sorted(p for p in root.rglob("*tfevents*") if p.is_file())


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _ours(tmp_path_factory.mktemp("ours"))


# --- mutations of one payload (the framing stays valid) -------------------------------------


def _cut(payload: bytes, k: int) -> bytes:
    return payload[: (len(payload) * (k % 7 + 1)) // 8]


def _flip(payload: bytes, k: int) -> bytes:
    if not payload:
        return payload
    out = bytearray(payload)
    out[(k * 7919) % len(out)] ^= 1 << (k % 8)
    return bytes(out)


def _zero(payload: bytes, k: int) -> bytes:
    at = (k * 104729) % max(len(payload), 1)
    return payload[:at] + bytes(min(8, len(payload) - at)) + payload[at + 8 :]


def _huge_varint(payload: bytes, k: int) -> bytes:
    """Replace a byte after a length-delimited tag with a 10-byte maximal varint."""
    at = (k * 31) % max(len(payload), 1)
    return payload[:at] + b"\xff" * 9 + b"\x01" + payload[at + 1 :]


MUTATIONS: dict[str, Callable[[bytes, int], bytes]] = {
    "cut": _cut,
    "flip": _flip,
    "zero": _zero,
    "varint": _huge_varint,
}


def _payloads(path: Path) -> list[bytes]:
    return [bytes(p) for p in iter_records(path.read_bytes())]


def _variant(payloads: list[bytes], mutate: Callable[[bytes, int], bytes], seed: int) -> bytes:
    return b"".join(frame_record(mutate(p, seed + i)) for i, p in enumerate(payloads))


# --- what every read must satisfy -----------------------------------------------------------


def _nbytes(obj: Any, seen: set[int] | None = None) -> int:
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        extra = sum(_nbytes(x, seen) for x in obj.reshape(-1)) if obj.dtype == object else 0
        return int(obj.nbytes) + extra
    if isinstance(obj, bytes | str):
        return len(obj)
    if isinstance(obj, dict):
        return sum(_nbytes(k, seen) + _nbytes(v, seen) for k, v in obj.items())
    if isinstance(obj, list | tuple):
        return sum(_nbytes(x, seen) for x in obj)
    if dataclasses.is_dataclass(obj):
        return sum(_nbytes(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
    return 8


def _check_read(logdir: Path, records: int) -> reader.Logdata:
    size = sum(p.stat().st_size for p in logdir.rglob("*") if p.is_file())
    tracemalloc.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = reader.load(logdir, decode=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not caught, [str(w.message) for w in caught]  # hostile data is counted, not warned
    stats = data.stats
    assert stats.records == records  # the framing is intact: every record read
    assert stats.torn_tails == 0
    bound = MEMORY_FACTOR * (size + _nbytes(data)) + MEMORY_SLACK
    assert peak <= bound, f"peak {peak:,} bytes for {size:,} bytes in, {_nbytes(data):,} out"
    failures = stats.corrupt_records + stats.bad_values
    try:
        reader.load(logdir, decode=True, strict=True)
    except CorruptRecordError as exc:
        assert failures, f"strict raised but nothing was counted: {exc}"
        assert "tfevents" in str(exc)
    else:
        assert not failures, "failures were counted but strict did not raise"
    assert len(stats.problems) == min(100, failures + stats.torn_tails)
    return data


def _check_cli(logdir: Path, out: Path) -> None:
    for argv in (
        ["inspect", str(logdir)],
        ["inspect", str(logdir), "--json"],
        ["export", str(logdir), "--format", "csv", "--out", str(out)],
        ["export", str(logdir), "--format", "json", "--kind", "images", "--out", str(out)],
    ):
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            status = main(argv)
        assert status in (0, 1), (argv, status)
        if status:
            lines = stderr.getvalue().splitlines()
            assert lines and lines[-1].startswith(f"npsummary {argv[0]}: "), stderr.getvalue()
        assert "Traceback" not in stderr.getvalue()
        assert "\x1b" not in stdout.getvalue() + stderr.getvalue()


def _write(logdir: Path, name: str, data: bytes) -> None:
    logdir.mkdir(parents=True, exist_ok=True)
    (logdir / name).write_bytes(data)


# --- every writer's records, intact ---------------------------------------------------------


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_golden_file_reads_cleanly(tmp_path: Path, path: Path) -> None:
    _write(tmp_path / "logs", path.name, path.read_bytes())
    data = _check_read(tmp_path / "logs", len(_payloads(path)))
    assert data.stats.corrupt_records == data.stats.bad_values == 0
    _check_cli(tmp_path / "logs", tmp_path / "out")


def test_every_kind_npsummary_writes_reads_cleanly(tmp_path: Path, ours: list[Path]) -> None:
    assert len(ours) >= 3
    for i, path in enumerate(ours):
        _write(tmp_path / "logs" / str(i), path.name, path.read_bytes())
    data = _check_read(tmp_path / "logs", sum(len(_payloads(p)) for p in ours))
    assert data.stats.corrupt_records == data.stats.bad_values == 0
    assert {
        k
        for k in ("scalars", "histograms", "images", "audio", "text", "pr_curves")
        if getattr(data, k)
    } == {"scalars", "histograms", "images", "audio", "text", "pr_curves"}
    _check_cli(tmp_path / "logs", tmp_path / "out")


# --- corrupt variants -----------------------------------------------------------------------


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_golden_variants(tmp_path: Path, mutation: str) -> None:
    """Every record of every golden file damaged the same way, one logdir per file."""
    for i, path in enumerate(GOLDEN):
        payloads = _payloads(path)
        logdir = tmp_path / f"g{i}"
        _write(logdir, path.name, _variant(payloads, MUTATIONS[mutation], i))
        _check_read(logdir, len(payloads))
    _check_cli(tmp_path / "g0", tmp_path / "out")


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_our_variants(tmp_path: Path, ours: list[Path], mutation: str) -> None:
    for i, path in enumerate(ours):
        payloads = _payloads(path)
        logdir = tmp_path / f"o{i}"
        _write(logdir, path.name, _variant(payloads, MUTATIONS[mutation], 3 * i))
        _check_read(logdir, len(payloads))
        _check_cli(logdir, tmp_path / "out")


@pytest.mark.fuzz
@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_random_variants(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(GOLDEN))
    payloads = _payloads(path)
    out = []
    for i, payload in enumerate(payloads):
        how = data.draw(st.sampled_from([None, *sorted(MUTATIONS)]), label=f"record {i}")
        out.append(
            payload if how is None else MUTATIONS[how](payload, data.draw(st.integers(0, 999)))
        )
    if data.draw(st.booleans(), label="splice"):
        a, b = data.draw(st.integers(0, len(out) - 1)), data.draw(st.integers(0, len(out) - 1))
        out[a] = out[a][: len(out[a]) // 2] + out[b][len(out[b]) // 2 :]
    logdir = tmp_path_factory.mktemp("fuzz")
    _write(logdir, path.name, b"".join(frame_record(p) for p in out))
    _check_read(logdir, len(out))


# --- hostile values a writer would never produce --------------------------------------------


def _value(tag: str, **kw: Any) -> bytes:
    ev = Event(wall_time=1.0, step=3)
    value = ev.summary.value.add(tag=tag)
    plugin = kw.pop("plugin", None)
    if plugin is not None:
        value.metadata.plugin_data.plugin_name = plugin[0]
        value.metadata.plugin_data.content = plugin[1]
    tensor = kw.pop("tensor", None)
    if tensor is not None:
        dtype, shape, fill = tensor
        value.tensor.dtype = dtype
        for d in shape:
            value.tensor.tensor_shape.dim.add(size=d)
        for name, items in fill.items():
            getattr(value.tensor, name).extend(items)
    for name, content in kw.items():
        if "__" in name:
            sub, field = name.split("__")
            setattr(getattr(value, sub), field, content)
        else:
            setattr(value, name, content)
    return bytes(frame_record(ev.SerializeToString()))


def _png_header(width: int, height: int) -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x04" * 64))


HOSTILE_VALUES = {
    "tensor expands": _value("t1", tensor=(1, [1 << 30], {"float_val": [1.0]})),
    "string tensor expands": _value("t2", tensor=(7, [1 << 28, 1 << 28], {"string_val": [b"x"]})),
    "unknown dtype": _value("t3", tensor=(999, [2], {"float_val": [1.0, 2.0]})),
    "negative dim": _value("t4", tensor=(1, [-1], {"float_val": [1.0]})),
    "content not a multiple": _value("t5", tensor=(2, [3], {})),
    "scalar of 3 values": _value(
        "s1", plugin=("scalars", b""), tensor=(1, [3], {"float_val": [1.0, 2, 3]})
    ),
    "histogram of wrong shape": _value(
        "h1", plugin=("histograms", b""), tensor=(1, [4], {"float_val": [1.0] * 4})
    ),
    "pr curve of wrong shape": _value(
        "p1", plugin=("pr_curves", b"\xff"), tensor=(1, [2, 2], {"float_val": [1.0] * 4})
    ),
    "text of floats": _value("x1", plugin=("text", b""), tensor=(1, [1], {"float_val": [1.0]})),
    "hparams garbage": _value(
        "_hparams_/experiment", plugin=("hparams", b"\x0a\xff\xff\xff\xff\x0f")
    ),
    "image tensor too short": _value(
        "i1", plugin=("images", b""), tensor=(7, [1], {"string_val": [b"1"]})
    ),
    "image width not a number": _value(
        "i2", plugin=("images", b""), tensor=(7, [3], {"string_val": [b"w", b"2", b"x"]})
    ),
    "png bomb header": _value("i3", image__encoded_image_string=_png_header(1 << 16, 1 << 16)),
    "png garbage": _value("i4", image__encoded_image_string=b"\x89PNG\r\n\x1a\ngarbage"),
    "gif garbage": _value("i5", image__encoded_image_string=b"GIF89a\xff\xff\xff\xff\x00"),
    "audio tensor of floats": _value(
        "a1", plugin=("audio", b""), tensor=(1, [2], {"float_val": [1.0, 2.0]})
    ),
    "wav garbage": _value("a2", audio__encoded_audio_string=b"RIFF\xff\xff\xff\xffWAVEfmt "),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_VALUES))
def test_hostile_values_are_skipped_and_counted(tmp_path: Path, name: str) -> None:
    good = _value("fine", simple_value=1.0)
    _write(tmp_path / "logs", "events.out.tfevents.1", good + HOSTILE_VALUES[name] + good)
    data = _check_read(tmp_path / "logs", 3)
    assert data.stats.bad_values + data.stats.corrupt_records == 1, data.stats.problems
    assert data.scalars[(".", "fine")].values.tolist() == [1.0, 1.0]
    assert "step 3" in data.stats.problems[0] or "not an Event" in data.stats.problems[0]
    _check_cli(tmp_path / "logs", tmp_path / "out")
