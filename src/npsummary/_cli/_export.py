"""``npsummary export LOGDIR --format csv|json|parquet``: scalars (or another kind) as a table."""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import os
import sys
from collections.abc import Iterator
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

Runs are read (in parallel processes for a large local logdir, --workers N to choose) and
written one at a time, so memory does not grow with the logdir. The file is DIR/KIND.FORMAT
(e.g. ./scalars.csv), written to a temporary file in DIR and then renamed over it: a link at
that name is replaced, never followed, and a failure leaves the previous file intact. In CSV,
a text cell (run, tag, or a text value) that starts with = + - @, a tab or a carriage return
is written with a leading ' so that a spreadsheet shows it as text instead of running it as a
formula (OWASP's CSV-injection advice); JSON and Parquet hold the text as it is. Lines end
with CRLF (RFC 4180). CSV written to a terminal has control characters escaped; written to a
file or a pipe, it holds the text exactly.

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
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="processes decoding runs (default: one per CPU for a large local logdir; 1: none)",
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


class _Nothing(Exception):
    """No row matched: the output is abandoned (no file is left)."""


class _TextWriter:
    """Rows written as they come: the CSV header and JSON's ``[`` only with the first row, so
    an export that finds nothing writes nothing. The JSON bytes are ``json.dump`` of the list of
    rows, the CSV bytes those of one ``DictWriter`` over all of them."""

    def __init__(self, fmt: str, stream: TextIO, shown: bool = False) -> None:
        self.fmt = fmt
        self.stream = stream
        self.shown = shown  # a terminal: control characters escaped
        self.count = 0
        self._csv: csv.DictWriter[str] | None = None

    def write(self, cols: dict[str, Any]) -> None:
        rows = _rows(cols)
        if self.shown:
            rows = [{k: _shown(v) for k, v in row.items()} for row in rows]
        if self.fmt == "json":
            for row in rows:
                self.stream.write(", " if self.count else "[")
                json.dump(row, self.stream, allow_nan=False)
                self.count += 1
            return
        for row in rows:
            if self._csv is None:
                # RFC 4180's CRLF: the csv module then quotes a field holding a bare CR, which
                # readers would otherwise take as the end of a row (a tag could smuggle in a
                # row of its own).
                self._csv = csv.DictWriter(self.stream, fieldnames=list(row), lineterminator="\r\n")
                self._csv.writeheader()
            self._csv.writerow({k: _csv_value(k, v) for k, v in row.items()})
            self.count += 1

    def close(self) -> None:
        if not self.count:
            raise _Nothing
        if self.fmt == "json":
            self.stream.write("]\n")


def _write_tables(fmt: str, tables: Iterator[dict[str, Any]], stream: BinaryIO) -> int:
    text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
    out = _TextWriter(fmt, text)
    for cols in tables:
        out.write(cols)
    out.close()
    text.flush()
    text.detach()
    return out.count


def run(args: argparse.Namespace) -> int:
    from ..reader import KINDS, ReadStats
    from ..reader._tables import iter_tables

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
    stats = ReadStats()
    tables = iter_tables(
        args.logdir,
        args.kind,
        runs=args.runs,
        tags=args.tags,
        strict=args.strict,
        workers=args.workers,
        stats=stats,
        progress=progress.reading(),
    )
    target = "-" if args.out == "-" else os.path.join(args.out, f"{args.kind}.{fmt}")
    first = next(tables, None)  # nothing matched: no file, and no folder for it either
    tables = itertools.chain([] if first is None else [first], tables)
    rows_written = 0
    try:
        if first is None:
            pass
        elif target == "-":
            # JSON escapes by itself (ensure_ascii); CSV to a terminal is escaped here.
            out = _TextWriter(fmt, sys.stdout, fmt == "csv" and sys.stdout.isatty())
            for cols in tables:
                out.write(cols)
            out.close()
            rows_written = out.count
        else:
            os.makedirs(args.out, exist_ok=True)
            rows_written = _write_file(fmt, args.kind, tables, target)
    except _Nothing:
        rows_written = 0
    progress.done()
    if not rows_written:
        error = explain_nothing(args.logdir, args.runs, args.tags, args.kind, stats.records)
        if not isinstance(error, NotAnEventFile):  # its one line says it all (docs/CLI.md)
            report_skipped("export", stats)
        raise error
    report_skipped("export", stats)
    if target != "-":
        print(f"wrote {count(rows_written, 'row')} to {printable(target)}", file=sys.stderr)
    return 0


def _write_file(fmt: str, kind: str, tables: Iterator[dict[str, Any]], target: str) -> int:
    """Write ``target`` run by run, atomically; nothing at all when no row matches."""
    from ..reader._atomic import write_atomically
    from ..reader._tables import _batches, _require, write_parquet_batches

    if fmt == "parquet":
        batches = _batches(_require("pyarrow"), tables, kind, 1 << 18)  # row groups of 256K rows
        return write_parquet_batches(batches, target, kind)
    written = 0

    def write(stream: BinaryIO) -> None:
        nonlocal written
        written = _write_tables(fmt, tables, stream)

    write_atomically(target, write)
    return written
