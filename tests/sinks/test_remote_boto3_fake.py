"""The boto3 path for ``s3://`` (issue 21) on an in-memory stand-in for the S3 client
(tests/support/fakes3.py), so it runs where boto3 is not installed, and plays the stores moto
cannot: ``If-None-Match`` honoured, ignored, refused with 501, or unknown to botocore. The same
promises as on moto (test_remote_boto3.py, test_remote_s3_clients.py): the writer's and the
reader's rule, every record back, no name ever replaced, a lost answer not repeated, failures
kept and retried, errors that name the URL."""

from __future__ import annotations

import errno
import itertools
import re
from typing import Any

import numpy as np
import pytest

from fakes3 import FakeClientError, FakeS3
from npsummary import EventWriteError, SummaryWriter, reader
from npsummary._format.record import iter_records
from npsummary._sinks import boto_s3, location
from npsummary._sinks.boto_s3 import S3Location, os_error, split_s3_url
from npsummary._sinks.segments import SegmentSink
from npsummary.reader._storage import boto_store
from segment_names import colliding_names

pytestmark = pytest.mark.remote

BUCKET = "fake-bucket"
WALL0 = 1_700_000_000.0


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> FakeS3:
    """The fake store, with the rule seeing boto3 installed and s3fs missing."""
    fake = FakeS3(BUCKET)
    connects = itertools.count(1)

    def connect(pool: int | None = None) -> FakeS3:
        fake.connects = next(connects)  # type: ignore[attr-defined]
        return fake

    monkeypatch.setattr(boto_s3, "connect", connect)
    monkeypatch.setattr(location, "_importable", lambda name: name == "boto3")
    return fake


def _payloads(store: FakeS3, prefix: str) -> list[bytes]:
    out: list[bytes] = []
    for key, data in sorted(store.buckets[BUCKET].items()):
        if key.rpartition("/")[0] == prefix and "tfevents" in key:
            records = list(iter_records(data))
            assert b"brain.Event:2" in records[0], key
            out.extend(records[1:])
    return out


def test_a_run_written_and_read_back(store: FakeS3) -> None:
    url = f"s3://{BUCKET}/runs/a"
    with SummaryWriter(url, flush_secs=3600) as writer:
        assert isinstance(writer.sink._state.location, S3Location)  # type: ignore[attr-defined]
        for step in range(7):
            writer.add_scalar("loss", float(step), step, walltime=WALL0 + step)
        writer.add_scalars("acc", {"train": 1.0, "eval": 2.0}, 0, walltime=WALL0)
        writer.add_embedding(np.eye(3), metadata=["a", "b", "c"], tag="emb", global_step=1)
        writer.add_embedding(np.ones((2, 2)), tag="two", global_step=1)
    keys = set(store.buckets[BUCKET])
    assert {"runs/a/00001/emb/tensors.tsv", "runs/a/00001/emb/metadata.tsv"} <= keys
    assert "runs/a/00001/two/tensors.tsv" in keys
    config = store.buckets[BUCKET]["runs/a/projector_config.pbtxt"].decode()
    assert config.count("embeddings {") == 2
    scalars = reader.scalars(f"s3://{BUCKET}/runs")
    assert sorted(scalars) == [("a", "loss"), ("a/acc_eval", "acc"), ("a/acc_train", "acc")]
    assert scalars[("a", "loss")].values.tolist() == [float(s) for s in range(7)]
    assert scalars[("a/acc_train", "acc")].values.tolist() == [1.0]


