"""npsummary.reader.Reader: a logdir read again as it grows equals a fresh read every time."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npsummary import SummaryWriter, reader
from npsummary._format.record import CorruptRecordError, frame_record
from npsummary.proto import Event

WALL = 1_700_000_000.0


def _event(step: int, tag: str = "x", value: float = 0.5) -> bytes:
    ev = Event(wall_time=WALL + step, step=step)
    ev.summary.value.add(tag=tag, simple_value=value)
    return bytes(frame_record(ev.SerializeToString()))


def _run_bytes(directory: Path, seed: int = 0) -> bytes:
    """The bytes of one event file holding scalars (bulk and general path), histograms, text
    and images."""
    rng = np.random.default_rng(seed)
    with SummaryWriter(str(directory)) as w:
        for step in range(150):
            w.add_scalar("loss", float(rng.random()), step)
            w.add_scalar("acc", float(rng.random()), step)
            if step % 30 == 0:
                w.add_histogram("weights", rng.normal(size=200), step)
                w.add_text("note", f"step {step}", step)
                w.add_image("img", rng.integers(0, 255, (3, 4, 5), dtype=np.uint8), step)
    (path,) = directory.glob("*tfevents*")
    data = path.read_bytes()
    shutil.rmtree(directory)
    return data


def _fields(series: Any) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(series):
        v = getattr(series, f.name)
        out[f.name] = [np.asarray(x).tolist() for x in v] if isinstance(v, list) else v
        if isinstance(v, np.ndarray):
            out[f.name] = (v.dtype.str, v.tolist())
    return out


def _same(live: reader.Logdata, fresh: reader.Logdata) -> None:
    assert live.runs == fresh.runs
    for kind in reader.KINDS:
        if kind == "hparams":
            assert live.hparams == fresh.hparams
            continue
        got, want = getattr(live, kind), getattr(fresh, kind)
        assert list(got) == list(want), kind
        for key in want:
            assert _fields(got[key]) == _fields(want[key]), (kind, key)
    assert live.stats == fresh.stats


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def test_growing_file_cut_mid_record_is_read_once_complete(tmp_path: Path) -> None:
    data = _run_bytes(tmp_path / "gen")
    path = tmp_path / "logs" / "a" / "events.out.tfevents.1.h"
    path.parent.mkdir(parents=True)
    live = reader.Reader(tmp_path / "logs")
    for cut in (0, 5, 100, 1001, len(data) // 2, len(data) - 3, len(data)):
        path.write_bytes(data[:cut])
        _same(live.load(), reader.load(tmp_path / "logs"))
    s = live.scalars()[("a", "loss")]
    assert s.steps.tolist() == list(range(150))
    assert live.stats.torn_tails == 0 and live.stats.bytes == len(data)


@pytest.mark.fuzz
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(0, 1 << 20), max_size=6))
def test_any_sequence_of_appends_equals_a_fresh_read(cuts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = _run_bytes(root / "gen", seed=len(cuts))
        path = root / "logs" / "events.out.tfevents.1.h"
        path.parent.mkdir()
        path.write_bytes(b"")
        live = reader.Reader(root / "logs")
        for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
            with open(path, "r+b") as f:
                f.seek(0, os.SEEK_END)
                f.write(data[f.tell() : cut])
            _same(live.load(), reader.load(root / "logs"))


def test_new_runs_and_files_appear_and_vanished_runs_go(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "events.out.tfevents.1.h").write_bytes(_event(1) + _event(2))
    live = reader.Reader(tmp_path)
    assert list(live.scalars()) == [("a", "x")]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "events.out.tfevents.1.h").write_bytes(_event(5))
    (tmp_path / "a" / "events.out.tfevents.2.h").write_bytes(_event(3))
    got = live.scalars()
    assert list(got) == [("a", "x"), ("b", "x")]
    assert got[("a", "x")].steps.tolist() == [1, 2, 3]
    shutil.rmtree(tmp_path / "b")
    assert list(live.scalars()) == [("a", "x")] and live.runs == ["a"]
    _same(live.load(), reader.load(tmp_path))


def test_unchanged_series_are_the_same_objects(tmp_path: Path) -> None:
    for run in "ab":
        (tmp_path / run).mkdir()
        (tmp_path / run / "events.out.tfevents.1.h").write_bytes(_event(1))
    live = reader.Reader(tmp_path)
    first = live.scalars()
    _append(tmp_path / "b" / "events.out.tfevents.1.h", _event(2))
    second = live.scalars()
    assert second[("a", "x")] is first[("a", "x")]
    assert second[("b", "x")].steps.tolist() == [1, 2]


@pytest.mark.parametrize("change", ["truncate", "rewrite", "earlier-file-grows", "sorts-first"])
def test_files_changed_otherwise_than_by_growing_read_the_run_again(
    tmp_path: Path, change: str
) -> None:
    run = tmp_path / "r"
    run.mkdir()
    one, two = run / "events.out.tfevents.1.h", run / "events.out.tfevents.2.h"
    one.write_bytes(_event(1) + _event(2))
    two.write_bytes(_event(3))
    live = reader.Reader(tmp_path)
    live.scalars()
    if change == "truncate":
        one.write_bytes(_event(1))
    elif change == "rewrite":  # same name, new content, larger: only the guard bytes tell
        with open(two, "r+b") as f:
            f.write(_event(7, value=0.25) + _event(8))
    elif change == "earlier-file-grows":
        _append(one, _event(9))
    else:
        (run / "events.out.tfevents.0.h").write_bytes(_event(0))
    _same(live.load(), reader.load(tmp_path))


def test_corrupt_records_and_torn_tails_are_counted_as_a_fresh_read_counts_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "events.out.tfevents.1.h"
    bad = bytearray(_event(2))
    bad[-6] ^= 0xFF  # payload CRC fails
    path.write_bytes(_event(1) + bytes(bad) + _event(3)[:10])
    live = reader.Reader(tmp_path)
    _same(live.load(), reader.load(tmp_path))
    assert live.stats.corrupt_records == 1 and live.stats.torn_tails == 1
    _append(path, _event(3)[10:] + _event(4))
    _same(live.load(), reader.load(tmp_path))
    assert live.stats.corrupt_records == 1 and live.stats.torn_tails == 0
    assert live.scalars()[(".", "x")].steps.tolist() == [1, 3, 4]


def test_strict_raises_and_the_run_is_read_again_next_time(tmp_path: Path) -> None:
    path = tmp_path / "events.out.tfevents.1.h"
    path.write_bytes(_event(1))
    live = reader.Reader(tmp_path, strict=True)
    live.scalars()
    bad = bytearray(_event(2))
    bad[-6] ^= 0xFF
    _append(path, bytes(bad))
    with pytest.raises(CorruptRecordError):
        live.scalars()
    path.write_bytes(_event(1) + _event(2))
    assert live.scalars()[(".", "x")].steps.tolist() == [1, 2]


def test_kinds_filters_and_arguments(tmp_path: Path) -> None:
    with SummaryWriter(str(tmp_path / "train")) as w:
        w.add_scalar("loss", 1.0, 0)
        w.add_histogram("w", np.arange(10.0), 0)
        w.add_text("t", "hello", 0)
    live = reader.Reader(tmp_path, kinds=["scalars"], tags="loss")
    assert list(live.scalars()) == [("train", "loss")]
    with pytest.raises(ValueError, match="does not read histograms"):
        live.histograms()
    both = reader.Reader(tmp_path, runs="train")
    assert list(both.histograms()) == [("train", "w")]
    assert list(both.text()) == list(reader.text(tmp_path))
    assert both.tensors(plugin="nothing") == {}
    assert np.array_equal(
        both.histograms(last_write_wins=True)[("train", "w")].buckets[0],
        reader.histograms(tmp_path)[("train", "w")].buckets[0],
    )
    with pytest.raises(ValueError, match="unknown kinds"):
        reader.Reader(tmp_path, kinds=["nope"])
    with pytest.raises(TypeError, match="kinds must be a list"):
        reader.Reader(tmp_path, kinds="scalars")
    with pytest.raises(ValueError, match="runs: invalid regular expression"):
        reader.Reader(tmp_path, runs="(")
    with pytest.raises(FileNotFoundError):
        reader.Reader(tmp_path / "missing").scalars()


def test_runs_growing_together_with_bad_tails_among_them(tmp_path: Path) -> None:
    """Many runs' tails are framed and decoded together; one with a payload failing its CRC and
    one with a corrupt header go the general way, the others stay exact."""
    for r in range(5):
        (tmp_path / f"r{r}").mkdir()
        (tmp_path / f"r{r}" / "events.out.tfevents.1.h").write_bytes(
            b"".join(_event(s, value=s * r) for s in range(70))
        )
    live = reader.Reader(tmp_path)
    live.scalars()
    bad = bytearray(_event(100))
    bad[-6] ^= 0xFF
    for r in range(5):
        more = b"".join(_event(s, tag=f"t{s % 3}", value=-s) for s in range(70, 140))
        if r == 1:
            more = more[:200] + bytes(bad) + more[200:]
        if r == 3:
            more = b"\x07" * 30 + more
        if r == 4:
            more += _event(141)[:9]
        _append(tmp_path / f"r{r}" / "events.out.tfevents.1.h", more)
    _same(live.load(), reader.load(tmp_path))
    assert live.stats.corrupt_records >= 2 and live.stats.torn_tails == 1
    _append(tmp_path / "r4" / "events.out.tfevents.1.h", _event(141)[9:])
    _same(live.load(), reader.load(tmp_path))
    assert live.scalars()[("r4", "x")].steps[-1] == 141


def test_many_runs_with_tags_of_their_own_growing_together(tmp_path: Path) -> None:
    """More (tag, metadata) groups in one joint pass than runs share: each run gets its own."""
    for r in range(70):
        (tmp_path / f"r{r:02d}").mkdir()
        with SummaryWriter(str(tmp_path / f"r{r:02d}")) as w:
            w.add_scalar(f"own{r}", 1.0, 0)
    live = reader.Reader(tmp_path)
    live.scalars()
    for r in range(70):
        (path,) = (tmp_path / f"r{r:02d}").glob("*tfevents*")
        _append(path, b"".join(_event(s, tag=f"own{r}", value=s / 7) for s in range(1, 80)))
    _same(live.load(), reader.load(tmp_path))
    assert live.scalars()[("r69", "own69")].steps.tolist() == list(range(80))


def test_a_url_logdir_grows_and_gains_segments() -> None:
    """memory:// through fsspec: an object that grows (as a local file would) and new
    objects (as a SegmentSink uploads them), read incrementally and equal to a fresh read."""
    fsspec = pytest.importorskip("fsspec")
    root = f"memory://live-{os.getpid()}"
    fs = fsspec.filesystem("memory")
    first = f"{root}/run/events.out.tfevents.1.h"
    with fs.open(first, "wb") as f:
        f.write(_event(1) + _event(2)[:7])
    live = reader.Reader(root)
    _same(live.load(), reader.load(root))
    with fs.open(first, "wb") as f:  # memory:// cannot append: rewritten with more at the end
        f.write(_event(1) + _event(2) + _event(3))
    with fs.open(f"{root}/run/events.out.tfevents.2.h", "wb") as f:
        f.write(_event(4))
    _same(live.load(), reader.load(root))
    assert live.scalars()[("run", "x")].steps.tolist() == [1, 2, 3, 4]
    fs.rm(root, recursive=True)


def test_clean_tails_are_framed_at_once_and_earlier_series_stay_as_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tails that are whole records are framed in one pass (no walk); series grow in place
    behind views, and a series returned earlier keeps its values when later ones grow."""
    from npsummary.reader import _live

    paths = []
    for r in range(4):
        (tmp_path / f"r{r}").mkdir()
        paths.append(tmp_path / f"r{r}" / "events.out.tfevents.1.h")
        paths[-1].write_bytes(b"".join(_event(s, value=s + r) for s in range(40)))
    live = reader.Reader(tmp_path)
    kept = [(live.scalars(), {k: s.values.copy() for k, s in live.scalars().items()})]

    def no_walk(*args: Any) -> Any:
        raise AssertionError("clean tails were walked record by record")

    with monkeypatch.context() as patch:
        patch.setattr(_live, "_walk_tails", no_walk)
        for cycle in range(1, 6):
            for r, path in enumerate(paths[: 2 + cycle % 3]):
                steps = range(40 * cycle, 40 * cycle + 7 * (r + 1))
                _append(path, b"".join(_event(s, value=-s - r) for s in steps))
            got = live.scalars()
            kept.append((got, {k: s.values.copy() for k, s in got.items()}))
            _same(live.load(), reader.load(tmp_path))
    for series, values in kept:
        for key, s in series.items():
            np.testing.assert_array_equal(s.values, values[key])


