"""Regenerate the flavour golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow
    python tests/conformance/gen_flavour_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard Pillow    # in a separate venv (CPU wheel)
    python tests/conformance/gen_flavour_golden.py torch

Runs ``flavour_program.run`` with the library's ``SummaryWriter`` and stores every run's values
as JSON in ``golden/flavours/<library>.json``, with the library's version.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import flavour_program  # noqa: E402


def main(library: str) -> None:
    if library == "torch":
        import torch
        from torch.utils.tensorboard import SummaryWriter

        version = torch.__version__
    elif library == "tensorboardX":
        import tensorboardX
        from tensorboardX import SummaryWriter

        version = tensorboardX.__version__
    else:
        raise SystemExit("usage: gen_flavour_golden.py tensorboardX|torch")
    with tempfile.TemporaryDirectory() as tmp:
        writer = SummaryWriter(tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            flavour_program.run(writer)
        writer.close()
        runs = flavour_program.read_logdir(tmp)
    target = os.path.join(HERE, "golden", "flavours", f"{library}.json")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        json.dump({"version": version, "runs": runs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{target}: {len(runs)} runs from {library} {version}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
