"""Regenerate the flavour golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow soundfile   # soundfile 0.14 (libsndfile 1.2)
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import flavour_program  # noqa: E402
from conformance._library import run_with_library  # noqa: E402


def main(library: str) -> None:
    version, runs = run_with_library(
        library, "gen_flavour_golden.py", flavour_program.run, flavour_program.read_logdir
    )
    target = os.path.join(HERE, "golden", "flavours", f"{library}.json")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        json.dump({"version": version, "runs": runs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{target}: {len(runs)} runs from {library} {version}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
