"""A sweep read from a real S3 endpoint (moto_server behind the fault proxy of
tests/support/s3server.py), once through s3fs and once through boto3 alone: what is read equals
the local copy and the walk-and-read-one-at-a-time path; a read makes one request per object
plus the listing's pages; requests overlap; throttling and 5xx answers are tried again; the final
error names the object; the bytes fetched ahead are bounded. Skipped where the clients or moto
are missing; CI's stage 50 runs it."""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from npsummary import SummaryWriter, reader
from npsummary._format.record import frame_record
from npsummary.proto import Event
from npsummary.reader._storage import options as fetch_options
from npsummary.reader._storage.boto_store import BotoS3FileSystem
from npsummary.reader._storage.fsspec_store import FsspecFileSystem
from remote_logdir import assert_same_logdata, same
from s3server import BUCKET, FaultProxy, MotoServer, boto3_stack, s3_stack

pytestmark = pytest.mark.remote

WALL0 = 1_700_000_000.0
RUNS = [f"lr{i}" for i in range(9)] + ["group/a", "group/b", "group/b/deeper"]


@dataclass(frozen=True)
class Store:
    client: str
    server: MotoServer
    proxy: FaultProxy
    prefix: str  # the sweep, uploaded once per client
    objects: int

    @property
    def url(self) -> str:
        return f"s3://{BUCKET}/{self.prefix}"


def _write_sweep(root: Path) -> None:
    """Runs of two event files each, nested runs, a file that is not an event file, a corrupt
    record and a torn tail."""
    rng = np.random.default_rng(11)
    for i, run in enumerate(RUNS):
        for part in (1, 2):
            with SummaryWriter(str(root / run), filename_suffix=f".{part}") as writer:
                for step in range(50 * (part - 1), 50 * part):
                    writer.add_scalar("loss", 1.0 / (step + i + 1), step, walltime=WALL0 + step)
                    writer.add_scalar("acc", step * 0.01 + i, step, walltime=WALL0 + step)
                writer.add_histogram("w", rng.normal(i, 1, 300), part, walltime=WALL0)
    (root / "lr0" / "notes.txt").write_text("not an event file")
    records = []
    for step in range(6):
        event = Event(wall_time=WALL0, step=step)
        event.summary.value.add(tag="x", simple_value=step)
        records.append(bytearray(frame_record(event.SerializeToString())))
    records[3][-1] ^= 1
    (root / "damaged").mkdir()
    (root / "damaged" / "events.out.tfevents.1.host").write_bytes(b"".join(records)[:-4])


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sweep")
    _write_sweep(root)
    return root


def _upload(server: MotoServer, local: Path, prefix: str) -> int:
    import boto3

    client = boto3.client("s3", endpoint_url=server.endpoint)
    files = [p for p in sorted(local.rglob("*")) if p.is_file()]
    for path in files:
        key = f"{prefix}/{path.relative_to(local).as_posix()}"
        client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())
    return len(files)


@pytest.fixture(scope="module", params=["s3fs", "boto3"])
def store(request: pytest.FixtureRequest, local: Path) -> Iterator[Store]:
    stack = s3_stack if request.param == "s3fs" else boto3_stack
    with stack() as (server, proxy):
        prefix = f"sweeps/{uuid.uuid4().hex}"
        yield Store(request.param, server, proxy, prefix, _upload(server, local, prefix))


@pytest.fixture
def proxy(store: Store) -> Iterator[FaultProxy]:
    saved = fetch_options.replace(fetch_options.FetchOptions(backoff=0.001))
    yield store.proxy
    fetch_options.replace(saved)
    store.proxy.heal()
    store.proxy.latency = 0.0


def _options(**changes: int) -> None:
    fetch_options.replace(dataclasses.replace(fetch_options.current(), **changes))


