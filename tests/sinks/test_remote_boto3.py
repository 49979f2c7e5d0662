"""``s3://`` logdirs written with boto3 where s3fs is missing (issue 21), against moto's in-process
S3 mock (``mock_s3``, ``mock_aws`` in moto 5): the rule that picks boto3, the objects written (the
same names and bytes as the fsspec path writes), read back by npsummary's reader record by record,
the projector's files, and the reliability promises (a taken name never replaced, a lost answer
never duplicated, failed uploads kept and retried in order, clear errors).

s3fs is hidden from every test here (``sys.modules["s3fs"] = None``), so they run the same with or
without it installed. Skipped where boto3 or moto is missing; CI's stage 50 installs them.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from npsummary import EventWriteError, SummaryWriter, reader
from npsummary._format.record import iter_records
from npsummary._sinks.location import Location, open_location, through_boto3
from npsummary._sinks.segments import SegmentSink
from segment_names import colliding_names

pytestmark = pytest.mark.remote

BUCKET = "npsummary-boto3"
WALL0 = 1_700_000_000.0
SEGMENT_NAME = re.compile(
    r"events\.out\.tfevents\.\d{10}\.[^.]+\.\d+\.\d{4}\.[0-9a-f]{16}\.\d{8}(\.[\w.-]+)?"
)


def _hide_s3fs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "s3fs", None)  # import s3fs -> ImportError


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A boto3 client on moto's in-process S3 (empty bucket ``BUCKET``), s3fs hidden."""
    boto3 = pytest.importorskip("boto3", reason="the boto3 S3 tests need boto3")
    moto = pytest.importorskip("moto", reason="the boto3 S3 tests need moto")
    mock = getattr(moto, "mock_s3", None) or getattr(moto, "mock_aws", None)
    if mock is None:
        pytest.skip("this moto has neither mock_s3 nor mock_aws")
    _hide_s3fs(monkeypatch)
    for name in ("S3_ENDPOINT", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    with mock():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _objects(client: Any, prefix: str) -> dict[str, bytes]:
    """Every object under ``prefix/``, by key relative to it."""
    out: dict[str, bytes] = {}
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix + "/")
    for page in pages:
        for item in page.get("Contents", []):
            body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            out[item["Key"][len(prefix) + 1 :]] = body
    return out


def _payloads(objects: dict[str, bytes], folder: str = "") -> list[bytes]:
    """The records of the event files directly in ``folder``, in name order, headers left out."""
    out: list[bytes] = []
    for key, data in sorted(objects.items()):
        where, _, name = key.rpartition("/")
        if where != folder or "tfevents" not in name:
            continue
        records = list(iter_records(data))
        assert b"brain.Event:2" in records[0], key
        out.extend(records[1:])
    return out


def _prefix() -> str:
    return f"runs/{uuid.uuid4().hex}"


# -- which way a URL is written -------------------------------------------------------------------


def test_neither_s3fs_nor_boto3_is_an_import_error_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _hide_s3fs(monkeypatch)
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(ImportError, match=r"s3://b/run.*s3fs.*boto3"):
        SummaryWriter("s3://b/run")
    with pytest.raises(ImportError, match=r"s3fs.*boto3"):
        list(reader.events("s3://b/run"))


