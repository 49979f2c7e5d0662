"""Issue 20 on a real S3 endpoint (moto_server on 127.0.0.1, through s3fs): segment names that
collide are never overwritten (S3's conditional put), several processes with the same PID write
one prefix, and the projector's config keeps every process's embeddings. Skipped where s3fs and
moto are not installed (the CI stage .ci/stages/50-remote.sh installs them)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from npsummary._format.record import iter_records
from npsummary._sinks.segments import SegmentSink
from s3server import BUCKET, FaultProxy, MotoServer, list_objects, s3_stack
from segment_names import colliding_names

pytestmark = pytest.mark.remote

pytest.importorskip("s3fs", reason="the S3 tests need s3fs (pip install s3fs 'moto[server]')")
pytest.importorskip("moto", reason="the S3 tests need moto[server]")


@pytest.fixture(scope="module")
def stack() -> Iterator[tuple[MotoServer, FaultProxy]]:
    with s3_stack() as servers:
        yield servers


def _payloads(objects: dict[str, bytes]) -> list[bytes]:
    out: list[bytes] = []
    for _key, data in sorted(objects.items()):
        out.extend(list(iter_records(data))[1:])
    return out


def test_a_taken_name_on_s3_is_never_overwritten(
    stack: tuple[MotoServer, FaultProxy], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, _ = stack
    prefix = f"runs/{uuid.uuid4().hex}"
    colliding_names(monkeypatch)
    first = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=3600)
    first.write(b"first")
    first.flush()
    before = list_objects(server.endpoint, prefix + "/")
    second = SegmentSink(f"s3://{BUCKET}/{prefix}", flush_secs=3600)  # the same names
    second.write(b"second")
    second.close()
    first.close()
    after = list_objects(server.endpoint, prefix + "/")
    assert {k: after[k] for k in before} == before, "an object was replaced"
    assert sorted(_payloads(after)) == [b"first", b"second"]


_CHILD = r"""
import sys
import numpy as np
from npsummary._sinks import segment_state
segment_state.os.getpid = lambda: 1  # containers on one host
segment_state._next_counter = lambda: 0
from npsummary import SummaryWriter
url, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with SummaryWriter(url, flush_secs=0.05) as writer:
    for i in range(n):
        writer.add_scalar(tag, float(i), i)
        if i % 20 == 0:
            writer.flush()
    writer.add_embedding(np.eye(2), tag=tag)
"""


def test_processes_with_one_pid_share_an_s3_prefix(stack: tuple[MotoServer, FaultProxy]) -> None:
    server, _ = stack
    prefix = f"runs/{uuid.uuid4().hex}"
    url = f"s3://{BUCKET}/{prefix}"
    env = dict(os.environ)
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, url, f"p{i}", "100"],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
    objects = list_objects(server.endpoint, prefix + "/")
    events = {k: v for k, v in objects.items() if "tfevents" in k}
    from npsummary import proto

    series: dict[str, list[int]] = {}
    for payload in _payloads(events):
        event = proto.Event.FromString(payload)
        for value in event.summary.value:
            series.setdefault(value.tag, []).append(event.step)
    assert series == {f"p{i}": list(range(100)) for i in range(3)}
    config = objects[f"{prefix}/projector_config.pbtxt"].decode()
    assert all(f'tensor_name: "p{i}:00000"' in config for i in range(3))
    fragments = [k for k in objects if "/projector_config.d/" in k]
    assert len(fragments) == 3
