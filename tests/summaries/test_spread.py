"""The collectives of a histogram merged over ``process_group=`` (npsummary._summaries.spread).

The tensors handed to ``all_reduce`` live in torch's own memory: a tensor made by
``torch.from_numpy`` kept by gloo's worker thread after the call is freed there, at interpreter
exit at the latest, and freeing NumPy-backed storage takes the GIL, which aborts a process that
is finalizing (``terminate called without an active exception``, seen one run in twenty under
torchrun on a loaded machine). A one-rank gloo group runs the real collectives here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary import SummaryWriter
from npsummary._format.record import iter_records
from npsummary.proto import Event

pytestmark = pytest.mark.torch


@pytest.fixture
def group(tmp_path: Path) -> Iterator[Any]:
    torch = pytest.importorskip("torch", reason="process_group= needs torch (CI stage 40)")
    dist = torch.distributed
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group("gloo", store=store, rank=0, world_size=1)
    try:
        yield dist.group.WORLD
    finally:
        dist.destroy_process_group()


def test_all_reduce_gets_tensors_in_torch_memory_and_the_whole_histogram(
    group: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch
    import torch.distributed as dist

    from_numpy: list[Any] = []
    reduced: list[Any] = []
    real_from_numpy, real_all_reduce = torch.from_numpy, dist.all_reduce

    def recording_from_numpy(array: np.ndarray) -> Any:
        from_numpy.append(real_from_numpy(array))
        return from_numpy[-1]

    def recording_all_reduce(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        reduced.append(tensor)
        return real_all_reduce(tensor, *args, **kwargs)

    monkeypatch.setattr(torch, "from_numpy", recording_from_numpy)
    monkeypatch.setattr(dist, "all_reduce", recording_all_reduce)
    values = np.linspace(-3.0, 5.0, 1001)
    merged_dir, whole_dir = tmp_path / "merged", tmp_path / "whole"
    with SummaryWriter(str(merged_dir)) as writer:
        writer.add_histogram("h", values, 0, process_group=group)
    monkeypatch.undo()
    with SummaryWriter(str(whole_dir)) as writer:
        writer.add_histogram("h", values, 0)

    assert 1 <= len(reduced) <= 2
    assert not any(t is made for t in reduced for made in from_numpy)
    assert all(t.dtype == torch.float64 for t in reduced)
    assert _histogram(merged_dir) == _histogram(whole_dir)


def _histogram(logdir: Path) -> Any:
    for path in sorted(logdir.glob("events.out.tfevents.*")):
        for payload in iter_records(path.read_bytes()):
            for value in Event.FromString(payload).summary.value:
                if value.tag == "h":
                    return value.histo
    raise AssertionError(f"no histogram 'h' in {logdir}")
