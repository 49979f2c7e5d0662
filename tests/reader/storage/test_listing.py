"""runs_from_listing finds, names and orders runs exactly as the directory walk does: random
trees of objects on fsspec's memory:// filesystem, walked by discover() and listed by find()."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

fsspec = pytest.importorskip("fsspec", reason="the walk to compare with reads memory://")

from npsummary.reader._discover import discover  # noqa: E402
from npsummary.reader._storage.fsspec_store import FsspecFileSystem  # noqa: E402
from npsummary.reader._storage.listing import runs_from_listing  # noqa: E402

pytestmark = pytest.mark.fuzz

_NAMES = st.sampled_from(
    [
        "a",
        "b",
        "run_1",
        "Run 2",
        "é",
        "x.tfevents.d",
        "events.out.tfevents.1.h",
        "events.out.tfevents.2.h",
        "events.out.tfevents.3.profile-empty",
        "notes.txt",
        "~tfevents",
    ]
)
_PATHS = st.lists(_NAMES, min_size=1, max_size=4).map("/".join)


def _listing(memory: object, url: str) -> list[tuple[str, int]]:
    _, path = fsspec.core.url_to_fs(url)
    return [
        (f"{url}{name[len(path) :]}", int(info["size"]))
        for name, info in memory.find(path, detail=True).items()  # type: ignore[attr-defined]
    ]


@given(st.lists(_PATHS, max_size=12, unique=True), st.sampled_from([None, "^a", "b", r"\."]))
def test_listing_finds_what_the_walk_finds(paths: list[str], pattern: str | None) -> None:
    root = f"memory://listing/{uuid.uuid4().hex}"
    memory, base = fsspec.core.url_to_fs(root)
    written: list[str] = []
    for path in sorted(paths, key=len):
        if any(other.startswith(path + "/") for other in written) or any(
            path.startswith(other + "/") for other in written
        ):
            continue  # a name cannot be both an object and a folder on a filesystem
        memory.pipe_file(f"{base}/{path}", b"x" * len(path))
        written.append(path)
    runs = None if pattern is None else re.compile(pattern)
    try:
        walked = discover(FsspecFileSystem(root), root, runs) if written else []
        listed = runs_from_listing(root, _listing(memory, root), runs)
        assert listed == walked
        assert runs_from_listing(root + "/", _listing(memory, root), runs) == walked
    finally:
        if written:
            memory.rm(base, recursive=True)


def test_the_root_as_one_object_and_the_depth_limit() -> None:
    url = "s3://b/logs/events.out.tfevents.1"
    assert [r.files for r in runs_from_listing(url, [(url, 5)])] == [(url,)]
    assert runs_from_listing(url, [(url, 5)], re.compile("x")) == []
    deep = "s3://b/" + "/".join(["d"] * 65) + "/events.out.tfevents.1"
    ok = "s3://b/" + "/".join(["d"] * 64) + "/events.out.tfevents.1"
    marker = "s3://b/r/"
    doubled = "s3://b/r//events.out.tfevents.1"
    found = runs_from_listing("s3://b", [(deep, 1), (ok, 1), (marker, 0), (doubled, 1)])
    assert [r.files for r in found] == [(ok,)]