def test_s3_urls_without_s3fs_go_through_boto3_and_nothing_else_does(
    s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npsummary._sinks.boto_s3 import S3Location

    assert isinstance(open_location(f"s3://{BUCKET}/run"), S3Location)
    assert isinstance(open_location(f"S3://{BUCKET}/run"), S3Location)
    assert isinstance(open_location("memory://bucket/run"), Location)
    fsspec = pytest.importorskip("fsspec")
    given = fsspec.filesystem("memory")
    assert isinstance(open_location(f"s3://{BUCKET}/run", given), Location)
    assert not through_boto3(f"simplecache::s3://{BUCKET}/run")  # chained: fsspec's own
    monkeypatch.delitem(sys.modules, "s3fs")
    if importlib.util.find_spec("s3fs") is not None:
        assert isinstance(open_location(f"s3://{BUCKET}/run"), Location)  # s3fs preferred


def test_a_url_without_a_bucket_is_a_value_error(s3: Any) -> None:
    with pytest.raises(ValueError, match="bucket"):
        SummaryWriter("s3://")
    with pytest.raises(ValueError, match="bucket"):
        SegmentSink("s3:///run")


def test_s3_endpoint_is_honoured(s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from npsummary._sinks.boto_s3 import connect

    monkeypatch.setenv("S3_ENDPOINT", "http://127.0.0.1:9")
    assert connect().meta.endpoint_url == "http://127.0.0.1:9"
    monkeypatch.setenv("S3_ENDPOINT", "")  # empty: boto3's own choice, as tensorboardX
    assert "amazonaws.com" in connect().meta.endpoint_url


# -- what is written ------------------------------------------------------------------------------


def _log(writer: SummaryWriter, embeddings: bool = True) -> None:
    """Every kind of record, at fixed wall times (the same on each logdir)."""
    rng = np.random.default_rng(11)
    for step in range(30):
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=WALL0 + step)
    writer.add_scalars("acc", {"train": 0.5, "eval": 0.25}, 3, walltime=WALL0)
    for step in range(3):
        writer.add_histogram("w", rng.normal(step, 1, 300), step, walltime=WALL0 + step)
    writer.add_image("img", rng.random((3, 8, 8)), 1, walltime=WALL0)
    writer.add_text("note", "hello s3", 2, walltime=WALL0)
    if not embeddings:  # a writer on a sink has no logdir for the projector's files
        return
    writer.add_embedding(
        np.arange(12.0).reshape(4, 3),
        metadata=["a", "b", "c", "d"],
        label_img=np.zeros((4, 3, 5, 5)),
        global_step=2,
        tag="emb",
    )
    writer.add_embedding(np.eye(3), global_step=5)


def _runs(objects: dict[str, bytes]) -> dict[str, list[bytes]]:
    folders = {key.rpartition("/")[0] for key in objects if "tfevents" in key}
    return {folder: _payloads(objects, folder) for folder in sorted(folders)}


def test_a_summary_writer_stores_what_the_fsspec_path_stores(s3: Any) -> None:
    fsspec = pytest.importorskip("fsspec", reason="the reference run is written to memory://")
    prefix = _prefix()
    with SummaryWriter(f"s3://{BUCKET}/{prefix}", flush_secs=3600) as writer:
        _log(writer)
    reference = f"memory://reference/{uuid.uuid4().hex}"
    with SummaryWriter(reference, flush_secs=3600) as writer:
        _log(writer)
    fs, root = fsspec.core.url_to_fs(reference)
    expected = {p[len(root) + 1 :]: fs.cat_file(p) for p in fs.find(root)}
    stored = _objects(s3, prefix)

    # Event files: the same runs, every record the same, in the same order.
    assert _runs(stored) == _runs(expected)
    assert set(_runs(stored)) == {"", "acc_train", "acc_eval"}
    for key in stored:
        if "tfevents" in key:
            assert SEGMENT_NAME.fullmatch(key.rpartition("/")[2]), key

    # The projector's files: the same names and bytes (one config block per embedding, whose
    # object name is random).
    def files(objects: dict[str, bytes]) -> dict[str, bytes]:
        return {k: v for k, v in objects.items() if "tfevents" not in k and ".d/" not in k}

    def blocks(objects: dict[str, bytes]) -> list[bytes]:
        return sorted(v for k, v in objects.items() if k.startswith("projector_config.d/"))

    assert files(stored) == files(expected)
    assert "00002/emb/sprite.png" in stored and "00005/default/tensors.tsv" in stored
    assert blocks(stored) == blocks(expected) and len(blocks(stored)) == 2


def test_npsummary_reads_the_run_back_record_by_record(s3: Any) -> None:
    prefix = _prefix()
    url = f"s3://{BUCKET}/{prefix}"
    with SummaryWriter(SegmentSink(url, segment_bytes=400, flush_secs=3600)) as writer:
        _log(writer, embeddings=False)
    stored = _objects(s3, prefix)
    written = [r for records in _runs(stored).values() for r in records]
    assert len([k for k in stored if "tfevents" in k]) > 5, "small segments: many objects"
    stats = reader.ReadStats()
    read = [
        e.SerializeToString()
        for e in reader.events(url, strict=True, stats=stats)
        if not e.file_version
    ]
    assert read == written  # every record, each once, in the runs' order
    assert (stats.corrupt_records, stats.torn_tails) == (0, 0)
    loss = reader.scalars(url, tags="loss")
    ((_, series),) = [(k, v) for k, v in loss.items() if k[0] == "."]
    np.testing.assert_array_equal(series.steps, np.arange(30))
    np.testing.assert_allclose(series.values, 1.0 / (np.arange(30) + 1), rtol=1e-6)


def test_segments_are_uploaded_whole_in_name_order(s3: Any) -> None:
    prefix = _prefix()
    sink = SegmentSink(f"s3://{BUCKET}/{prefix}", segment_bytes=200, flush_secs=3600)
    payloads = [f"record {i}".encode() * (1 + i % 7) for i in range(100)]
    for payload in payloads:
        sink.write(payload)
    sink.close()
    stored = _objects(s3, prefix)
    assert _payloads(stored) == payloads
    assert sorted(stored) == sink.uploaded_segments()
    assert sink.uploaded_objects == len(stored)
    assert sink.uploaded_bytes == sum(len(v) for v in stored.values())
    assert sink.read_segment(sink.uploaded_segments()[-1]) == stored[sorted(stored)[-1]]
    with pytest.raises(FileNotFoundError):
        sink.read_segment("missing")


# -- reliability ----------------------------------------------------------------------------------


def test_a_taken_name_is_never_replaced(s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """moto 4 ignores If-None-Match: the check before the put is what finds the name taken."""
    prefix = _prefix()
    colliding_names(monkeypatch)
    first = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=3600)
    first.write(b"first")
    first.flush()
    before = _objects(s3, prefix)
    second = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=3600)  # the same names
    second.write(b"second")
    second.close()
    first.close()
    after = _objects(s3, prefix)
    assert {k: after[k] for k in before} == before, "an object was replaced"
    assert sorted(_payloads(after)) == [b"first", b"second"]