@pytest.mark.parametrize("condition", ["honoured", "ignored", "refused", "unknown"])
def test_a_taken_name_is_never_replaced(
    condition: str, store: FakeS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.condition = condition
    colliding_names(monkeypatch)
    first = SegmentSink(f"s3://{BUCKET}/run", flush_secs=3600)
    first.write(b"first")
    first.flush()
    before = dict(store.buckets[BUCKET])
    second = SegmentSink(f"s3://{BUCKET}/run", flush_secs=3600)  # the same names
    second.write(b"second")
    second.close()
    first.close()
    after = store.buckets[BUCKET]
    assert {k: after[k] for k in before} == before, "an object was replaced"
    assert sorted(_payloads(store, "run")) == [b"first", b"second"]
    conditional = second._state.location._client.conditional  # type: ignore[attr-defined]
    assert conditional is (condition in ("honoured", "ignored"))


@pytest.mark.parametrize("condition", ["honoured", "ignored", "refused", "unknown"])
def test_a_lost_answer_is_not_repeated_and_other_bytes_are_refused(
    condition: str, store: FakeS3
) -> None:
    store.condition = condition
    run = S3Location(f"s3://{BUCKET}/run/")
    run.put("x", b"bytes")
    run.put("x", b"bytes")  # the retry of a put whose answer was lost
    with pytest.raises(FileExistsError, match=rf"s3://{BUCKET}/run/x already exists"):
        run.put("x", b"other")
    assert store.buckets[BUCKET] == {"run/x": b"bytes"} and store.puts == 1
    run.replace("x", b"new")  # the projector's config: replaced on purpose
    assert run.read("x") == b"new" and run.read("y") is None


def test_write_only_credentials_still_upload(store: FakeS3) -> None:
    store.refuse_heads = True
    S3Location(f"s3://{BUCKET}").put("top", b"level")
    assert store.buckets[BUCKET] == {"top": b"level"}


def test_failed_uploads_are_kept_and_retried_in_order(store: FakeS3) -> None:
    url = f"s3://{BUCKET}/run"
    sink = SegmentSink(url, flush_secs=3600)
    sink.write(b"1")
    sink.flush()
    store.fail_puts = 503
    sink.write(b"2")
    sink.write(b"3")
    with pytest.raises(EventWriteError, match=rf"{url}/events\.out\.tfevents\..*InternalError"):
        sink.flush()
    store.fail_puts = None
    sink.write(b"4")
    sink.close()
    assert _payloads(store, "run") == [b"1", b"2", b"3", b"4"]


def test_a_missing_bucket(store: FakeS3) -> None:
    url = "s3://missing-bucket/run"
    with pytest.raises(EventWriteError, match=rf"{url}.*NoSuchBucket"):
        SummaryWriter(url)
    missing = S3Location(url)
    with pytest.raises(FileNotFoundError, match=url):
        missing.read("x")  # not "no such object": the bucket itself is missing
    with pytest.raises(FileNotFoundError, match=url):
        missing.names()
    with pytest.raises(FileNotFoundError, match=url):
        missing.replace("x", b"")


def test_names_lists_the_objects_of_one_folder(store: FakeS3) -> None:
    run = S3Location(f"s3://{BUCKET}/run")
    for name in ("c", "a", "b", "sub/d", "sub/e"):
        run.put(name, name.encode())
    store.buckets[BUCKET]["run/"] = b""  # a folder marker some tools create
    assert run.names() == ["a", "b", "c"]
    assert run.child("sub").names() == ["d", "e"]
    assert S3Location(f"s3://{BUCKET}/none").names() == []


def test_the_client_is_made_again_after_fork(store: FakeS3) -> None:
    run = S3Location(f"s3://{BUCKET}/run")
    child = run.child("sub")
    run.put("a", b"1")
    made = store.connects  # type: ignore[attr-defined]
    child.reset_after_fork()  # one client per run, shared with its sub-runs: all reset
    run.put("b", b"2")
    assert store.connects == made + 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("NoSuchKey", 404, FileNotFoundError),
        ("NoSuchBucket", 404, FileNotFoundError),
        ("404", 404, FileNotFoundError),
        ("AccessDenied", 403, PermissionError),
        ("InvalidAccessKeyId", 403, PermissionError),
        ("PreconditionFailed", 412, FileExistsError),
        ("InternalError", 500, OSError),
        ("SlowDown", 503, OSError),
    ],
)
def test_errors_are_os_errors_naming_the_url(code: str, status: int, kind: type) -> None:
    error = os_error(FakeClientError(code, status, "PutObject"), "s3://b/k")
    assert type(error) is kind and "s3://b/k" in str(error) and code in str(error)


def test_other_failures_are_io_errors() -> None:
    error = os_error(RuntimeError("Unable to locate credentials"), "s3://b/k")
    assert type(error) is OSError and error.errno == errno.EIO
    assert re.search("s3://b/k.*credentials", str(error))


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3://bucket", ("bucket", "")),
        ("s3://bucket/", ("bucket", "")),
        ("s3://bucket/a/b/", ("bucket", "a/b")),
        ("S3://bucket//a", ("bucket", "a")),
    ],
)
def test_split_s3_url(url: str, expected: tuple[str, str]) -> None:
    assert split_s3_url(url) == expected


@pytest.mark.parametrize("url", ["s3://", "s3:///run"])
def test_a_url_without_a_bucket(url: str, store: FakeS3) -> None:
    with pytest.raises(ValueError, match="names a bucket"):
        SummaryWriter(url)
    with pytest.raises(ValueError, match="names a bucket"):
        list(reader.events(url))


