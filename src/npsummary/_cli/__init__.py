"""The ``npsummary`` command: ``inspect``, ``export`` and ``demo`` (argparse, no new dependency).

Every command prints one clear line and exits non-zero on an error (2 for a usage error, 1 for
anything else, including a selection that matches nothing), never a traceback; long work shows
a progress line on stderr when stderr is a terminal. Error lines have control characters
escaped (they may quote tags or paths from files). When the reader of stdout goes away
(``npsummary inspect runs | head -1``), the command ends quietly with status 141 (128 + SIGPIPE,
as a command killed by the signal would).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ._errors import CommandError
from ._safe import printable

_BROKEN_PIPE = 141

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


def _error(command: str, message: str) -> None:
    print(printable(f"npsummary {command}: {message}"), file=sys.stderr)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush at exit cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (embedded, or replaced by a test)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        # Answered before the commands' modules load: they import NumPy (~0.1 s here), which
        # would make the version check of install scripts and CI ten times slower.
        from .. import __version__

        print(f"npsummary {__version__}")
        return 0
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
        return _BROKEN_PIPE
    except CommandError as exc:
        _error(args.command, str(exc))
        return 1
    except (FileNotFoundError, NotADirectoryError, PermissionError, IsADirectoryError) as exc:
        where = f": {exc.filename}" if exc.filename else ""
        _error(args.command, f"{exc.strerror or exc}{where}")
        return 1
    except (OSError, ValueError, ImportError) as exc:
        _error(args.command, str(exc))
        return 1
    except KeyboardInterrupt:
        _error(args.command, "interrupted")
        return 130
    return status