def test_a_put_whose_answer_was_lost_is_not_repeated(s3: Any) -> None:
    from npsummary._sinks.boto_s3 import S3Location

    prefix = _prefix()
    location = S3Location(f"s3://{BUCKET}/{prefix}")
    location.put("a", b"bytes")
    location.put("a", b"bytes")  # the retry finds its own object: done
    with pytest.raises(FileExistsError, match=rf"s3://{BUCKET}/{prefix}/a already exists"):
        location.put("a", b"other bytes")
    assert _objects(s3, prefix) == {"a": b"bytes"}
    assert location.names() == ["a"]
    assert location.read("a") == b"bytes" and location.read("missing") is None


def test_write_only_credentials_still_upload(s3: Any) -> None:
    """A policy that allows PutObject but not GetObject: the check before a put is refused
    (403) and skipped; the upload goes through, as tensorboardX's would."""
    from botocore.exceptions import ClientError

    from npsummary._sinks.boto_s3 import S3Location

    class WriteOnly:
        def __init__(self, client: Any) -> None:
            self._client = client

        def head_object(self, **kwargs: Any) -> Any:
            error = {"Error": {"Code": "403", "Message": "Forbidden"}}
            error["ResponseMetadata"] = {"HTTPStatusCode": 403}  # type: ignore[dict-item]
            raise ClientError(error, "HeadObject")

        def __getattr__(self, name: str) -> Any:
            return getattr(self._client, name)

    prefix = _prefix()
    location = S3Location(f"s3://{BUCKET}/{prefix}")
    location._client.client = WriteOnly(location._client.get())
    location.put("segment", b"bytes")
    assert _objects(s3, prefix) == {"segment": b"bytes"}


