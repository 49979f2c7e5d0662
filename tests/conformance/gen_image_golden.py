"""Regenerate the image golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow
    python tests/conformance/gen_image_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard Pillow    # in a separate venv (CPU wheel)
    python tests/conformance/gen_image_golden.py torch

Runs ``image_program.run`` with the library's ``SummaryWriter`` and stores each image's fields
and decoded pixels as JSON in ``golden/images/<library>.json``, with the library's version.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import image_program  # noqa: E402
from conformance._library import run_with_library, write_golden  # noqa: E402


def main(library: str) -> None:
    version, images = run_with_library(
        library, "gen_image_golden.py", image_program.run, image_program.read_pixels
    )
    write_golden("images", library, version, "images", images)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
