"""The package surface: ``import npsummary`` stays light, whatever features it offers."""

from __future__ import annotations

import subprocess
import sys
from typing import Any, cast

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


def _python(code: str, context: object = "") -> str:
    """Run ``code`` in a fresh interpreter; it must exit with 0. Returns what it printed."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, (context, result.stdout + result.stderr)
    return result.stdout


def test_import_loads_no_heavy_or_optional_dependency() -> None:
    code = (
        "import sys, npsummary\n"
        f"bad = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "lazy = sorted(m for m in ('google.protobuf', 'crc32c', 'npsummary.v1', "
        "'npsummary.reader') if m in sys.modules)\n"
        "print(bad, lazy)\n"
        "sys.exit(1 if bad or lazy else 0)\n"
    )
    _python(code)


def test_writing_needs_no_optional_dependency(tmp_path: object) -> None:
    code = (
        "import sys, numpy as np, npsummary\n"
        f"w = npsummary.SummaryWriter({str(tmp_path)!r})\n"
        "w.add_scalar('a', 1.0, 0); w.add_histogram('h', np.arange(10.0), 0)\n"
        "w.add_image('i', np.zeros((3, 4, 4)), 0); w.add_text('t', 'x', 0); w.close()\n"
        f"bad = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "sys.exit(str(bad) if bad else 0)\n"
    )
    _python(code)


# Modules a writer does not need at run time: the type aliases are for type checkers only
# (numpy.typing costs ~0.5 ms to import), the tf.summary and v1 front ends load on first use,
# and so do v1's builders of images, histograms, audio, text and tensors.
LOADED_ON_FIRST_USE = (
    "numpy.typing",
    "npsummary._common.types",  # type aliases: for type checkers
    "npsummary._common.compat_errors",  # loads when a call is refused
    "npsummary._summaries.nonfinite",  # the first histogram or image
    "google.protobuf",
)
WRITER_ENTRY_POINTS = {
    "from npsummary import SummaryWriter": ("npsummary._frontends.tf2", "npsummary.v1"),
    "from npsummary import create_file_writer, scalar": ("npsummary._frontends.tbx",),
    "import npsummary.v1": ("npsummary._frontends.tbx", "json", "npsummary._summaries.image"),
    "import npsummary.tensorboardx_summary, npsummary.torch_summary": (),
}


def test_writers_import_only_what_a_scalar_needs() -> None:
    for statement, also_absent in WRITER_ENTRY_POINTS.items():
        absent = (*LOADED_ON_FIRST_USE, *also_absent)
        # What NumPy itself imports does not count (NumPy 1.23 imports json, for one).
        code = (
            "import sys\nimport numpy\nby_numpy = set(sys.modules)\n"
            f"{statement}\n"
            f"loaded = sorted(m for m in {absent!r} if m in sys.modules and m not in by_numpy)\n"
            "sys.exit(str(loaded) if loaded else 0)\n"
        )
        _python(code, statement)


def test_first_writer_loads_only_the_crc32c_extension(tmp_path: object) -> None:
    # `import crc32c` runs the package's __init__, which imports importlib.metadata, argparse,
    # zipfile and email (~30 ms, several times npsummary's import); the records need only the
    # C function, loaded from the package's extension module.
    code = (
        "import sys, npsummary\n"
        f"w = npsummary.SummaryWriter({str(tmp_path)!r})\n"
        "w.add_scalar('a', 1.0, 1); w.close()\n"
        "from npsummary._format import record\n"
        "assert record._crc32c_impl is not record._crc32c_python, 'no native CRC'\n"
        "bad = sorted(m for m in ('crc32c', 'importlib.metadata', 'argparse', 'email', 'zipfile')"
        " if m in sys.modules)\n"
        "sys.exit(str(bad) if bad else 0)\n"
    )
    _python(code)


def test_version_is_answered_without_loading_the_commands() -> None:
    # The commands' modules import NumPy: `npsummary --version` answers before loading them,
    # with the text argparse's version action prints.
    code = (
        "import sys\n"
        "from npsummary._cli import main\n"
        "status = main(['--version'])\n"
        "sys.exit(status or ('numpy' in sys.modules))\n"
    )
    output = _python(code)
    from npsummary import __version__
    from npsummary._cli import _parser

    assert output == f"npsummary {__version__}\n"
    assert _parser().format_help()  # the full parser still has the option
    version = [a for a in _parser()._actions if "--version" in a.option_strings]
    assert version and cast(Any, version[0]).version == output.strip()