class _Flaky:
    """A boto3 client whose writes fail while ``failing`` (an S3 503), else pass through."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.failing = False
        self.meta = client.meta

    def put_object(self, **kwargs: Any) -> Any:
        if self.failing:
            from botocore.exceptions import ClientError

            error = {"Error": {"Code": "SlowDown", "Message": "injected 503"}}
            error["ResponseMetadata"] = {"HTTPStatusCode": 503}  # type: ignore[dict-item]
            raise ClientError(error, "PutObject")
        return self._client.put_object(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_failed_uploads_are_kept_and_retried_in_order(s3: Any) -> None:
    prefix = _prefix()
    url = f"s3://{BUCKET}/{prefix}"
    sink = SegmentSink(url, flush_secs=3600)
    connection = sink._state.location._client  # type: ignore[attr-defined]
    flaky = connection.client = _Flaky(connection.get())
    sink.write(b"before")
    sink.flush()
    flaky.failing = True
    sink.write(b"during-1")
    sink.write(b"during-2")
    with pytest.raises(EventWriteError, match=rf"{url}/events\.out\.tfevents\..*SlowDown"):
        sink.flush()
    sink.write(b"during-3")
    with pytest.raises(EventWriteError, match=url):
        sink.flush()
    flaky.failing = False
    sink.flush()
    sink.write(b"after")
    sink.close()
    assert _payloads(_objects(s3, prefix)) == [
        b"before",
        b"during-1",
        b"during-2",
        b"during-3",
        b"after",
    ]


def test_a_missing_bucket_fails_at_the_constructor_naming_the_url(s3: Any) -> None:
    url = "s3://no-such-bucket-here/run"
    with pytest.raises(EventWriteError, match=rf"{url}.*(NoSuchBucket|does not exist)"):
        SummaryWriter(url)
    with pytest.raises(FileNotFoundError, match=url):
        open_location(url).replace("x", b"")  # the projector's files: an OSError naming it


def test_add_embedding_errors_name_the_url_and_write_nothing(s3: Any) -> None:
    prefix = _prefix()
    with SummaryWriter(f"s3://{BUCKET}/{prefix}") as writer:
        with pytest.raises(ValueError, match="label_img"):
            writer.add_embedding(np.eye(3), label_img=np.zeros((3, 1, 4, 5)))
        with pytest.raises(TypeError):
            writer.add_embedding(object())
        assert not [k for k in _objects(s3, prefix) if "tfevents" not in k]
        writer.add_embedding(np.eye(3), tag="ok")  # still usable
    assert "00000/ok/tensors.tsv" in _objects(s3, prefix)


def test_a_sink_dropped_without_close_is_uploaded_by_the_uploader(s3: Any) -> None:
    import gc

    from conftest import wait_for

    prefix = _prefix()
    sink = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=0.05)
    sink.write(b"dropped")
    del sink
    gc.collect()  # the finalizer only hands the state to the uploader: no lock, no I/O
    assert wait_for(lambda: _payloads(_objects(s3, prefix)) == [b"dropped"], timeout=30)


def test_boto3_alone_is_enough(s3: Any) -> None:
    """A tensorboardX user's environment: boto3, neither s3fs nor fsspec (hidden in a child)."""
    code = r"""
import sys
sys.modules["s3fs"] = None
sys.modules["fsspec"] = None
import boto3, moto, numpy as np
mock = getattr(moto, "mock_s3", None) or getattr(moto, "mock_aws")
with mock():
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="alone")
    from npsummary import SummaryWriter, reader
    with SummaryWriter("s3://alone/run") as writer:
        writer.add_scalar("loss", 0.5, 1)
        writer.add_embedding(np.eye(2), metadata=["a", "b"], tag="emb")
    ((_, series),) = reader.scalars("s3://alone/run").items()
    assert series.values.tolist() == [0.5], series
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket="alone")["Contents"]}
    assert "run/00000/emb/tensors.tsv" in keys and "run/projector_config.pbtxt" in keys, keys
    assert sys.modules["fsspec"] is None
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_the_reader_on_s3_counts_what_a_local_read_counts(s3: Any, tmp_path: Any) -> None:
    """The same bytes, on S3 (read through boto3) and on disk: the same events and counts."""
    prefix = _prefix()
    local = tmp_path / "logs"
    with SummaryWriter(str(local / "a"), flush_secs=3600) as writer:
        for step in range(5):
            writer.add_scalar("loss", float(step), step, walltime=WALL0 + step)
    (event_file,) = (local / "a").iterdir()
    torn = event_file.read_bytes()[:-7]  # a torn tail: the last record cut short
    (local / "b").mkdir()
    (local / "b" / event_file.name).write_bytes(torn)
    for run in ("a", "b"):
        for path in (local / run).iterdir():
            s3.put_object(Bucket=BUCKET, Key=f"{prefix}/{run}/{path.name}", Body=path.read_bytes())
    url = f"s3://{BUCKET}/{prefix}"

    def read(where: str) -> tuple[list[bytes], tuple[int, ...]]:
        stats = reader.ReadStats()
        events = [e.SerializeToString() for e in reader.events(where, stats=stats)]
        return events, (stats.files, stats.records, stats.bytes, stats.torn_tails)

    assert read(url) == read(str(local))
    assert read(url)[1] == (2, 11, 2 * len(torn) + 7, 1)
    assert read(f"{url}/a/{event_file.name}") == read(str(event_file))  # one file
    with pytest.raises(FileNotFoundError):
        list(reader.events(f"{url}/missing"))
