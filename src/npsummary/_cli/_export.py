"""``npsummary export LOGDIR --format csv|json|parquet``: scalars (or another kind) as a table."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from typing import Any, BinaryIO, TextIO

import numpy as np

from .._common.urls import is_url
from ._errors import CommandError
from ._progress import Progress
from ._report import NotAnEventFile, count, explain_nothing, report_skipped
from ._safe import csv_cell, printable

__all__ = ["register"]

_HELP = """\
examples:
  npsummary export runs/ --format csv                      ./scalars.csv
  npsummary export runs/ --format parquet --out tables/    tables/scalars.parquet
  npsummary export runs/ --format json --out - --tags loss  JSON rows on stdout
  npsummary export runs/ --format csv --runs 'train$' --kind histograms

Scalars give the columns run, tag, step, wall_time, value (tbparse's names). Other kinds give
run, tag, step, wall_time and a value column: JSON arrays for histograms, PR curves, text and
tensors (a complex number is the pair [real, imag]); base64 strings for image and audio
bytes. Parquet needs pyarrow: pip install pyarrow.

The file is DIR/KIND.FORMAT (e.g. ./scalars.csv), written to a temporary file in DIR and then
renamed over it: a link at that name is replaced, never followed, and a failure leaves the
previous file intact. In CSV, a text cell (run, tag, or a text value) that starts with
= + - @, a tab or a carriage return is written with a leading ' so that a spreadsheet shows it
as text instead of running it as a formula (OWASP's CSV-injection advice); JSON and Parquet
hold the text as it is. Lines end with CRLF (RFC 4180). CSV written to a terminal has control
characters escaped; written to a file or a pipe, it holds the text exactly.

Corrupt records, undecodable values and torn tails are skipped and reported on stderr (with
--strict, the first corrupt record or undecodable value is an error). A selection that matches
nothing is an error (exit status 1) and writes no file.
"""


def register(commands: Any) -> None:
    p = commands.add_parser(
        "export",
        help="write scalars (or another kind) as CSV, JSON or Parquet",
        description="Export a logdir's scalars, or another kind, as one long table.",
        epilog=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("logdir", help="a logdir, a run directory or one event file")
    p.add_argument("--format", required=True, help="csv, json or parquet")
    p.add_argument("--out", default=".", metavar="DIR", help="output directory, or - for stdout")
    p.add_argument("--runs", metavar="REGEX", help="only runs whose name matches")
    p.add_argument("--tags", metavar="REGEX", help="only tags that match")
    p.add_argument("--kind", default="scalars", help="scalars (default), histograms, images, ...")
    p.add_argument(
        "--strict", action="store_true", help="fail on a corrupt record instead of skipping it"
    )
    p.set_defaults(run=run)


def _cell(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else str(v).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, complex | np.complexfloating):
        return [_cell(float(value.real)), _cell(float(value.imag))]
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    if isinstance(value, np.ndarray):
        return [_cell(x) for x in value.tolist()] if value.ndim else _cell(value.item())
    if isinstance(value, list | tuple):
        return [_cell(x) for x in value]
    if isinstance(value, np.integer):
        return int(value)
    return value


def _rows(cols: dict[str, Any]) -> list[dict[str, Any]]:
    names = ["run", "tag", "step", "wall_time", "value"] if "step" in cols else list(cols)
    n = len(cols["run"])
    return [{name: _cell(cols[name][i]) for name in names} for i in range(n)]


def _shown(value: Any) -> Any:
    return printable(value) if isinstance(value, str) else value


def _csv_value(name: str, value: Any) -> Any:
    if isinstance(value, list):
        return json.dumps(value)
    if isinstance(value, str) and (name != "value" or value not in _NON_FINITE):
        return csv_cell(value)
    return value


_NON_FINITE = ("NaN", "Infinity", "-Infinity")  # how _cell writes non-finite numbers


def _write_text(fmt: str, rows: list[dict[str, Any]], stream: TextIO) -> None:
    if fmt == "json":
        json.dump(rows, stream, allow_nan=False)
        stream.write("\n")
        return
    names = list(rows[0]) if rows else ["run", "tag", "step", "wall_time", "value"]
    # RFC 4180's CRLF: the csv module then quotes a field holding a bare CR, which readers
    # would otherwise take as the end of a row (a tag could smuggle in a row of its own).
    writer = csv.DictWriter(stream, fieldnames=names, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_value(k, v) for k, v in row.items()})


def _write_binary(fmt: str, rows: list[dict[str, Any]], stream: BinaryIO) -> None:
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    _write_text(fmt, rows, text)
    text.flush()
    text.detach()


def run(args: argparse.Namespace) -> int:
    from ..reader import KINDS
    from ..reader._atomic import write_atomically
    from ..reader._tables import arrow_table, read_table, write_parquet

    fmt = args.format.lower()
    if fmt not in ("csv", "json", "parquet"):
        raise CommandError(f"unknown format {args.format!r}; expected csv, json or parquet")
    if args.kind not in KINDS:
        raise CommandError(f"unknown kind {args.kind!r}; expected one of {', '.join(KINDS)}")
    if not is_url(args.logdir) and not os.path.exists(args.logdir):
        raise FileNotFoundError(2, "no such file or directory", args.logdir)
    if fmt == "parquet" and args.out == "-":
        raise CommandError("parquet cannot be written to stdout; give --out DIR")
    progress = Progress()
    cols, stats = read_table(
        args.logdir,
        args.kind,
        runs=args.runs,
        tags=args.tags,
        strict=args.strict,
        progress=progress.reading(),
    )
    progress.done()
    rows_written = len(cols["run"])
    if not rows_written:
        error = explain_nothing(args.logdir, args.runs, args.tags, args.kind, stats.records)
        if not isinstance(error, NotAnEventFile):  # its one line says it all (docs/CLI.md)
            report_skipped("export", stats)
        raise error
    target = "-" if args.out == "-" else os.path.join(args.out, f"{args.kind}.{fmt}")
    if target == "-":
        rows = _rows(cols)
        if fmt == "csv" and sys.stdout.isatty():  # JSON escapes by itself (ensure_ascii)
            rows = [{k: _shown(v) for k, v in row.items()} for row in rows]
        _write_text(fmt, rows, sys.stdout)
    else:
        os.makedirs(args.out, exist_ok=True)
        if fmt == "parquet":
            write_parquet(arrow_table(cols, args.kind), target)
        else:
            rows = _rows(cols)
            write_atomically(target, lambda stream: _write_binary(fmt, rows, stream))
    report_skipped("export", stats)
    if target != "-":
        print(f"wrote {count(rows_written, 'row')} to {printable(target)}", file=sys.stderr)
    return 0
