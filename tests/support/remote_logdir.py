"""A remote logdir for the reader's URL tests (memory:// here, S3 in test_reader_remote_s3.py):
written with every summary kind in small segments, copied to a local folder, and compared
exactly with what the reader reads from that copy."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path
from typing import Any

import fsspec
import numpy as np

from npsummary import SummaryWriter, create_file_writer, reader
from npsummary._sinks.segments import SegmentSink

WALL0 = 1_700_000_000.0
KEYS = ("records", "bytes", "files", "corrupt_records", "corrupt_bytes", "torn_tails")


def memory_root() -> str:
    return f"memory://logs/{uuid.uuid4().hex}"


def write_logdir(root: str) -> None:
    """Two runs and a nested run, every summary kind the reader knows, in small segments."""
    rng = np.random.default_rng(7)
    with SummaryWriter(SegmentSink(f"{root}/a", segment_bytes=300)) as w:
        for step in range(40):
            w.add_scalar("loss", 1.0 / (step + 1), step, walltime=WALL0 + step)
            w.add_scalar("acc", step * 0.01, step, walltime=WALL0 + step)
        for step in range(3):
            w.add_histogram("w", rng.normal(step, 1, 200), step, walltime=WALL0 + step)
        w.add_image("img", rng.integers(0, 255, (4, 5), np.uint8), 1, dataformats="HW")
        w.add_text("note", "hello", 2, walltime=WALL0)
        w.add_hparams({"lr": 0.5}, {"hp/metric": 0.25}, run_name=".")
    with SummaryWriter(SegmentSink(f"{root}/b/inner", segment_bytes=200)) as w:
        for step in range(10):
            w.add_scalar("loss", float(step) ** 2, step, walltime=WALL0 + step)
    tf = create_file_writer(SegmentSink(f"{root}/c"))
    with tf.as_default(step=3):
        from npsummary import scalar

        scalar("tf2", 1.5)
    tf.close()


def copy_local(root: str, target: Path) -> Path:
    """The objects under ``root`` as files of ``target``, under the same relative names."""
    fs, path = fsspec.core.url_to_fs(root)
    for name in fs.find(path):
        local = target / name[len(path) + 1 :]
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(fs.cat_file(name))
    return target


def same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b)) and np.asarray(a).dtype == np.asarray(b).dtype
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def assert_same_logdata(remote: reader.Logdata, local: reader.Logdata) -> None:
    assert remote.runs == local.runs
    for kind in reader.KINDS:
        assert same(getattr(remote, kind), getattr(local, kind)), kind
    for key in KEYS:
        assert getattr(remote.stats, key) == getattr(local.stats, key), key
