"""Segment sink on fsspec's ``memory://`` filesystem (fast); real S3: test_remote_s3_clients.py.

Every run is read back by TensorBoard's own loader after copying its objects to a local folder
under the same names, so "valid event file" and "name order" are TensorBoard's judgement.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples, raw_records, read_scalars, scalar_values, wait_for

fsspec = pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")
from fsspec.implementations.memory import MemoryFileSystem  # noqa: E402

from npsummary import EventWriteError, FileSink, MemorySink, SummaryWriter  # noqa: E402  # noqa: E402
from npsummary._common.urls import is_url  # noqa: E402
from npsummary._format.record import frame_record, iter_records  # noqa: E402
from npsummary._sinks.open_url import open_url_sink  # noqa: E402
from npsummary._sinks.segments import SegmentSink  # noqa: E402

pytestmark = pytest.mark.remote


def _url() -> str:
    return f"memory://bucket/{uuid.uuid4().hex}/run"


def _objects(url: str) -> dict[str, bytes]:
    fs, path = fsspec.core.url_to_fs(url)
    if not fs.exists(path):
        return {}
    return {
        Path(p).name: fs.cat_file(p)
        for p in fs.find(path)
        if "tfevents" in Path(p).name and Path(p).parent.as_posix() == path
    }


def _download(url: str, target: Path) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for name, data in _objects(url).items():
        (target / name).write_bytes(data)
    return target


def _payloads(url: str, tmp_path: Path) -> list[bytes]:
    """Every record of the run's segments in name order, file_version headers left out."""
    local = _download(url, tmp_path / uuid.uuid4().hex)
    out: list[bytes] = []
    for path in sorted(local.iterdir()):
        records = raw_records(path)
        assert records[0].find(b"brain.Event:2") >= 0, f"{path.name} lacks its file_version"
        out.extend(records[1:])
    return out


def test_is_url() -> None:
    assert is_url("s3://bucket/run")
    assert is_url("memory://run")
    assert is_url("simplecache::s3://bucket/run")
    assert is_url("file:///tmp/run")
    for path in ("runs/exp", "/abs/path", "C:\\runs", "c:/runs", "", "a:b"):
        assert not is_url(path)
    assert not is_url(Path("s3:/x"))


def test_scalars_read_back_by_tensorboard(tmp_path: Path) -> None:
    url = _url()
    with SummaryWriter(SegmentSink(url, segment_bytes=512)) as writer:
        for step in range(200):
            writer.add_scalar("loss", 1.0 / (step + 1), step)
    names = list(_objects(url))
    assert len(names) > 5, "a small segment bound cuts the run into many segments"
    assert len({n.rsplit(".", 1)[0] for n in names}) == 1, "one writer, one stem"
    scalars = read_scalars(_download(url, tmp_path / "run"))
    expected: list[tuple[int, object]] = [
        (s, pytest.approx(1.0 / (s + 1), rel=1e-6)) for s in range(200)
    ]
    assert scalar_values(scalars["loss"]) == expected


def test_segments_respect_the_size_bound_and_keep_order(tmp_path: Path) -> None:
    url = _url()
    sink = SegmentSink(url, segment_bytes=300)
    payloads = [bytes([i % 251]) * (10 + i % 50) for i in range(500)]
    for payload in payloads:
        sink.write(payload)
    sink.close()
    objects = _objects(url)
    header = len(next(iter(sorted(objects.items())))[1])  # the first segment holds only it
    for name, data in objects.items():
        assert len(data) <= 300 + header, name
    assert _payloads(url, tmp_path) == payloads


def test_flush_uploads_the_open_segment_at_once(tmp_path: Path) -> None:
    url = _url()
    sink = SegmentSink(url, flush_secs=3600)
    sink.write(b"first")
    assert len(_objects(url)) == 1  # the header segment only
    sink.flush()
    assert _payloads(url, tmp_path) == [b"first"]
    sink.write(b"second")
    sink.flush()
    sink.flush()  # nothing open: no empty segment
    assert len(_objects(url)) == 3
    assert _payloads(url, tmp_path) == [b"first", b"second"]
    sink.close()


def test_flush_secs_uploads_without_a_call(tmp_path: Path) -> None:
    url = _url()
    sink = SegmentSink(url, flush_secs=0.05)
    sink.write(b"waits no longer than flush_secs")
    assert wait_for(lambda: len(_objects(url)) == 2)
    assert _payloads(url, tmp_path) == [b"waits no longer than flush_secs"]
    sink.close()


