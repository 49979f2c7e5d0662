"""What the golden-file generators share: run a program with tensorboardX's or torch's own
``SummaryWriter`` in a temporary logdir and read back what it wrote, and store the result."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Callable
from typing import Any


def run_with_library(
    library: str,
    script: str,
    program: Callable[[Any], None],
    read: Callable[[str], Any],
) -> tuple[str, Any]:
    """``(library version, read(logdir))`` after ``program(writer)`` ran with ``library``'s
    ``SummaryWriter`` (``"tensorboardX"`` or ``"torch"``); any other name exits with the usage of
    ``script``."""
    if library == "torch":
        import torch
        from torch.utils.tensorboard import SummaryWriter

        version = torch.__version__
    elif library == "tensorboardX":
        import tensorboardX
        from tensorboardX import SummaryWriter

        version = tensorboardX.__version__
    else:
        raise SystemExit(f"usage: {script} tensorboardX|torch")
    with tempfile.TemporaryDirectory() as tmp:
        writer = SummaryWriter(tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program(writer)
        writer.close()
        return version, read(tmp)


def write_golden(
    kind: str, library: str, version: str, key: str, data: Any, *, indent: int | None = None
) -> None:
    """Store ``{"version": version, key: data}`` as ``golden/<kind>/<library>.json`` beside this
    module (sorted keys, ``indent`` as ``json.dump`` takes it) and say so."""
    target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", kind)
    os.makedirs(target, exist_ok=True)
    target = os.path.join(target, f"{library}.json")
    with open(target, "w") as f:
        json.dump({"version": version, key: data}, f, indent=indent, sort_keys=True)
        f.write("\n")
    print(f"{target}: {len(data)} {key} from {library} {version}")
