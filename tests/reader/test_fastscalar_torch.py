"""torch's ``add_scalar(new_style=True)`` scalars (a shapeless DT_FLOAT ``float_val`` tensor, or
DT_DOUBLE ``double_val`` with ``double_precision=True``) take the reader's bulk path, and decode
exactly as protobuf decodes them, record by record."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from npsummary import SummaryWriter, reader
from npsummary._format.record import iter_records
from npsummary.proto import Event
from npsummary.reader._fastscalar import match_scalars
from npsummary.reader._framing import ReadStats, read_batches


def _write(logdir: Path, n: int) -> None:
    with SummaryWriter(logdir) as writer:
        for i in range(n):
            writer.add_scalar("f32", i / 7, i + 1, new_style=True)
            writer.add_scalar("f64", i / 7, i, new_style=True, double_precision=True)
            writer.add_scalar("legacy", i / 7, i)


def _protobuf_values(logdir: Path) -> dict[str, tuple[list[int], list[float]]]:
    out: dict[str, tuple[list[int], list[float]]] = {}
    for path in sorted(logdir.glob("*tfevents*")):
        for payload in iter_records(path.read_bytes()):
            event = Event.FromString(payload)
            for value in event.summary.value:
                steps, values = out.setdefault(value.tag, ([], []))
                steps.append(event.step)
                if value.HasField("simple_value"):
                    values.append(value.simple_value)
                else:
                    t = value.tensor
                    values.append((list(t.double_val) or list(t.float_val))[0])
    return out


def test_new_style_scalars_take_the_bulk_path(tmp_path: Path) -> None:
    _write(tmp_path, 50)
    (path,) = tmp_path.glob("*tfevents*")
    stats = ReadStats()
    matched = 0
    for batch in read_batches(reader.LocalFileSystem(), str(path), stats):
        fast = match_scalars(batch.buf, batch.starts, batch.ends)
        matched += fast.index.size
        assert sorted(fast.tags) == ["f32", "f64", "legacy"]
    assert matched == 150  # every scalar record; only file_version is left to protobuf


def test_new_style_scalars_read_exactly(tmp_path: Path) -> None:
    _write(tmp_path, 300)
    got = reader.scalars(tmp_path)
    expected = _protobuf_values(tmp_path)
    for tag, (steps, values) in expected.items():
        series = got[(".", tag)]
        assert np.array_equal(series.steps, steps)
        assert np.array_equal(series.values, np.asarray(values, np.float64))
    # DT_DOUBLE keeps its float64 digits; DT_FLOAT is rounded to float32 as written.
    f64 = got[(".", "f64")]
    assert f64.values[1] == 1 / 7
    f32 = got[(".", "f32")]
    assert f32.values[1] == float(np.float32(1 / 7))