def test_full_segment_uploads_before_flush_secs(tmp_path: Path) -> None:
    url = _url()
    sink = SegmentSink(url, flush_secs=3600, segment_bytes=1000)
    for _ in range(31):
        sink.write(b"x" * 50)  # 66 framed bytes each: 15 fill a segment, the 16th seals it
    assert wait_for(lambda: len(_objects(url)) == 3)
    assert _payloads(url, tmp_path) == [b"x" * 50] * 30
    sink.close()


@pytest.mark.parametrize("n", [100, 1000, 10000])
def test_bytes_uploaded_stay_within_ten_percent_of_event_bytes(n: int, tmp_path: Path) -> None:
    url = _url()
    sink = SegmentSink(url, segment_bytes=64 << 10, flush_secs=3600)
    writer = SummaryWriter(sink)
    memory = MemorySink()
    reference = SummaryWriter(memory)
    for step in range(n):
        writer.add_scalar("loss", step * 0.5, step, walltime=1.0 + step)
        reference.add_scalar("loss", step * 0.5, step, walltime=1.0 + step)
        if step % 100 == 99:
            writer.flush()  # as often as a 2 s flush_secs would in a fast loop
    writer.close()
    event_bytes = sum(len(frame_record(p)) for p in memory.payloads)
    uploaded = sum(len(d) for d in _objects(url).values())
    assert uploaded == sink.uploaded_bytes
    assert uploaded <= 1.1 * event_bytes + 60  # + the run's first, header-only segment
    assert _payloads(url, tmp_path) == memory.payloads


def test_add_scalars_writes_sub_runs_as_segments(tmp_path: Path) -> None:
    url = _url()
    with SummaryWriter(SegmentSink(url)) as writer:
        for step in range(3):
            writer.add_scalars("acc", {"train": step, "test": -step}, step)
    for key, sign in (("train", 1), ("test", -1)):
        local = _download(f"{url}/acc_{key}", tmp_path / key)
        assert scalar_values(read_scalars(local)["acc"]) == [(s, sign * s) for s in range(3)]


def test_file_url_keeps_one_appended_file(tmp_path: Path) -> None:
    sink = open_url_sink(f"file://{tmp_path}/run")
    assert isinstance(sink, FileSink)
    with SummaryWriter(sink) as writer:
        writer.add_scalar("x", 1.0, 0)
    assert len(os.listdir(tmp_path / "run")) == 1


