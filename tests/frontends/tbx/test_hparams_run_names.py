"""``add_hparams(run_name=...)`` edge cases of issue 20 item 14, already fixed on this tree, kept
fixed: a component over 255 bytes, NUL, ``::`` on a URL logdir, a lone surrogate in a value."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from npsummary import SummaryWriter


def _dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_dir())


@pytest.mark.parametrize(
    "run_name", ["a" * 256, "é" * 128, "ok/" + "b" * 256, "x\x00y", "sweep/\x00"]
)
def test_a_bad_run_name_is_refused_before_anything_is_created(
    tmp_path: Path, run_name: str
) -> None:
    with SummaryWriter(tmp_path / "logs") as writer:
        before = _dirs(tmp_path)
        with pytest.raises(ValueError, match="run_name") as info:
            writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name=run_name)
        assert not isinstance(info.value, OSError)
        assert _dirs(tmp_path) == before, "a directory was created before the refusal"
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="fine")  # still usable
    assert (tmp_path / "logs" / "fine").is_dir()


def test_a_255_byte_component_is_accepted(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path / "logs") as writer:
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="c" * 200)
    assert (tmp_path / "logs" / ("c" * 200)).is_dir()


def test_double_colon_cannot_chain_urls_on_a_url_logdir() -> None:
    fsspec = pytest.importorskip("fsspec")
    url = f"memory://bucket/{uuid.uuid4().hex}"
    with SummaryWriter(url) as writer:
        for name in ("x::a", "x::b", "memory::y"):
            with pytest.raises(ValueError, match="run_name"):
                writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name=name)
        writer.add_hparams({"lr": 0.1}, {"m": 1.0}, run_name="x_a")
    fs, path = fsspec.core.url_to_fs(url)
    subruns = {p[len(path) + 1 :].split("/")[0] for p in fs.find(path)}
    assert "x" not in subruns and "x_a" in subruns


def test_a_lone_surrogate_names_the_key(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path / "logs") as writer:
        with pytest.raises(ValueError, match="'opt'"):
            writer.add_hparams({"opt": "ad\ud800am"}, {"m": 1.0})
        with pytest.raises(ValueError, match="hparam_dict key"):
            writer.add_hparams({"o\udfffpt": 1.0}, {"m": 1.0})
        with pytest.raises(ValueError, match="run_name"):
            writer.add_hparams({"opt": 1.0}, {"m": 1.0}, run_name="r\ud800")
