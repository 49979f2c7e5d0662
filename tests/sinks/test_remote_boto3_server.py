"""``s3://`` logdirs written with boto3 (s3fs hidden) to a real S3 endpoint: ``moto_server`` on
127.0.0.1 behind the fault proxy (tests/support/s3server.py), found through ``S3_ENDPOINT`` alone,
as tensorboardX and TensorBoard find it. Runs are read back by stock TensorBoard (its own boto3 S3
reader) and by npsummary's reader and CLI; the faults of a remote store (endpoint down and back,
5xx/403 answers, missing credentials, bucket deleted) lose nothing; open records are uploaded at
exit; a forked child writes segments of its own. Skipped where boto3 or moto[server] is missing;
CI's stage 50 installs them."""

from __future__ import annotations

import io
import subprocess
import sys
import uuid
from collections.abc import Iterator

import numpy as np
import pytest

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
)

pytestmark = pytest.mark.remote

pytest.importorskip("boto3", reason="the boto3 S3 tests need boto3 and moto[server]")
pytest.importorskip("moto", reason="the boto3 S3 tests need moto[server]")

WALL0 = 1_700_000_000.0
GRAY = np.arange(48, dtype=np.uint8).reshape(6, 8) * 5


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    with boto3_stack() as servers:
        yield servers


@pytest.fixture
def proxy(stack: tuple[MotoServer, FaultProxy]) -> Iterator[FaultProxy]:
    yield stack[1]
    stack[1].heal()


def _prefix() -> str:
    return f"runs/{uuid.uuid4().hex}"


def _records(server: MotoServer, prefix: str) -> list[bytes]:
    return run_records(server.endpoint, prefix)


def _logged(sink: SegmentSink, names: list[str]) -> list[bytes]:
    payloads = [name.encode() for name in names]
    for payload in payloads:
        sink.write(payload)
    return payloads


def test_the_client_goes_through_s3_endpoint(stack: tuple[MotoServer, FaultProxy]) -> None:
    from npsummary._sinks.boto_s3 import S3Location

    server, proxy = stack
    prefix = _prefix()
    proxy.reset_counts()
    with SummaryWriter(f"s3://{BUCKET}/{prefix}") as writer:
        assert isinstance(writer.sink._state.location, S3Location)  # type: ignore[attr-defined]
        writer.add_scalar("x", 1.0, 0)
    assert proxy.requests >= 2, "uploads did not go to S3_ENDPOINT"
    assert len(_records(server, prefix)) == 1


def test_stock_tensorboard_and_npsummary_read_the_bucket(
    stack: tuple[MotoServer, FaultProxy],
) -> None:
    from PIL import Image

    from tbserver import tensorboard

    root = f"s3://{BUCKET}/{_prefix()}"
    with SummaryWriter(f"{root}/tbx", flush_secs=3600) as writer:
        for step in range(20):
            writer.add_scalar("loss", 0.1 * step - 0.35, step, walltime=WALL0 + step)
        writer.add_image("gray", GRAY, 1, dataformats="HW", walltime=WALL0)
        writer.add_embedding(np.eye(3), metadata=["a", "b", "c"], tag="emb")
    with tensorboard(root, "false") as tb:  # TensorBoard's own S3 reader: boto3, S3_ENDPOINT
        tags = tb.wait_for(lambda: (t := tb.get_json("/data/plugin/scalars/tags")) and t)
        assert set(tags) == {"tbx"} and set(tags["tbx"]) == {"loss"}

        def points() -> list[list[float]] | None:
            data = tb.get_json("/data/plugin/scalars/scalars", run="tbx", tag="loss")
            return data if len(data) == 20 else None

        expected = [[WALL0 + s, s, float(np.float32(0.1 * s - 0.35))] for s in range(20)]
        assert tb.wait_for(points) == expected
        tb.wait_for(lambda: "gray" in tb.get_json("/data/plugin/images/tags").get("tbx", {}))
        (entry,) = tb.wait_for(
            lambda: tb.get_json("/data/plugin/images/images", run="tbx", tag="gray", sample=0)
        )
        png = tb.get(f"/data/plugin/images/individualImage?{entry['query']}")
        rgb = np.repeat(GRAY[:, :, None], 3, axis=2)
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(png))), rgb)

    loss = reader.scalars(root, tags="loss")
    ((_, series),) = loss.items()
    np.testing.assert_array_equal(series.steps, np.arange(20))
    np.testing.assert_array_equal(series.values, np.float32(0.1 * np.arange(20) - 0.35))
    cli = HIDE_S3FS + "from npsummary._cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", cli, "inspect", root],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "loss" in result.stdout and "gray" in result.stdout


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


@pytest.mark.parametrize("status", [500, 503, 403])
def test_error_responses(
    status: int, stack: tuple[MotoServer, FaultProxy], proxy: FaultProxy
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
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    url = f"s3://{BUCKET}/{_prefix()}"
    with pytest.raises(EventWriteError, match=rf"{url}.*credentials"):
        SummaryWriter(url)


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
    for item in client.list_objects_v2(Bucket=bucket).get("Contents", []):
        client.delete_object(Bucket=bucket, Key=item["Key"])
    client.delete_bucket(Bucket=bucket)
    during = _logged(sink, ["during"])
    with pytest.raises(EventWriteError, match=rf"{url}.*(NoSuchBucket|does not exist)"):
        sink.flush()
    client.create_bucket(Bucket=bucket)
    sink.flush()
    sink.close()
    records = []
    for item in sorted(client.list_objects_v2(Bucket=bucket)["Contents"], key=lambda i: i["Key"]):
        body = client.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
        records.extend(list(iter_records(body))[1:])
    assert records == during


def test_open_records_are_uploaded_at_exit(stack: tuple[MotoServer, FaultProxy]) -> None:
    prefix = _prefix()
    code = HIDE_S3FS + (
        "import npsummary\n"
        f"writer = npsummary.SummaryWriter('s3://{BUCKET}/{prefix}', flush_secs=3600)\n"
        "for i in range(3): writer.add_scalar('exit', float(i), i)\n"
        "assert type(writer.sink._state.location).__name__ == 'S3Location'\n"
        "# no flush, no close: the interpreter's exit uploads the open records\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    values = reader.scalars(f"s3://{BUCKET}/{prefix}", tags="exit")
    ((_, series),) = values.items()
    np.testing.assert_array_equal(series.values, [0.0, 1.0, 2.0])


def test_forked_child_writes_segments_of_its_own(stack: tuple[MotoServer, FaultProxy]) -> None:
    server, _ = stack
    prefix = _prefix()
    code = HIDE_S3FS + (
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