def test_runs_growing_together_with_other_plugins_float_tensors(tmp_path: Path) -> None:
    """A joint pass holding, beside scalars, float tensors of another plugin (bulk-decoded,
    then sent back to the general path) and runs whose files did not grow."""
    for r in range(6):
        (tmp_path / f"r{r}").mkdir()
        with SummaryWriter(str(tmp_path / f"r{r}")) as w:
            w.add_scalar("loss", 1.0, 0)
    live = reader.Reader(tmp_path)
    live.load()
    for r in range(0, 6, 2):
        (path,) = (tmp_path / f"r{r}").glob("*tfevents*")
        more = []
        for s in range(1, 40):
            more.append(_event(s, tag="loss", value=s / 3))
            if s % 4 == r % 3:
                more.append(_event(s, tag=f"acc{r}", value=-s))
            if s % 5 == 0:
                ev = Event(wall_time=WALL + s, step=s)
                value = ev.summary.value.add(tag="other")
                value.metadata.plugin_data.plugin_name = "custom"
                value.tensor.dtype = 1  # DT_FLOAT, a scalar tensor: bulk-decoded, not a scalar
                value.tensor.float_val.append(s / 2)
                more.append(bytes(frame_record(ev.SerializeToString())))
        _append(path, b"".join(more))
    _same(live.load(), reader.load(tmp_path))
    assert live.scalars()[("r2", "loss")].steps.tolist() == list(range(40))
    assert ("r0", "other") in live.tensors() and ("r0", "other") not in live.scalars()


