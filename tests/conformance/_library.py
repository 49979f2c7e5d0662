"""What the golden-file generators share: run a program with tensorboardX's or torch's own
``SummaryWriter`` in a temporary logdir and read back what it wrote."""

from __future__ import annotations

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
