"""The ``npsummary`` command: ``inspect``, ``export`` and ``demo`` (argparse, no new dependency).

Every command prints one clear line and exits non-zero on an error (2 for a usage error, 1 for
anything else), never a traceback; long work shows a progress line on stderr when stderr is a
terminal.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._errors import CommandError

__all__ = ["main"]

_EXAMPLES = """\
examples:
  npsummary demo                         train a tiny NumPy model and log every summary kind
  npsummary inspect runs/                runs, tags, steps, last values and sparklines
  npsummary export runs/ --format csv    every scalar into ./scalars.csv
"""


def _parser() -> argparse.ArgumentParser:
    from . import _demo, _export, _inspect

    parser = argparse.ArgumentParser(
        prog="npsummary",
        description="Read, export and demonstrate TensorBoard event files without TensorFlow.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"npsummary {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (_inspect, _export, _demo):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CommandError as exc:
        print(f"npsummary {args.command}: {exc}", file=sys.stderr)
        return 1
    except (FileNotFoundError, NotADirectoryError, PermissionError, IsADirectoryError) as exc:
        where = f": {exc.filename}" if exc.filename else ""
        print(f"npsummary {args.command}: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except (OSError, ValueError, ImportError) as exc:
        print(f"npsummary {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"npsummary {args.command}: interrupted", file=sys.stderr)
        return 130
    return status
