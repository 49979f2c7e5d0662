"""``npsummary inspect LOGDIR``: what a logdir holds, at a glance or as JSON."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import Any

import numpy as np

from .._common.urls import is_url
from ._progress import Progress
from ._report import count, explain_nothing
from ._safe import printable

__all__ = ["register", "sparkline", "summarize"]

_BARS = "▁▂▃▄▅▆▇█"
_KIND_ORDER = ("scalars", "histograms", "images", "audio", "text", "pr_curves", "tensors")

_HELP = r"""examples:
  npsummary inspect runs/
  npsummary inspect runs/ --tags 'loss|acc' --runs train
  npsummary inspect runs/exp1/events.out.tfevents.1700000000.host --json | jq .runs

Text from the files (run names, tags, plugin names, hyperparameters, file names) is printed with
control characters escaped (\x1b, \u202e, ...), so a file cannot drive the terminal; --json
prints it as JSON strings. Corrupt records, undecodable values and torn tails are skipped,
counted and listed under "problems" (--strict: the first corrupt record or undecodable value is
an error). A path that holds no event file, a file that is not one, and a --runs or --tags that
matches nothing are errors (exit status 1).
"""


def register(commands: Any) -> None:
    p = commands.add_parser(
        "inspect",
        help="list runs, tags, step ranges and last values (replaces tensorboard --inspect)",
        description="Show what a logdir holds: runs, tags grouped by kind, step ranges, counts, "
        "last values with a sparkline per scalar, file sizes and any corrupt or torn records.",
        epilog=_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("logdir", help="a logdir, a run directory or one event file")
    p.add_argument("--json", action="store_true", help="print the same information as JSON")
    p.add_argument("--runs", metavar="REGEX", help="only runs whose name matches")
    p.add_argument("--tags", metavar="REGEX", help="only tags that match")
    p.add_argument(
        "--strict", action="store_true", help="fail on a corrupt record instead of skipping it"
    )
    p.set_defaults(run=run)


def sparkline(values: np.ndarray, width: int = 24) -> str:
    """``values`` as a line of block characters, averaged into at most ``width`` columns.

    Non-finite values are left out of the averages (a column of only such values is blank), and
    values are scaled by their largest magnitude first, so series near the float64 limits
    (1e308) neither overflow nor fail."""
    values = np.asarray(values, np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        return ""
    scale = float(np.max(np.abs(values[finite])))
    scaled = values / scale if scale > 0 else values
    cols = np.array_split(np.arange(values.size), min(width, values.size))
    means = np.array(
        [scaled[c][finite[c]].mean() if finite[c].any() else np.nan for c in cols], np.float64
    )
    lo, hi = np.nanmin(means), np.nanmax(means)
    span = hi - lo if hi > lo else 1.0
    levels = np.clip(np.nan_to_num((means - lo) / span * (len(_BARS) - 1)), 0, len(_BARS) - 1)
    return "".join(
        " " if math.isnan(m) else _BARS[int(v)] for m, v in zip(means, levels, strict=True)
    )


def _number(x: float) -> float | str:
    return x if math.isfinite(x) else str(x)


def _entry(kind: str, series: Any) -> dict[str, Any]:
    steps = series.steps
    entry: dict[str, Any] = {
        "count": int(steps.size),
        "first_step": int(steps.min()) if steps.size else None,
        "last_step": int(steps[-1]) if steps.size else None,
    }
    if kind == "scalars" and steps.size:
        entry["last_value"] = _number(float(series.values[-1]))
        entry["sparkline"] = sparkline(series.last_write_wins().values)
    if kind == "tensors":
        entry["plugin"] = series.plugin_name
    return entry


def summarize(
    logdir: str, runs: str | None, tags: str | None, progress: Progress, *, strict: bool = False
) -> dict[str, Any]:
    """The information ``inspect`` prints, as a JSON-ready dict."""
    from ..reader._discover import compile_filter, discover
    from ..reader._io import filesystem_for
    from ..reader._load import load_runs
    from ..reader._logdata import build
    from ..reader._values import KINDS

    fs = filesystem_for(logdir)
    run_re, tag_re = compile_filter(runs, "--runs"), compile_filter(tags, "--tags")
    found = discover(fs, logdir, run_re)
    files = [(f, fs.size(f)) for r in found for f in r.files]
    raw, stats = load_runs(
        fs,
        logdir,
        kinds=KINDS,
        runs=run_re,
        tags=tag_re,
        strict=strict,
        progress=progress.reading(len(found)),
    )
    progress.done()
    data = build(raw, stats)
    out_runs: dict[str, Any] = {name: {} for name in data.runs}
    for kind in _KIND_ORDER:
        for (run, tag), series in getattr(data, kind).items():
            out_runs[run].setdefault(kind, {})[tag] = _entry(kind, series)
    for run, hp in data.hparams.items():
        out_runs[run]["hparams"] = {
            "hparams": {
                k: _number(v) if isinstance(v, float) else v for k, v in hp.hparams.items()
            },
            "metrics": {k: _number(v) for k, v in hp.metrics.items()},
        }
    return {
        "logdir": logdir,
        "files": [{"path": f, "size": size} for f, size in files],
        "runs": out_runs,
        "records": stats.records,
        "bytes": stats.bytes,
        "corrupt_records": stats.corrupt_records,
        "corrupt_bytes": stats.corrupt_bytes,
        "torn_tails": stats.torn_tails,
        "bad_values": stats.bad_values,
        "problems": stats.problems,
    }


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000  # type: ignore[assignment]
    return str(n)


def _text(info: dict[str, Any]) -> str:
    lines = [
        f"logdir {info['logdir']}: {count(len(info['runs']), 'run')}, "
        f"{count(len(info['files']), 'file')}, {_size(info['bytes'])}, "
        f"{count(info['records'], 'record')}"
    ]
    sizes: dict[str, int] = {}
    for f in info["files"]:
        sizes[os.path.dirname(f["path"])] = sizes.get(os.path.dirname(f["path"]), 0) + f["size"]
    for run, kinds in info["runs"].items():
        lines.append(f"run {run}")
        for kind, tags in kinds.items():
            if kind == "hparams":
                lines.append(f"  hparams  {tags['hparams']}  metrics {tags['metrics']}")
                continue
            lines.append(f"  {kind}")
            width = max(len(t) for t in tags)
            for tag, e in tags.items():
                text = f"    {tag:<{width}}  steps {e['first_step']}..{e['last_step']}"
                text += f"  ({count(e['count'], 'record')})"
                if "last_value" in e:
                    text += (
                        f"  last {e['last_value']:.6g}"
                        if isinstance(e["last_value"], float)
                        else f"  last {e['last_value']}"
                    )
                    text += f"  {e['sparkline']}"
                if "plugin" in e:
                    text += f"  plugin {e['plugin'] or '(none)'}"
                lines.append(text)
    lines.append("files")
    for f in info["files"]:
        lines.append(f"  {_size(f['size']):>9}  {f['path']}")
    problems = []
    if info["corrupt_records"]:
        problems.append(
            f"{count(info['corrupt_records'], 'corrupt record')} "
            f"({count(info['corrupt_bytes'], 'byte')}) skipped"
        )
    if info["torn_tails"]:
        torn = count(info["torn_tails"], "torn tail")
        problems.append(f"{torn} (a writer still writing, or killed)")
    if info["bad_values"]:
        problems.append(f"{count(info['bad_values'], 'undecodable value')} skipped")
    lines.append("problems: " + ("; ".join(problems) if problems else "none"))
    lines.extend(f"  {p}" for p in info["problems"])
    return "\n".join(printable(line) for line in lines)


def run(args: argparse.Namespace) -> int:
    if not is_url(args.logdir) and not os.path.exists(args.logdir):
        raise FileNotFoundError(2, "no such file or directory", args.logdir)
    info = summarize(args.logdir, args.runs, args.tags, Progress(), strict=args.strict)
    selected = args.runs is not None or args.tags is not None
    if not info["records"] or (selected and not any(info["runs"].values())):
        raise explain_nothing(args.logdir, args.runs, args.tags, "summaries", info["records"])
    print(json.dumps(info, indent=1, allow_nan=False) if args.json else _text(info))
    return 0
