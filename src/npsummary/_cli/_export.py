"""``npsummary export LOGDIR --format csv|json|parquet``: scalars (or another kind) as a table."""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from typing import Any, TextIO

import numpy as np

from .._common.urls import is_url
from ._errors import CommandError
from ._progress import Progress

__all__ = ["register"]

_HELP = """\
examples:
  npsummary export runs/ --format csv                      ./scalars.csv
  npsummary export runs/ --format parquet --out tables/    tables/scalars.parquet
  npsummary export runs/ --format json --out - --tags loss  JSON rows on stdout
  npsummary export runs/ --format csv --runs '^train' --kind histograms

Scalars give the columns run, tag, step, wall_time, value (tbparse's names). Other kinds give
run, tag, step, wall_time and a value column: JSON arrays for histograms, PR curves, text and
tensors; base64 strings for image and audio bytes. Parquet needs pyarrow:
pip install 'npsummary[tables]'.
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
    p.set_defaults(run=run)


def _cell(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else str(v).replace("inf", "Infinity").replace("nan", "NaN")
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


def _write_text(fmt: str, rows: list[dict[str, Any]], stream: TextIO) -> None:
    if fmt == "json":
        json.dump(rows, stream, allow_nan=False)
        stream.write("\n")
        return
    names = list(rows[0]) if rows else ["run", "tag", "step", "wall_time", "value"]
    writer = csv.DictWriter(stream, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, list) else v for k, v in row.items()})


def run(args: argparse.Namespace) -> int:
    from ..reader import KINDS
    from ..reader._tables import columns, to_parquet

    fmt = args.format.lower()
    if fmt not in ("csv", "json", "parquet"):
        raise CommandError(f"unknown format {args.format!r}; expected csv, json or parquet")
    if args.kind not in KINDS:
        raise CommandError(f"unknown kind {args.kind!r}; expected one of {', '.join(KINDS)}")
    if not is_url(args.logdir) and not os.path.exists(args.logdir):
        raise FileNotFoundError(2, "no such file or directory", args.logdir)
    progress = Progress()
    progress.show(f"reading {args.logdir}", force=True)
    target = "-" if args.out == "-" else os.path.join(args.out, f"{args.kind}.{fmt}")
    if fmt == "parquet":
        if target == "-":
            raise CommandError("parquet cannot be written to stdout; give --out DIR")
        os.makedirs(args.out, exist_ok=True)
        to_parquet(args.logdir, target, args.kind, runs=args.runs, tags=args.tags)
        progress.done()
        import importlib

        pq: Any = importlib.import_module("pyarrow.parquet")
        count = pq.ParquetFile(target).metadata.num_rows
    else:
        rows = _rows(columns(args.logdir, args.kind, runs=args.runs, tags=args.tags))
        progress.done()
        count = len(rows)
        if target == "-":
            _write_text(fmt, rows, sys.stdout)
            return 0
        os.makedirs(args.out, exist_ok=True)
        with open(target, "w", newline="", encoding="utf-8") as f:
            _write_text(fmt, rows, f)
    print(f"wrote {count:,} rows to {target}", file=sys.stderr)
    return 0
