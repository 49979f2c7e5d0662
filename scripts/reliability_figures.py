"""RELIABILITY.md's "Last run" section, made from the figures report the suite writes.

Every reliability test appends one JSON line of counts to the file named by
``NPSUMMARY_RELIABILITY_REPORT`` (tests/_reliability_child.py ``report``), and the session adds
its totals (tests/conftest.py). This script turns the report of a default run and of a heavy run
into the section between the ``figures:begin``/``figures:end`` markers of RELIABILITY.md, so that
no figure there is copied by hand. The reports it was made from are committed in docs/figures/.

    NPSUMMARY_RELIABILITY_REPORT=$PWD/docs/figures/reliability-default.jsonl \\
        python -m pytest tests/test_reliability_*.py -q
    NPSUMMARY_HEAVY=1 NPSUMMARY_RELIABILITY_REPORT=$PWD/docs/figures/reliability-heavy.jsonl \\
        python -m pytest tests/test_reliability_*.py -q
    python scripts/reliability_figures.py --write     # or --check (tests/docs/test_figures.py)

(Remove the old .jsonl files first: runs append.)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "RELIABILITY.md"
FIGURES = ROOT / "docs" / "figures"
BEGIN = "<!-- figures:begin (made by scripts/reliability_figures.py; do not edit by hand) -->"
END = "<!-- figures:end -->"

Report = list[dict[str, Any]]


def load(path: Path) -> Report:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _n(value: float) -> str:
    """Thousands separated by a thin space, as the rest of RELIABILITY.md writes them."""
    if isinstance(value, float) and not value.is_integer():
        return f"{value:g}"
    return f"{int(value):,}".replace(",", "\u202f")


def _lines(report: Report, prefix: str) -> list[dict[str, Any]]:
    return [r for r in report if r["test"] == prefix or r["test"].startswith(prefix + ".")]


def _sum(report: Report, prefix: str, field: str) -> int:
    return sum(r.get(field, 0) for r in _lines(report, prefix))


def _one(report: Report, test: str, field: str) -> Any:
    values = [r[field] for r in report if r["test"] == test and field in r]
    return values[-1] if values else None


def _kills(r: Report) -> str:
    return _n(_sum(r, "crash", "kills_survived"))


def _records_after_kills(r: Report) -> str:
    checked = _sum(r, "crash", "records_checked")
    flushed = _sum(r, "crash", "records_flushed_before_kill")
    return f"{_n(checked)} ({_n(flushed)})"


def _torn(r: Report) -> str:
    return _n(_sum(r, "crash", "torn_tails_seen"))


def _threads_fork(r: Report) -> str:
    threads = _sum(r, "concurrency.threads", "events_checked")
    fork = _sum(r, "concurrency.fork", "events_checked")
    return f"{_n(threads)} / {_n(fork)}"


def _processes(r: Report) -> str:
    return _n(_sum(r, "concurrency.processes", "processes"))


def _pools(r: Report) -> str:
    pools = _lines(r, "concurrency.pool")
    return f"{_n(sum(p['records'] for p in pools))} ({len(pools)} pools)"


def _api_fuzz(r: Report) -> str:
    targets = _one(r, "fuzz.api", "examples_per_target") or {}
    return f"{_n(_one(r, 'fuzz.api', 'total_calls') or 0)} ({len(targets)})"


def _reader_fuzz(r: Report) -> str:
    return _n(_one(r, "reader.fuzz", "total_examples") or 0)


def _subrun_names(r: Report) -> str:
    examples = _one(r, "security.subrun_names", "examples") or 0
    dirs = _one(r, "security.subrun_names", "subrun_dirs_created") or 0
    return f"{_n(examples)} ({_n(dirs)} directories created, none outside)"


def _full_disk(r: Report) -> str:
    raised = _one(r, "faults.full_disk_bounded", "raised") or 0
    dropped = _one(r, "faults.full_disk_bounded", "dropped_counted") or 0
    writes = _one(r, "faults.full_disk_bounded", "writes") or 0
    return f"{_n(writes)} writes: {_n(raised)} raised, {_n(dropped)} drops counted"


def _retry_storm(r: Report) -> str:
    calls = _one(r, "faults.no_retry_storm", "calls_while_failing") or 0
    return f"{_n(_one(r, 'faults.no_retry_storm', 'write_attempts') or 0)} in {_n(calls)} calls"


def _reentrancy_signals(r: Report) -> str:
    injected = _sum(r, "reentrancy.signal_every_line", "handler_calls") + _sum(
        r, "reentrancy.segment_signal_every_line", "handler_calls"
    )
    storm = _sum(r, "reentrancy.signal_storm", "signals_handled")
    return f"{_n(injected)} / {_n(storm)}"


def _reentrancy_gc(r: Report) -> str:
    collected = 0
    scenarios = 0
    for line in r:
        test = line["test"]
        if test.startswith("reentrancy.") and "_every_line." in test:
            collected += line.get("writers_collected", 0) + line.get("finalizers_logged", 0)
            scenarios += 1
    return f"{_n(collected)} ({scenarios} scenarios)"


def _gc_storm(r: Report) -> str:
    return _n(_sum(r, "reentrancy.gc_storm", "writers_dropped"))


def _interrupted(r: Report) -> str:
    line = _lines(r, "faults.interrupted_flush")
    if not line:
        return "-"
    last = line[-1]
    return f"{last['interrupted']} of {last['rounds']} ({_n(last['records'])} records)"


def _close_race(r: Report) -> str:
    calls = _one(r, "concurrency.close_race_every_line", "calls") or 0
    refused = _one(r, "concurrency.close_race_every_line", "refused") or 0
    return f"{_n(calls)} ({_n(refused)} refused)"


def _tensors_2gib(r: Report) -> str:
    lines = _lines(r, "limits.tensor_2gib")
    slowest = max((line["seconds"] for line in lines), default=0)
    slowest_ms = slowest * 1000
    return f"{len(lines)} (slowest {'< 1' if slowest_ms < 1 else f'{slowest_ms:.0f}'} ms)"


def _tags(r: Report) -> str:
    tags = _one(r, "limits.tags", "tags")
    return "-" if tags is None else f"{_n(tags)} ({_one(r, 'limits.tags', 'seconds')} s)"


ROWS: list[tuple[str, Callable[[Report], str]]] = [
    ("SIGKILLs survived", _kills),
    ("Records checked after kills (flushed before the kill)", _records_after_kills),
    ("Torn tails seen, all at the tail and skipped by TensorBoard", _torn),
    ("Events checked under threads / fork", _threads_fork),
    ("Processes (spawn, fork, forkserver; with and without close)", _processes),
    ("Pool workers' records, none lost", _pools),
    ("API fuzz calls (targets)", _api_fuzz),
    ("Reader fuzz inputs", _reader_fuzz),
    ("Sub-run names tried", _subrun_names),
    ("Writes on a full disk", _full_disk),
    ("Write attempts while the disk stays full", _retry_storm),
    ("Re-entrancy: handler calls at every line / real signals handled", _reentrancy_signals),
    ("Re-entrancy: writers or finalizers collected at every line", _reentrancy_gc),
    ("Dropped writers under aggressive GC", _gc_storm),
    ("Interrupted flushes (records, each found once)", _interrupted),
    ("Calls racing `close()` (refused with ValueError, none lost)", _close_race),
    ("2 GiB tensors refused", _tensors_2gib),
    ("Distinct tags (time)", _tags),
]


def _session(report: Report) -> str:
    sessions = [r for r in report if r["test"] == "session"]
    if not sessions:
        return "(no session line in the report)"
    s = sessions[-1]
    parts = [f"{s['passed']} passed"]
    parts += [f"{s[k]} {k}" for k in ("failed", "skipped", "error", "xfailed") if s.get(k)]
    args = [a for a in s["args"] if a not in ("-p", "no:cacheprovider")]
    files = [a for a in args if a.startswith("tests/test_reliability_")]
    if len(files) > 1:  # the shell's expansion of the glob the docstring gives
        args = ["tests/test_reliability_*.py", *(a for a in args if a not in files)]
    env = ["NPSUMMARY_HEAVY=1"] if s.get("heavy") else []
    if "hypothesis_profile" in s:
        env.append(f"HYPOTHESIS_PROFILE={s['hypothesis_profile']}")
    command = " ".join([*env, "python -m pytest", *args])
    failed = "".join(f"; failed: `{name}`" for name in s.get("failed_tests", []))
    return f"`{command}`: {', '.join(parts)} in {s['seconds']} s{failed}"


def section(default: Report, heavy: Report | None) -> str:
    out = [BEGIN, ""]
    out.append(f"* Default run: {_session(default)}.")
    if heavy is not None:
        out.append(f"* Heavy run: {_session(heavy)}.")
    out.append("")
    if heavy is None:
        out += ["| Figure | Default |", "|---|---|"]
        out += [f"| {label} | {row(default)} |" for label, row in ROWS]
    else:
        out += ["| Figure | Default | Heavy |", "|---|---|---|"]
        out += [f"| {label} | {row(default)} | {row(heavy)} |" for label, row in ROWS]
    out += ["", END]
    return "\n".join(out)


def rendered(doc: str) -> str:
    default = load(FIGURES / "reliability-default.jsonl")
    heavy_path = FIGURES / "reliability-heavy.jsonl"
    heavy = load(heavy_path) if heavy_path.exists() else None
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + section(default, heavy) + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite RELIABILITY.md")
    parser.add_argument("--check", action="store_true", help="fail if RELIABILITY.md differs")
    args = parser.parse_args()
    doc = DOC.read_text(encoding="utf-8")
    new = rendered(doc)
    if args.write:
        DOC.write_text(new, encoding="utf-8")
    elif args.check:
        if new != doc:
            print("RELIABILITY.md differs from docs/figures/: run --write", file=sys.stderr)
            return 1
    else:
        print(new.split(BEGIN, 1)[1].split(END, 1)[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
