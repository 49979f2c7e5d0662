"""The package surface: ``import npsummary`` stays light, whatever features it offers."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "torch",
    "tensorflow",
    "jax",
    "PIL",
    "matplotlib",
    "pandas",
    "pyarrow",
    "fsspec",
    "boto3",
    "botocore",
    "s3fs",
)


def test_import_loads_no_heavy_or_optional_dependency() -> None:
    code = (
        "import sys, npsummary\n"
        f"bad = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "lazy = sorted(m for m in ('google.protobuf', 'crc32c', 'npsummary.v1', "
        "'npsummary.reader') if m in sys.modules)\n"
        "print(bad, lazy)\n"
        "sys.exit(1 if bad or lazy else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_writing_needs_no_optional_dependency(tmp_path: object) -> None:
    code = (
        "import sys, numpy as np, npsummary\n"
        f"w = npsummary.SummaryWriter({str(tmp_path)!r})\n"
        "w.add_scalar('a', 1.0, 0); w.add_histogram('h', np.arange(10.0), 0)\n"
        "w.add_image('i', np.zeros((3, 4, 4)), 0); w.add_text('t', 'x', 0); w.close()\n"
        f"bad = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "sys.exit(str(bad) if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
