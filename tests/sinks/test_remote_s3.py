"""Runs written to a real S3 endpoint (moto_server on 127.0.0.1, through s3fs) and read back by
stock TensorBoard, plus the faults of a remote store: endpoint down and back, 5xx/403 answers,
missing credentials, bucket deleted. Skipped where s3fs/moto are not installed; the CI stage
.ci/stages/50-remote.sh installs them."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

import npsummary
from conftest import wait_for
from npsummary import EventWriteError, SummaryWriter
from npsummary._format.record import iter_records
from npsummary._sinks.segments import SegmentSink
from s3server import BUCKET, FaultProxy, MotoServer, list_objects, run_records, s3_stack

pytestmark = pytest.mark.remote

pytest.importorskip("s3fs", reason="the S3 tests need s3fs (pip install s3fs 'moto[server]')")
pytest.importorskip("moto", reason="the S3 tests need moto[server]")

WALL0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    with s3_stack() as servers:
        yield servers


@pytest.fixture
def proxy(stack: tuple[MotoServer, FaultProxy]) -> Iterator[FaultProxy]:
    yield stack[1]
    stack[1].heal()


def _prefix() -> str:
    return f"runs/{uuid.uuid4().hex}"


def _records(server: MotoServer, prefix: str) -> list[bytes]:
    return run_records(server.endpoint, prefix)


def test_writes_go_to_the_bucket_in_name_order(stack: tuple[MotoServer, FaultProxy]) -> None:
    server, _ = stack
    prefix = _prefix()
    sink = SegmentSink(f"s3://{BUCKET}/{prefix}", segment_bytes=200, flush_secs=3600)
    payloads = [f"record {i}".encode() * (1 + i % 7) for i in range(100)]
    for payload in payloads:
        sink.write(payload)
    sink.close()
    assert _records(server, prefix) == payloads
    assert sink.uploaded_objects == len(list_objects(server.endpoint, prefix + "/"))


def _tensorboard_run(root: str) -> None:
    rng = np.random.default_rng(3)
    with SummaryWriter(SegmentSink(f"{root}/tbx", segment_bytes=4096)) as writer:
        for step in range(20):
            writer.add_scalar("loss", 0.1 * step - 0.35, step, walltime=WALL0 + step)
        for step in range(3):
            writer.add_histogram("w", rng.normal(step, 1, 500), step, walltime=WALL0 + step)
        writer.add_image("gray", GRAY, 1, dataformats="HW")
    tf_writer = npsummary.create_file_writer(SegmentSink(f"{root}/tf2"))
    with tf_writer.as_default(step=4):
        assert npsummary.histogram("h", np.arange(100.0), buckets=10)
    tf_writer.close()


GRAY = (np.random.default_rng(5).random((7, 9)) * 255).astype(np.uint8)


@pytest.mark.live
def test_stock_tensorboard_reads_the_bucket(stack: tuple[MotoServer, FaultProxy]) -> None:
    from PIL import Image

    from npsummary._histogram import binned_histogram, tf2_buckets
    from npsummary.reader import legacy_to_buckets
    from tbserver import tensorboard

    root = f"s3://{BUCKET}/{_prefix()}"
    _tensorboard_run(root)
    with tensorboard(root, "false") as tb:
        tags = tb.wait_for(lambda: (t := tb.get_json("/data/plugin/scalars/tags")) and t)
        assert set(tags) == {"tbx"} and set(tags["tbx"]) == {"loss"}

        def points() -> list[list[float]] | None:
            data = tb.get_json("/data/plugin/scalars/scalars", run="tbx", tag="loss")
            return data if len(data) == 20 else None

        expected = [[WALL0 + s, s, float(np.float32(0.1 * s - 0.35))] for s in range(20)]
        assert tb.wait_for(points) == expected

        # Ask for a series only once its tag is listed (an unknown tag is an HTTP error).
        tb.wait_for(
            lambda: (
                (t := tb.get_json("/data/plugin/histograms/tags"))
                and "w" in t.get("tbx", {})
                and "h" in t.get("tf2", {})
            )
        )
        tb.wait_for(lambda: "gray" in tb.get_json("/data/plugin/images/tags").get("tbx", {}))

        def histograms(run: str, tag: str, count: int) -> list[list[float]] | None:
            data = tb.get_json("/data/plugin/histograms/histograms", run=run, tag=tag)
            return data if len(data) == count else None

        served = tb.wait_for(lambda: histograms("tbx", "w", 3))
        rng = np.random.default_rng(3)  # the draws of _tensorboard_run
        for step, (wall, served_step, rows) in enumerate(served):
            assert (wall, served_step) == (WALL0 + step, step)
            data = rng.normal(step, 1, 500)
            buckets = legacy_to_buckets(binned_histogram(data, "tensorflow")).astype(np.float32)
            np.testing.assert_array_equal(np.array(rows), buckets.astype(np.float64))
        ((_, step, rows),) = tb.wait_for(lambda: histograms("tf2", "h", 1))
        assert step == 4
        np.testing.assert_array_equal(np.array(rows), tf2_buckets(np.arange(100.0), 10)[0])

        (entry,) = tb.wait_for(
            lambda: tb.get_json("/data/plugin/images/images", run="tbx", tag="gray", sample=0)
        )
        png = tb.get(f"/data/plugin/images/individualImage?{entry['query']}")
        # One-channel images are written as RGB, as tensorboardX and torch write them.
        rgb = np.repeat(GRAY[:, :, None], 3, axis=2)
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), rgb)


def _logged(sink: SegmentSink, names: list[str]) -> list[bytes]:
    payloads = [name.encode() for name in names]
    for payload in payloads:
        sink.write(payload)
    return payloads


def test_endpoint_down_then_back(stack: tuple[MotoServer, FaultProxy], proxy: FaultProxy) -> None:
    server, _ = stack
    prefix = _prefix()
    url = f"s3://{BUCKET}/{prefix}"
    sink = SegmentSink(url, flush_secs=3600)
    before = _logged(sink, ["a", "b"])
    sink.flush()
    proxy.stop()
    during = _logged(sink, ["c", "d"])
    with pytest.raises(EventWriteError, match=rf"{url}/events\.out\.tfevents\..*2 records kept"):
        sink.flush()
    during += _logged(sink, ["e"])
    with pytest.raises(EventWriteError, match=url):
        sink.flush()  # still down: each failing call says so
    proxy.start()
    sink.flush()
    after = _logged(sink, ["f"])
    sink.close()
    assert _records(server, prefix) == before + during + after


def test_server_process_restarted_mid_run(stack: tuple[MotoServer, FaultProxy]) -> None:
    import boto3

    server, _ = stack
    prefix = _prefix()
    url = f"s3://{BUCKET}/{prefix}"
    sink = SegmentSink(url, flush_secs=3600)
    _logged(sink, ["a"])
    sink.flush()
    server.stop()  # killed by PID: the proxy in front answers 502
    during = _logged(sink, ["b", "c"])
    with pytest.raises(EventWriteError, match=url):
        sink.flush()
    server.start()  # a new process on the same port; moto keeps objects in memory only
    boto3.client("s3", endpoint_url=server.endpoint).create_bucket(Bucket=BUCKET)
    sink.flush()
    sink.close()
    # What was flushed before went down with the old process's memory; what was logged during
    # the outage arrives once, in order.
    assert _records(server, prefix) == during


def test_background_retry_after_the_endpoint_returns(
    stack: tuple[MotoServer, FaultProxy], proxy: FaultProxy
) -> None:
    server, _ = stack
    prefix = _prefix()
    sink = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=0.05)
    proxy.stop()
    logged = _logged(sink, ["x", "y"])
    assert wait_for(lambda: sink._state.failing, timeout=30)
    proxy.start()
    # No call: the background thread retries with backoff until it gets through.
    assert wait_for(lambda: not sink._state.sealed and not sink._state.pending, timeout=30)
    assert _records(server, prefix) == logged
    with pytest.raises(EventWriteError, match="s3://"):
        sink.write(b"z")  # the failure is still reported, once
    sink.close()


@pytest.mark.parametrize(
    ("status", "word"), [(500, "InternalError|injected 500"), (503, ""), (403, "")]
)
def test_error_responses(
    status: int, word: str, stack: tuple[MotoServer, FaultProxy], proxy: FaultProxy
) -> None:
    server, _ = stack
    prefix = _prefix()
    url = f"s3://{BUCKET}/{prefix}"
    sink = SegmentSink(url, flush_secs=3600)
    before = _logged(sink, ["1"])
    sink.flush()
    proxy.fail(status)
    during = _logged(sink, ["2", "3"])
    with pytest.raises(EventWriteError, match=url):
        sink.flush()
    proxy.fail(None)
    sink.flush()
    sink.close()
    assert _records(server, prefix) == before + during


def test_missing_credentials_fail_at_the_constructor(
    stack: tuple[MotoServer, FaultProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    import s3fs

    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    s3fs.S3FileSystem.clear_instance_cache()
    url = f"s3://{BUCKET}/{_prefix()}"
    try:
        with pytest.raises(EventWriteError, match=rf"{url}.*credentials"):
            SegmentSink(url)
    finally:
        s3fs.S3FileSystem.clear_instance_cache()


def test_bucket_deleted_mid_run(stack: tuple[MotoServer, FaultProxy]) -> None:
    import boto3

    server, _ = stack
    client = boto3.client("s3", endpoint_url=server.endpoint)
    bucket = f"doomed-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/run"
    sink = SegmentSink(url, flush_secs=3600)
    _logged(sink, ["before"])
    sink.flush()
    for key in list(list_objects_in(client, bucket)):
        client.delete_object(Bucket=bucket, Key=key)
    client.delete_bucket(Bucket=bucket)
    during = _logged(sink, ["during"])
    with pytest.raises(EventWriteError, match=rf"{url}.*bucket does not exist"):
        sink.flush()
    client.create_bucket(Bucket=bucket)
    sink.flush()
    sink.close()
    records = []
    for key in sorted(list_objects_in(client, bucket)):
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        records.extend(list(iter_records(body))[1:])
    assert records == during


def list_objects_in(client: object, bucket: str) -> list[str]:
    response = client.list_objects_v2(Bucket=bucket)  # type: ignore[attr-defined]
    return [item["Key"] for item in response.get("Contents", [])]


def test_summary_writer_on_s3_sub_runs(stack: tuple[MotoServer, FaultProxy]) -> None:
    server, _ = stack
    prefix = _prefix()
    with SummaryWriter(SegmentSink(f"s3://{BUCKET}/{prefix}")) as writer:
        writer.add_scalars("acc", {"train": 1.0, "eval": 2.0}, 0)
    keys = list_objects(server.endpoint, prefix + "/")
    assert {k.split("/")[-2] for k in keys} == {prefix.split("/")[-1], "acc_train", "acc_eval"}
    assert all(key.startswith(prefix + "/") for key in keys)


def test_open_records_are_uploaded_at_exit(stack: tuple[MotoServer, FaultProxy]) -> None:
    import subprocess
    import sys

    server, _ = stack
    prefix = _prefix()
    code = (
        "import npsummary\n"
        f"sink = npsummary.SegmentSink('s3://{BUCKET}/{prefix}', flush_secs=3600)\n"
        "for i in range(3): sink.write(b'exit-%d' % i)\n"
        "# no flush, no close: the interpreter's exit uploads the open records\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert _records(server, prefix) == [b"exit-0", b"exit-1", b"exit-2"]


def test_forked_child_writes_segments_of_its_own(stack: tuple[MotoServer, FaultProxy]) -> None:
    import subprocess
    import sys

    server, _ = stack
    prefix = _prefix()
    code = (
        "import os, npsummary\n"
        f"sink = npsummary.SegmentSink('s3://{BUCKET}/{prefix}', flush_secs=3600)\n"
        "sink.write(b'parent-before'); sink.flush()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sink.write(b'child'); sink.flush(); os._exit(0)\n"
        "assert os.waitpid(pid, 0)[1] == 0\n"
        "sink.write(b'parent-after'); sink.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    by_writer: dict[str, list[bytes]] = {}
    for key, data in sorted(list_objects(server.endpoint, prefix + "/").items()):
        stem = key.rsplit(".", 1)[0]
        by_writer.setdefault(stem, []).extend(list(iter_records(data))[1:])
    assert sorted(by_writer.values()) == [[b"child"], [b"parent-before", b"parent-after"]]