def test_the_sweep_reads_as_the_local_copy_and_the_serial_path(
    store: Store, proxy: FaultProxy, local: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = reader.load(store.url)
    assert remote.runs == sorted([*RUNS, "damaged"])
    assert (remote.stats.corrupt_records, remote.stats.torn_tails) == (1, 1)
    assert_same_logdata(remote, reader.load(local))
    events = [e.SerializeToString() for e in reader.events(store.url)]
    _options(concurrency=1)
    assert_same_logdata(reader.load(store.url), remote)
    for fs in (FsspecFileSystem, BotoS3FileSystem):  # the walk, one GET at a time
        monkeypatch.setattr(fs, "object_store", lambda self, path, options: None)
    proxy.reset_counts()
    assert_same_logdata(reader.load(store.url), remote)
    assert proxy.total() > store.objects + len(RUNS)  # a listing per folder, as it was
    assert [e.SerializeToString() for e in reader.events(store.url)] == events
    assert same(reader.scalars(f"{store.url}/group"), reader.scalars(local / "group"))


def test_one_request_per_object_and_listing_page(store: Store, proxy: FaultProxy) -> None:
    event_files = store.objects - 1  # notes.txt is listed, never fetched
    proxy.reset_counts()
    reader.scalars(store.url)
    stats = proxy.stats()
    assert stats["methods"] == {"GET": event_files + 1}, stats  # one listing page
    proxy.reset_counts()
    reader.scalars(store.url, runs="^group")  # the filter leaves out the other runs' files
    assert proxy.stats()["methods"] == {"GET": 3 * 2 + 1}


def test_requests_overlap(store: Store, proxy: FaultProxy) -> None:
    proxy.latency = 0.02  # a store's round trip: requests are in flight together
    proxy.reset_counts()
    reader.scalars(store.url)
    assert proxy.max_in_flight > 2, proxy.stats()
    _options(max_bytes_in_flight=1)  # one object ahead at a time
    proxy.reset_counts()
    reader.scalars(store.url)
    # The proxy counts a request until its handler returns, a moment after the client has the
    # answer and may have sent the next one: one fetch at a time shows as at most two.
    assert proxy.max_in_flight <= 2, proxy.stats()


@pytest.mark.parametrize("status", [503, 500])
def test_throttled_and_failed_requests_are_tried_again(
    store: Store, proxy: FaultProxy, status: int, local: Path
) -> None:
    proxy.fail_reads(status, times=2, match="lr3/")
    proxy.fail_reads(status, times=1, match="list-type=2")
    proxy.reset_counts()
    got = reader.load(store.url)
    assert_same_logdata(got, reader.load(local))
    assert proxy.stats()["methods"] == {"GET": store.objects - 1 + 1 + 3}


def test_the_final_error_names_the_object(store: Store, proxy: FaultProxy, local: Path) -> None:
    _options(attempts=3)
    first = sorted((local / "group/b/deeper").glob("*tfevents*"))[0]
    name = f"group/b/deeper/{first.name}"
    proxy.fail_reads(503, times=50, match=name)  # more than every client's tries together
    with pytest.raises(OSError, match=rf"{re.escape(f'{store.url}/{name}')}.*gave up after 3 att"):
        reader.scalars(store.url)
    proxy.heal()
    proxy.fail_reads(503, times=50, match="list-type=2")
    with pytest.raises(OSError, match=rf"{store.url}.*gave up after 3 attempts"):
        reader.scalars(store.url)
    proxy.heal()
    assert reader.scalars(store.url, runs="deeper")


def test_a_live_reader_lists_once_and_fetches_new_runs_ahead(
    store: Store, proxy: FaultProxy, local: Path
) -> None:
    import boto3

    event_files = store.objects - 1
    proxy.reset_counts()
    live = reader.Reader(store.url, kinds=["scalars"])
    first = live.scalars()
    assert proxy.stats()["methods"] == {"GET": event_files + 1}  # as reader.scalars: no HEADs
    assert same(first, reader.scalars(local))
    proxy.reset_counts()
    again = live.scalars()  # nothing new: the one listing, every size from it
    assert proxy.stats()["methods"] == {"GET": 1}
    assert all(again[key] is first[key] for key in first)
    # A new run appears (a copy of lr0 under another name): fetched whole, the rest untouched.
    client = boto3.client("s3", endpoint_url=store.server.endpoint)
    for path in sorted((local / "lr0").iterdir()):
        client.put_object(
            Bucket=BUCKET, Key=f"{store.prefix}/lr9/{path.name}", Body=path.read_bytes()
        )
    proxy.reset_counts()
    grown = live.scalars()
    copied = [p for p in (local / "lr0").iterdir() if "tfevents" in p.name]
    assert proxy.stats()["methods"] == {"GET": 1 + len(copied)}
    assert same(grown, reader.scalars(store.url))