def test_the_reader_filesystem(store: FakeS3) -> None:
    fs = boto_store.BotoS3FileSystem(f"s3://{BUCKET}")
    objects = {"logs/r1/events.out.tfevents.1": b"x" * 5, "logs/r2/events.out.tfevents.2": b""}
    objects.update({f"logs/r1/f{i}": b"y" for i in range(5)})  # several pages of listing
    store.buckets[BUCKET].update(objects)
    root = f"s3://{BUCKET}"
    assert fs.isdir(root) and fs.isdir(f"{root}/logs") and fs.isdir(f"{root}/logs/r1/")
    assert fs.listdir(root) == ["logs"]
    assert sorted(fs.listdir(f"{root}/logs")) == ["r1", "r2"]
    listed = fs.listdir(f"{root}/logs/r1")
    assert sorted(listed) == ["events.out.tfevents.1", *[f"f{i}" for i in range(5)]]
    assert not fs.isdir(f"{root}/logs/r1/f0")
    assert fs.size(fs.join(f"{root}/logs/r1/", "/events.out.tfevents.1")) == 5
    assert fs.size(f"{root}/logs/r2/events.out.tfevents.2") == 0  # asked, not listed
    assert not fs.isdir(f"{root}/nothing")
    for directory in (root, f"{root}/logs"):
        with pytest.raises(IsADirectoryError):
            fs.size(directory)
    with pytest.raises(FileNotFoundError):
        fs.size(f"{root}/nothing")
    with pytest.raises(FileNotFoundError):
        fs.listdir(f"{root}/nothing")
    with pytest.raises(FileNotFoundError, match="nothing"):
        fs.open(f"{root}/nothing")
    with fs.open(f"{root}/logs/r1/events.out.tfevents.1") as f:
        assert f.read(2) == b"xx" and f.read() == b"xxx" and f.read(1) == b""


def test_a_read_that_fails_midway_is_an_os_error(store: FakeS3) -> None:
    class Broken:
        def read(self, size: Any = None) -> bytes:
            raise FakeClientError("InternalError", 500, "GetObject")

        def close(self) -> None:
            pass

    body = boto_store._Body(Broken(), "s3://b/k")
    with pytest.raises(OSError, match="s3://b/k"), body:
        body.read(10)


def test_the_reader_lists_a_sweep_in_pages_and_fetches_each_object_once(
    store: FakeS3, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,500 objects (1,250 runs): three listing pages of 1,000 keys, one GET per event file,
    from more than one thread; a file gone between listing and fetch is named in the error."""
    from npsummary._format.record import frame_record
    from npsummary.proto import Event

    event = Event(wall_time=WALL0, step=3)
    event.summary.value.add(tag="x", simple_value=1.5)
    data = frame_record(event.SerializeToString())
    for i in range(1250):
        store.buckets[BUCKET][f"sweep/r{i:04d}/events.out.tfevents.1"] = data
        store.buckets[BUCKET][f"sweep/r{i:04d}/notes.txt"] = b"x"
    calls: list[str] = []
    threads: set[str] = set()
    listing, get = store.list_objects_v2, store.get_object

    def list_objects_v2(**kwargs: Any) -> dict[str, Any]:
        calls.append("list")
        assert "Delimiter" not in kwargs  # one recursive listing, not one per folder
        return listing(**kwargs)

    def get_object(**kwargs: Any) -> dict[str, Any]:
        import threading

        calls.append("get")
        threads.add(threading.current_thread().name)
        return get(**kwargs)

    monkeypatch.setattr(store, "list_objects_v2", list_objects_v2)
    monkeypatch.setattr(store, "get_object", get_object)
    series = reader.scalars(f"s3://{BUCKET}/sweep")
    assert len(series) == 1250 and series[("r0007", "x")].values.tolist() == [1.5]
    assert calls.count("list") == 3 and calls.count("get") == 1250 and len(calls) == 1253
    assert len(threads) > 1
    gone = "sweep/r0100/events.out.tfevents.1"

    def missing(**kwargs: Any) -> dict[str, Any]:
        if kwargs["Key"] == gone:
            raise FakeClientError("NoSuchKey", 404, "GetObject")
        return get(**kwargs)

    monkeypatch.setattr(store, "get_object", missing)
    with pytest.raises(FileNotFoundError, match=re.escape(f"s3://{BUCKET}/{gone}")):
        reader.scalars(f"s3://{BUCKET}/sweep")