def test_fsspec_is_imported_only_for_remote_urls(tmp_path: Path) -> None:
    code = (
        "import sys, npsummary\n"
        "from npsummary._sinks.open_url import open_url_sink\n"
        f"open_url_sink('file://{tmp_path}/run').close()\n"
        "assert 'fsspec' not in sys.modules\n"
        f"open_url_sink('memory://{uuid.uuid4().hex}/run').close()\n"
        "assert 'fsspec' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_protocol_package_is_named() -> None:
    if importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed")
    with pytest.raises(ImportError, match=r"gs://bucket/run.*gcsfs"):
        SegmentSink("gs://bucket/run")


def test_unknown_protocol_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nosuchproto"):
        SegmentSink("nosuchproto://bucket/run")


def test_bad_options_raise_before_any_upload() -> None:
    with pytest.raises(TypeError, match="segment_bytes"):
        SegmentSink(_url(), segment_bytes="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="filename_suffix"):
        SegmentSink(_url(), filename_suffix="a/b")


class FlakyMemory(MemoryFileSystem):  # type: ignore[misc]
    """memory:// whose writes fail while ``failing`` is set (one store per instance)."""

    protocol = "flakymem"
    cachable = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.store: dict[str, Any] = {}
        self.pseudo_dirs = [""]
        self.failing: BaseException | None = None
        self.puts: list[str] = []

    def pipe_file(self, path: str, value: bytes, *args: Any, **kwargs: Any) -> None:
        self.puts.append(path)
        if self.failing is not None:
            raise self.failing
        super().pipe_file(path, value, *args, **kwargs)


def _sink_on(fs: FlakyMemory, **options: Any) -> SegmentSink:
    """A root sink on ``fs`` (the constructor's header upload included)."""
    options.setdefault("flush_secs", 3600)
    return SegmentSink("flakymem://bucket/run", filesystem=fs, **options)


def _flaky_payloads(fs: FlakyMemory) -> list[bytes]:
    out: list[bytes] = []
    for path in sorted(fs.store):
        from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader

        local = Path(os.environ.get("TMPDIR", "/tmp")) / f"flaky-{uuid.uuid4().hex}"
        local.write_bytes(fs.store[path].getvalue())
        try:
            out.extend(list(RawEventFileLoader(str(local)).Load())[1:])
        finally:
            local.unlink()
    return out


def test_failed_upload_raises_at_next_call_naming_the_url_then_recovers() -> None:
    fs = FlakyMemory()
    sink = _sink_on(fs)
    sink.write(b"before")
    sink.flush()
    fs.failing = PermissionError(13, "Access Denied")
    sink.write(b"during-1")
    with pytest.raises(EventWriteError, match=r"flakymem://bucket/run/events\.out.*Access Denied"):
        sink.flush()
    sink.write(b"during-2")  # the error was raised once; the records are kept
    fs.failing = None
    sink.flush()
    assert _flaky_payloads(fs) == [b"before", b"during-1", b"during-2"]
    failed = [p for p in fs.puts if fs.puts.count(p) > 1]
    assert failed, "the failed segment is retried under the same name"
    sink.close()


def test_background_failure_is_raised_by_the_next_write() -> None:
    fs = FlakyMemory()
    sink = _sink_on(fs, flush_secs=0.01)
    fs.failing = ConnectionError("server down")
    sink.write(b"a")
    assert wait_for(lambda: sink._state.error is not None)
    with pytest.raises(EventWriteError, match="server down"):
        sink.write(b"b")
    sink.write(b"c")
    fs.failing = None
    sink.close()
    assert _flaky_payloads(fs) == [b"a", b"c"]


def test_memory_bound_drops_and_counts_while_failing() -> None:
    fs = FlakyMemory()
    sink = _sink_on(fs, max_pending_bytes=1000)
    fs.failing = OSError(5, "boom")
    sink.write(b"k" * 600)
    with pytest.raises(EventWriteError):
        sink.flush()
    sink.write(b"k" * 600)  # kept: 1200 bytes now wait
    sink.write(b"k" * 600)  # beyond the bound: dropped, counted
    with pytest.raises(EventWriteError, match="1 records dropped"):
        sink.write(b"x")
    fs.failing = None
    sink.flush()
    kept = _flaky_payloads(fs)
    assert kept[:2] == [b"k" * 600, b"k" * 600]
    sink.close()


def test_write_after_close_is_refused() -> None:
    sink = SegmentSink(_url())
    sink.close()
    with pytest.raises(ValueError, match="closed"):
        sink.write(b"late")
    sink.flush()  # a no-op, as for files
    sink.close()


def test_close_reports_what_it_could_not_upload() -> None:
    fs = FlakyMemory()
    sink = _sink_on(fs)
    fs.failing = OSError(5, "gone")
    sink.write(b"lost")
    with pytest.raises(EventWriteError, match="1 records could not be written before close"):
        sink.close()
    sink.close()  # idempotent


def test_unreachable_store_fails_the_constructor_naming_the_url() -> None:
    fs = FlakyMemory()
    fs.failing = PermissionError(13, "no credentials")
    with pytest.raises(EventWriteError, match=r"flakymem://bucket/run.*no credentials"):
        _sink_on(fs)


@pytest.mark.fuzz
@settings(max_examples=examples(40), deadline=None)
@given(
    sizes=st.lists(st.integers(0, 400), max_size=60),
    bound=st.integers(1, 600),
    flush_at=st.sets(st.integers(0, 59), max_size=5),
)
def test_segments_hold_every_record_once_in_order_within_the_bound(
    sizes: list[int], bound: int, flush_at: set[int]
) -> None:
    url = _url()
    sink = SegmentSink(url, segment_bytes=bound, flush_secs=3600)
    payloads = [bytes([i % 256]) * size for i, size in enumerate(sizes)]
    for index, payload in enumerate(payloads):
        sink.write(payload)
        if index in flush_at:
            sink.flush()
    sink.close()
    objects = _objects(url)
    names = sorted(objects)
    assert names == sorted(objects, key=lambda n: int(n.rsplit(".", 1)[1])), "name order"
    stored: list[bytes] = []
    for name in names:
        records = list(iter_records(objects[name]))
        assert b"brain.Event:2" in records[0]
        body = records[1:]
        if len(body) > 1:
            assert sum(len(r) + 16 for r in body) <= bound, name
        stored.extend(body)
    assert stored == payloads
    assert sum(len(d) for d in objects.values()) == sink.uploaded_bytes
