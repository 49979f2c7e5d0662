"""torchrun child for tests/frontends/test_sharded_histograms.py (gloo, CPU).

A small model sharded with FSDP2's ``fully_shard``, a tensor-parallel weight placed ``Shard(1)``
and a replicated one log every parameter's histogram each step through every front end; each
rank's activations are logged with ``process_group=``. Rank 0 saves the full parameters and the
gathered activations, which the test histograms in one process and compares with the files.
Every ``all_reduce`` a histogram makes is recorded (bytes per call).

Usage: _sharded_child.py LOGDIR RECORD_DIR
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import Replicate, Shard, distribute_tensor

import npsummary
from npsummary import v1

STEPS = 3
# (suffix, add_histogram keyword arguments) logged for every parameter
BINS: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("int30", {"bins": 30}),
    ("edges", {"bins": [-0.5, -0.1, 0.0, 0.05, 0.2, 0.6]}),
    ("sqrt", {"bins": "sqrt", "max_bins": 4}),
]


def main() -> None:
    logdir, record = Path(sys.argv[1]), Path(sys.argv[2])
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 33), torch.nn.ReLU(), torch.nn.Linear(33, 5))
    fully_shard(model, mesh=mesh)
    tp = distribute_tensor(torch.randn(6, 4 * world + 3), mesh, [Shard(1)])
    # non-negative with zeros: the minimum is the first zero of full_tensor() in C order,
    # -0.0 at [0, 4] on rank 1, not rank 0's +0.0 at [1, 0] that rank order would pick
    zeros = torch.randn(5, 4 * world).abs()
    zeros[0, 4], zeros[1, 0] = -0.0, 0.0
    zeros = distribute_tensor(zeros, mesh, [Shard(1)])
    replicated = distribute_tensor(torch.randn(7), mesh, [Replicate()])
    # a 2-D mesh (replicated over its first dimension, Shard(1) over its second): merged over
    # every rank of the mesh, each value counted once
    mesh2 = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("dp", "tp"))
    hybrid = distribute_tensor(torch.randn(6, 2 * world + 1), mesh2, [Replicate(), Shard(1)])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    sizes: list[int] = []
    all_reduce = dist.all_reduce

    def counting(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        sizes.append(tensor.numel() * tensor.element_size())
        return all_reduce(tensor, *args, **kwargs)

    calls: dict[str, list[int]] = {}

    def counted(name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = len(sizes)
        dist.all_reduce = counting
        try:
            return call(*args, **kwargs)
        finally:
            dist.all_reduce = all_reduce
            calls[name] = sizes[start:]

    writer = npsummary.SummaryWriter(str(logdir / "tbx"))
    tf2_writer = npsummary.create_file_writer(str(logdir / "tf2"))
    full: dict[str, np.ndarray] = {}
    v1_values: dict[str, bytes] = {}
    for step in range(STEPS):
        torch.manual_seed(100 + step * world + rank)
        x = torch.randn(8, 16)
        out = model(x)
        out.square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        params: dict[str, Any] = dict(model.named_parameters())
        params["tp"] = tp
        params["replicated"] = replicated
        params["zeros"] = zeros
        params["hybrid"] = hybrid
        for name, p in params.items():
            for suffix, kwargs in BINS:
                tag = f"{name}/{suffix}"
                counted(f"{tag}@{step}", writer.add_histogram, tag, p, step, **kwargs)
            counted(f"{name}/dist@{step}", writer.add_distribution, f"{name}/dist", p, step)
            with tf2_writer.as_default(step=step):
                counted(f"{name}/tf2@{step}", npsummary.histogram, f"{name}/tf2", p)
            summary = counted(f"{name}/v1@{step}", v1.histogram, f"{name}/v1", p)
            v1_values[f"{name}@{step}"] = summary
            full[f"{name}@{step}"] = p.full_tensor().detach().numpy().copy()
        activations = out.detach()
        group = dist.group.WORLD
        counted(f"act@{step}", writer.add_histogram, "act", activations, step, process_group=group)
        gathered = [torch.empty_like(activations) for _ in range(world)]
        dist.all_gather(gathered, activations.contiguous())
        full[f"act@{step}"] = torch.cat(gathered).numpy()

    # a rank calling another histogram at the same point: every rank raises the same error
    try:
        writer.add_histogram("odd" if rank == world - 1 else "even", tp, STEPS)
        mismatch = "no error"
    except ValueError as exc:
        mismatch = str(exc)
    try:
        writer.add_histogram("w", tp, STEPS, bins="auto")
        refused = "no error"
    except ValueError as exc:
        refused = str(exc)
    writer.close()
    tf2_writer.close()
    record.mkdir(parents=True, exist_ok=True)
    result = {"calls": calls, "mismatch": mismatch, "refused": refused}
    (record / f"rank_{rank}.json").write_text(json.dumps(result))
    if rank == 0:
        np.savez(record / "full.npz", **cast(dict[str, Any], full))
        (record / "v1.json").write_text(json.dumps({k: v.hex() for k, v in v1_values.items()}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
