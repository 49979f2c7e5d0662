"""``s3://`` runs written to a real S3 endpoint, once through each S3 client npsummary uses: s3fs
(``s3_stack``: moto_server on 127.0.0.1 behind the fault proxy of tests/support/s3server.py) and
boto3 with s3fs hidden (``boto3_stack``: the endpoint found through ``S3_ENDPOINT`` alone, as
tensorboardX and TensorBoard find it). Runs are read back by stock TensorBoard (its own boto3 S3
reader) and by npsummary's reader and CLI. The faults of a remote store (endpoint down and back,
the server process restarted, 5xx/403 answers, missing credentials, bucket deleted) lose nothing;
open records are uploaded at exit; a forked child writes segments of its own. A client whose
packages are missing is skipped; CI's stage 50 runs both."""

from __future__ import annotations

import io
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest

import npsummary
from conftest import wait_for
from npsummary import EventWriteError, SummaryWriter, reader
from npsummary._format.record import iter_records
from npsummary._sinks.segments import SegmentSink
from s3server import (
    BUCKET,
    HIDE_S3FS,
    FaultProxy,
    MotoServer,
    boto3_stack,
    list_objects,
    run_records,
    s3_stack,
)

pytestmark = pytest.mark.remote


@dataclass(frozen=True)
class Store:
    """A moto_server behind the fault proxy, reached through one S3 client."""

    client: str  # "s3fs" or "boto3"
    server: MotoServer
    proxy: FaultProxy
    prelude: str  # what a child process runs first to use the same client

    def url(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"

    def records(self, prefix: str) -> list[bytes]:
        return run_records(self.server.endpoint, prefix)


# The class of a run's location for each client: fsspec's file system, or boto3's own client.
LOCATION = {"s3fs": "Location", "boto3": "S3Location"}


@pytest.fixture(scope="module", params=["s3fs", "boto3"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    if request.param == "s3fs":
        with s3_stack() as (server, proxy):
            yield Store("s3fs", server, proxy, "")
    else:
        with boto3_stack() as (server, proxy):
            yield Store("boto3", server, proxy, HIDE_S3FS)


@pytest.fixture
def proxy(store: Store) -> Iterator[FaultProxy]:
    yield store.proxy
    store.proxy.heal()


def _prefix() -> str:
    return f"runs/{uuid.uuid4().hex}"


def _logged(sink: SegmentSink, names: list[str]) -> list[bytes]:
    payloads = [name.encode() for name in names]
    for payload in payloads:
        sink.write(payload)
    return payloads


WALL0 = 1_700_000_000.0
GRAY = (np.random.default_rng(5).random((7, 9)) * 255).astype(np.uint8)


def test_uploads_go_through_the_endpoint(store: Store) -> None:
    prefix = _prefix()
    store.proxy.reset_counts()
    with SummaryWriter(store.url(prefix)) as writer:
        assert type(writer.sink._state.location).__name__ == LOCATION[store.client]  # type: ignore[attr-defined]
        writer.add_scalar("x", 1.0, 0)
    assert store.proxy.requests >= 2, "uploads did not go to the configured endpoint"
    assert len(store.records(prefix)) == 1


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


@pytest.mark.live
def test_stock_tensorboard_and_npsummary_read_the_bucket(store: Store) -> None:
    from PIL import Image

    from npsummary._histogram import binned_histogram, tf2_buckets
    from npsummary.reader import legacy_to_buckets
    from tbserver import tensorboard

    root = store.url(_prefix())
    _tensorboard_run(root)
    with tensorboard(root, "false") as tb:  # TensorBoard's own S3 reader: boto3, S3_ENDPOINT
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

    ((_, series),) = reader.scalars(root, tags="loss").items()
    np.testing.assert_array_equal(series.steps, np.arange(20))
    np.testing.assert_array_equal(series.values, np.float32(0.1 * np.arange(20) - 0.35))
    cli = store.prelude + "from npsummary._cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", cli, "inspect", root], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "loss" in result.stdout and "gray" in result.stdout


def test_writes_go_to_the_bucket_in_name_order(store: Store) -> None:
    prefix = _prefix()
    sink = SegmentSink(store.url(prefix), segment_bytes=200, flush_secs=3600)
    payloads = [f"record {i}".encode() * (1 + i % 7) for i in range(100)]
    for payload in payloads:
        sink.write(payload)
    sink.close()
    assert store.records(prefix) == payloads
    assert sink.uploaded_objects == len(list_objects(store.server.endpoint, prefix + "/"))


def test_summary_writer_sub_runs_stay_under_the_prefix(store: Store) -> None:
    prefix = _prefix()
    with SummaryWriter(store.url(prefix)) as writer:
        writer.add_scalars("acc", {"train": 1.0, "eval": 2.0}, 0)
    keys = list_objects(store.server.endpoint, prefix + "/")
    assert {k.split("/")[-2] for k in keys} == {prefix.split("/")[-1], "acc_train", "acc_eval"}
    assert all(key.startswith(prefix + "/") for key in keys)


def test_endpoint_down_then_back(store: Store, proxy: FaultProxy) -> None:
    prefix = _prefix()
    url = store.url(prefix)
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
    assert store.records(prefix) == before + during + after


def test_server_process_restarted_mid_run(store: Store) -> None:
    import boto3

    prefix = _prefix()
    url = store.url(prefix)
    sink = SegmentSink(url, flush_secs=3600)
    _logged(sink, ["a"])
    sink.flush()
    store.server.stop()  # killed by PID: the proxy in front answers 502
    during = _logged(sink, ["b", "c"])
    with pytest.raises(EventWriteError, match=url):
        sink.flush()
    store.server.start()  # a new process on the same port; moto keeps objects in memory only
    boto3.client("s3", endpoint_url=store.server.endpoint).create_bucket(Bucket=BUCKET)
    sink.flush()
    sink.close()
    # What was flushed before went down with the old process's memory; what was logged during
    # the outage arrives once, in order.
    assert store.records(prefix) == during


def test_background_retry_after_the_endpoint_returns(store: Store, proxy: FaultProxy) -> None:
    prefix = _prefix()
    sink = SegmentSink(store.url(prefix), flush_secs=0.05)
    proxy.stop()
    logged = _logged(sink, ["x", "y"])
    assert wait_for(lambda: sink._state.failing, timeout=30)
    proxy.start()
    # No call: the background thread retries with backoff until it gets through.
    assert wait_for(lambda: not sink._state.sealed and not sink._state.pending, timeout=30)
    assert store.records(prefix) == logged
    with pytest.raises(EventWriteError, match="s3://"):
        sink.write(b"z")  # the failure is still reported, once
    sink.close()


@pytest.mark.parametrize("status", [500, 503, 403])
def test_error_responses(status: int, store: Store, proxy: FaultProxy) -> None:
    prefix = _prefix()
    url = store.url(prefix)
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
    assert store.records(prefix) == before + during


def test_missing_credentials_fail_at_the_constructor(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    s3fs = sys.modules.get("s3fs")
    if s3fs is not None:  # s3fs caches file systems with the credentials they were made with
        s3fs.S3FileSystem.clear_instance_cache()
    url = store.url(_prefix())
    try:
        with pytest.raises(EventWriteError, match=rf"{url}.*credentials"):
            SummaryWriter(url)
    finally:
        if s3fs is not None:
            s3fs.S3FileSystem.clear_instance_cache()


def test_bucket_deleted_mid_run(store: Store) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=store.server.endpoint)
    bucket = f"doomed-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    url = f"s3://{bucket}/run"
    sink = SegmentSink(url, flush_secs=3600)
    _logged(sink, ["before"])
    sink.flush()
    for key in _keys(client, bucket):
        client.delete_object(Bucket=bucket, Key=key)
    client.delete_bucket(Bucket=bucket)
    during = _logged(sink, ["during"])
    with pytest.raises(EventWriteError, match=rf"{url}.*(NoSuchBucket|does not exist)"):
        sink.flush()
    client.create_bucket(Bucket=bucket)
    sink.flush()
    sink.close()
    records = []
    for key in sorted(_keys(client, bucket)):
        body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        records.extend(list(iter_records(body))[1:])
    assert records == during


def _keys(client: object, bucket: str) -> list[str]:
    response = client.list_objects_v2(Bucket=bucket)  # type: ignore[attr-defined]
    return [item["Key"] for item in response.get("Contents", [])]


def test_open_records_are_uploaded_at_exit(store: Store) -> None:
    prefix = _prefix()
    code = store.prelude + (
        "import npsummary\n"
        f"writer = npsummary.SummaryWriter({store.url(prefix)!r}, flush_secs=3600)\n"
        "for i in range(3): writer.add_scalar('exit', float(i), i)\n"
        "print(type(writer.sink._state.location).__name__)\n"
        "# no flush, no close: the interpreter's exit uploads the open records\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=True, timeout=120, capture_output=True, text=True
    )
    assert done.stdout.split() == [LOCATION[store.client]]
    ((_, series),) = reader.scalars(store.url(prefix), tags="exit").items()
    np.testing.assert_array_equal(series.values, [0.0, 1.0, 2.0])


def test_forked_child_writes_segments_of_its_own(store: Store) -> None:
    prefix = _prefix()
    code = store.prelude + (
        "import os, npsummary\n"
        f"sink = npsummary.SegmentSink({store.url(prefix)!r}, flush_secs=3600)\n"
        "sink.write(b'parent-before'); sink.flush()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sink.write(b'child'); sink.flush(); os._exit(0)\n"
        "assert os.waitpid(pid, 0)[1] == 0\n"
        "sink.write(b'parent-after'); sink.close()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    by_writer: dict[str, list[bytes]] = {}
    for key, data in sorted(list_objects(store.server.endpoint, prefix + "/").items()):
        stem = key.rsplit(".", 1)[0]
        by_writer.setdefault(stem, []).extend(list(iter_records(data))[1:])
    assert sorted(by_writer.values()) == [[b"child"], [b"parent-before", b"parent-after"]]
