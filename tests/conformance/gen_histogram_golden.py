"""Regenerate the histogram golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard
    python tests/conformance/gen_histogram_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard      # in a separate venv (CPU wheel)
    python tests/conformance/gen_histogram_golden.py torch

Runs ``histogram_program.run`` with the library's ``SummaryWriter`` and stores every histogram's
fields as JSON in ``golden/histograms/<library>.json``, with the library's version. Each run also
stores the installed NumPy's bin edges for the calls with a rule name (``bins='auto'``, ...) in
``golden/histograms/numpy.json``, with NumPy's version: the library files hold for a NumPy whose
edges are these, and the test asks tensorboardX itself where the installed NumPy's differ. Both
library files must therefore come from the same NumPy (2.4.6 for the committed ones).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import histogram_program  # noqa: E402
from conformance._library import run_with_library, write_golden  # noqa: E402


def main(library: str) -> None:
    import numpy as np

    version, histograms = run_with_library(
        library, "gen_histogram_golden.py", histogram_program.run, histogram_program.read_histograms
    )
    write_golden("histograms", library, version, "histograms", histograms, indent=0)
    edges = histogram_program.numpy_edges()
    write_golden("histograms", "numpy", np.__version__, "edges", edges, indent=0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
