"""One rank of a tiny DDP training on CPU (gloo), logging with npsummary; run by torchrun from
test_distributed.py. Each rank also records the values it logged in ``<record>/rank_<k>.json``.

Usage: torchrun --standalone --nproc_per_node=N _ddp_child.py LOGDIR RANKS RECORD
(RANKS: "default" or "all").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from npsummary import SummaryWriter

STEPS = 5


def main() -> None:
    logdir, ranks, record = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    options: dict[str, Any] = {} if ranks == "default" else {"ranks": ranks}
    writer = SummaryWriter(logdir, **options)
    logged = []
    for step in range(STEPS):
        x = torch.randn(8, 4, generator=generator)
        loss = ((model(x) - x.sum(dim=1, keepdim=True)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()  # gradients all-reduced over gloo
        optimizer.step()
        writer.add_scalar("loss", loss.item(), step)
        writer.add_scalar("rank", float(rank), step)
        logged.append(float(torch.tensor(loss.item(), dtype=torch.float32)))
    writer.close()
    record.mkdir(parents=True, exist_ok=True)
    (record / f"rank_{rank}.json").write_text(json.dumps(logged))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
