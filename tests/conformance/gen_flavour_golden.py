"""Regenerate the flavour golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow soundfile   # soundfile 0.14 (libsndfile 1.2)
    python tests/conformance/gen_flavour_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard Pillow    # in a separate venv (CPU wheel)
    python tests/conformance/gen_flavour_golden.py torch

Runs ``flavour_program.run`` with the library's ``SummaryWriter`` and stores every run's values
as JSON in ``golden/flavours/<library>.json``, with the library's version.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import flavour_program  # noqa: E402
from conformance._library import run_with_library, write_golden  # noqa: E402


def main(library: str) -> None:
    version, runs = run_with_library(
        library, "gen_flavour_golden.py", flavour_program.run, flavour_program.read_logdir
    )
    write_golden("flavours", library, version, "runs", runs, indent=1)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
