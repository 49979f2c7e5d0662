"""``export_scalars_to_json`` on a URL logdir (issue 20, item 9): it exports what was logged, as on
a local logdir, and refuses a sink it cannot read back instead of writing ``{}``."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from npsummary import SummaryWriter


def _needs_fsspec() -> None:
    pytest.importorskip("fsspec", reason="remote logdirs need fsspec (npsummary[remote])")


def _log(writer: SummaryWriter, steps: range) -> None:
    for step in steps:
        writer.add_scalar("loss", 1.0 / (step + 1), step, walltime=100.0 + step)
        writer.add_scalars("acc", {"a": float(step), "b": 2.0 * step}, step, walltime=100.0 + step)


def _export(writer: SummaryWriter, path: Path) -> dict[str, list[list[float]]]:
    writer.export_scalars_to_json(path)
    data: dict[str, list[list[float]]] = json.loads(path.read_text())
    return data


def test_a_url_logdir_exports_what_a_local_one_does(tmp_path: Path) -> None:
    _needs_fsspec()
    url = f"memory://bucket/{uuid.uuid4().hex}/run"
    local = tmp_path / "run"
    with SummaryWriter(url) as remote_writer, SummaryWriter(local) as local_writer:
        _log(remote_writer, range(3))
        _log(local_writer, range(3))
        remote = _export(remote_writer, tmp_path / "remote.json")
        here = _export(local_writer, tmp_path / "local.json")
        assert remote["loss"] == here["loss"]
        assert [entry[:2] for entry in remote["loss"]] == [[100.0 + s, s] for s in range(3)]
        assert remote[f"{url}/acc_a"] == here[f"{local}/acc_a"]
        assert remote[f"{url}/acc_b"] == [[100.0 + s, s, 2.0 * s] for s in range(3)]
        # A later export holds what was logged since the previous one, as tensorboardX's does.
        _log(remote_writer, range(3, 5))
        later = _export(remote_writer, tmp_path / "later.json")
        assert [entry[1] for entry in later["loss"]] == [3, 4]


def test_segments_of_one_export_span_many_uploads(tmp_path: Path) -> None:
    _needs_fsspec()
    url = f"memory://bucket/{uuid.uuid4().hex}/run"
    with SummaryWriter(url) as writer:
        for step in range(5):
            writer.add_scalar("x", float(step), step)
            writer.flush()  # one segment per step
        data = _export(writer, tmp_path / "out.json")
    assert [entry[1:] for entry in data["x"]] == [[s, float(s)] for s in range(5)]


class _OpaqueSink:
    """A user's sink: accepts events, keeps them where the writer cannot read them back."""

    def __init__(self) -> None:
        self.count = 0

    def write(self, payload: bytes) -> None:
        self.count += 1

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def child(self, name: str) -> _OpaqueSink:
        return self


def test_a_sink_that_cannot_be_read_back_is_refused(tmp_path: Path) -> None:
    with SummaryWriter(_OpaqueSink()) as writer:
        writer.add_scalar("x", 1.0, 0)
        with pytest.raises(ValueError, match="cannot read back"):
            writer.export_scalars_to_json(tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


def test_write_to_disk_false_exports_nothing(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path / "run", write_to_disk=False) as writer:
        writer.add_scalar("x", 1.0, 0)
        assert _export(writer, tmp_path / "out.json") == {}


def test_a_link_at_the_output_path_is_replaced_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    out = tmp_path / "scalars.json"
    out.symlink_to(target)
    with SummaryWriter(tmp_path / "run") as writer:
        writer.add_scalar("x", 1.0, 0)
        data = _export(writer, out)
    assert [entry[1:] for entry in data["x"]] == [[0, 1.0]]
    assert target.read_text() == "keep me"
    assert not out.is_symlink()