def _two_values(step: int, tag: str, value: float) -> bytes:
    """A scalar event the bulk decoder leaves to protobuf: two values in one summary."""
    ev = Event(wall_time=WALL + step, step=step)
    ev.summary.value.add(tag=tag, simple_value=value)
    ev.summary.value.add(tag=tag, simple_value=-value)
    return bytes(frame_record(ev.SerializeToString()))


def _histogram(step: int) -> bytes:
    ev = Event(wall_time=WALL + step, step=step)
    ev.summary.value.add(tag="h").histo.bucket.extend([1.0, 2.0])
    return bytes(frame_record(ev.SerializeToString()))


@pytest.mark.parametrize("kinds", [["scalars"], None])
def test_tails_filed_straight_into_grown_series_equal_a_fresh_read(
    tmp_path: Path, kinds: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tail of nothing but known tags' bulk-decoded scalars (and records the Reader passes
    over) goes straight into the growing arrays; a new tag, a scalar only protobuf decodes, a
    histogram the Reader keeps, or parts not shaped yet (refresh() without scalars()) take the
    collector's way. Each round equals a fresh read."""
    paths = []
    for r in range(6):
        (tmp_path / f"r{r}").mkdir()
        path = tmp_path / f"r{r}" / "events.out.tfevents.1.h"
        path.write_bytes(b"".join(_event(s, tag=f"t{s % 2}", value=s + r) for s in range(20)))
        paths.append(path)
    from npsummary.reader import _load

    # Which way each tail went: a tail's batch is offered a straight way (the Reader's tails
    # are); it went straight when that way took its scalars.
    straight: list[tuple[str, bool]] = []
    batch = _load._Collector.batch

    def spy(collector: Any, records: Any, fast: Any = None, take: Any = None) -> None:
        if take is None:
            batch(collector, records, fast)
            return
        straight.append((collector.run.name, False))
        mark = len(straight) - 1

        def taken(*args: Any) -> bool:
            straight[mark] = (collector.run.name, take(*args))
            return straight[mark][1]

        batch(collector, records, fast, taken)

    monkeypatch.setattr(_load._Collector, "batch", spy)
    live = reader.Reader(tmp_path, kinds=kinds)
    live.scalars()
    want_kinds = kinds or list(reader.KINDS)
    for round_ in range(4):
        steps = range(20 + 10 * round_, 30 + 10 * round_)
        for r, path in enumerate(paths):
            more = [_event(s, tag=f"t{s % 2}", value=s * (r + 1) / 7) for s in steps]
            if r == 1:
                more.insert(3, _histogram(steps[3]))
            if r == 2 and round_ == 1:
                more.insert(5, _event(steps[5], tag="new", value=1.5))
            if r in (3, 4):
                more.insert(4, _two_values(steps[4], "t0", 2.5))
            _append(path, b"".join(more))
            if r == 4:
                live.refresh()  # read by the collector, not shaped: its parts wait
                _append(path, _event(steps[-1], tag="t1", value=9.0))
        _same(live.load(), reader.load(tmp_path, kinds=want_kinds))
        went = dict(straight)  # each run's last tail
        assert went["r0"] and went["r5"] and not went["r3"] and not went["r4"], went
        # The histogram's tag is new in round 0; then it is passed over, or kept.
        assert went["r1"] == (kinds is not None and round_ > 0)
        assert went["r2"] == (round_ != 1)  # a new tag
        straight.clear()
    assert live.scalars()[("r3", "t0")].values.size == 10 + 4 * (5 + 2)
