"""Security: names never escape the logdir, nothing is unpickled or evaluated, the umask rules.

* Tags and run names that become file or directory names (``add_scalars`` sub-runs today; add a
  line to ``SUBRUN_CALLS`` for hparams child runs and embeddings when they land) can never leave
  the logdir: Hypothesis over names made of ``..``, ``/``, ``\\``, NUL, absolute and drive paths,
  against a ``MemorySink`` (every sub-run name is one safe path component) and against real files
  in a sandbox (nothing appears outside the logdir). ``FileSink.child``/``MemorySink.child``
  refuse unsafe names themselves, and ``filename_suffix`` cannot carry a path.
* No pickle, marshal, eval or exec anywhere in ``src/`` (a scan), and reading files back through
  npsummary's reader trips none of them (behaviour, with those functions booby-trapped).
* Files and directories are created with the user's umask (checked in a child process).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import marshal
import os
import pickle
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npsummary
from _reliability_child import CHILD, HEAVY, check_event_file, event_files, report
from conftest import examples
from npsummary import FileSink, MemorySink, SummaryWriter
from npsummary._format.record import iter_records, read_records
from npsummary._sinks.base import check_run_name, check_run_path

SRC = Path(npsummary.__file__).parent
EXAMPLES = 2000 if HEAVY else examples(500)
COUNTS: Counter[str] = Counter()

#: Public calls that turn a user-supplied name into a sub-run directory: one line each.
SUBRUN_CALLS: dict[str, Callable[[SummaryWriter, str], None]] = {
    "add_scalars(main_tag)": lambda w, name: w.add_scalars(name, {"k": 1.0}, 0),
    "add_scalars(key)": lambda w, name: w.add_scalars("m", {name: 1.0}, 0),
}

_PARTS = ["..", ".", "/", "\\", "\x00", "a", "é", "C:", "~", "//", "\\\\", " ", "\ud800", "%2e%2e"]
evil_names = st.one_of(
    st.lists(st.sampled_from(_PARTS), min_size=1, max_size=8).map("".join),
    st.sampled_from(
        [
            "..", "../..", "../../etc", "/etc/passwd", "\\..\\..\\windows", "C:\\x", "C:x",
            "a/../../b", "..\x00", "\x00", "", ".", "./.", "...", "/", "~/x", "//server/share",
        ]
    ),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=12),
)  # fmt: skip


def _is_safe_component(name: str) -> bool:
    return (
        name not in ("", ".", "..")
        and not any(c in name for c in "/\\\x00")
        and not os.path.isabs(name)
        and not os.path.splitdrive(name)[0]
        and os.path.dirname(os.path.normpath(os.path.join("/logdir", name))) == "/logdir"
    )


def _names(sink: MemorySink, prefix: str = "") -> Iterator[str]:
    for name, child in sink.children.items():
        yield name
        yield from _names(child, prefix + name + "/")


@pytest.mark.fuzz
@pytest.mark.parametrize("call", sorted(SUBRUN_CALLS))
def test_subrun_names_are_one_safe_component(call: str) -> None:
    @settings(max_examples=EXAMPLES, deadline=None)
    @given(name=evil_names)
    def run(name: str) -> None:
        sink = MemorySink()
        try:
            SUBRUN_CALLS[call](SummaryWriter(sink), name)
        except (ValueError, TypeError):
            COUNTS[f"{call}.refused"] += 1
        else:
            COUNTS[f"{call}.accepted"] += 1
        for child in _names(sink):
            assert _is_safe_component(child), f"{name!r} became sub-run {child!r}"

    run()


def _snapshot(root: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, n), root)
        for d, dirs, files in os.walk(root)
        for n in dirs + files
    }


@pytest.mark.fuzz
def test_subrun_names_never_escape_on_disk(tmp_path: Path) -> None:
    sandbox = tmp_path / "sandbox"
    logdir = sandbox / "deep" / "logdir"
    logdir.mkdir(parents=True)
    before = _snapshot(tmp_path)
    writer = SummaryWriter(logdir, max_queue=1000)

    @settings(
        max_examples=EXAMPLES // 2,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(call=st.sampled_from(sorted(SUBRUN_CALLS)), name=evil_names)
    def run(call: str, name: str) -> None:
        try:
            SUBRUN_CALLS[call](writer, name)
            COUNTS["on_disk.accepted"] += 1
        except (ValueError, TypeError):
            COUNTS["on_disk.refused"] += 1

    run()
    writer.close()
    inside = os.path.join("sandbox", "deep", "logdir") + os.sep
    created = _snapshot(tmp_path) - before
    assert created and all(p.startswith(inside) for p in created), sorted(created)[:10]
    for path in event_files(str(logdir)):
        # The main file, or one file in a direct sub-directory of the logdir.
        real = Path(os.path.realpath(path))
        assert real.parent == logdir or real.parent.parent == logdir, path
        check_event_file(path)
    report(
        "security.subrun_names",
        examples=sum(COUNTS.values()),
        subrun_dirs_created=len([d for d in logdir.iterdir() if d.is_dir()]),
    )


@pytest.mark.parametrize(
    "name",
    ["..", ".", "", "a/b", "../x", "/abs", "a\\b", "nul\x00", "/"]
    + (["C:drive", "C:\\x"] if os.name == "nt" else []),
)
def test_sinks_refuse_unsafe_child_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="one path component"):
        check_run_name(name)
    if name == "a/b":  # safe parts: a nested sub-run (tensorboardX's add_scalars), see below
        return
    with pytest.raises(ValueError):
        MemorySink().child(name)
    sink = FileSink(tmp_path / "run")
    with pytest.raises(ValueError):
        sink.child(name)
    sink.close()
    assert sorted(os.listdir(tmp_path)) == ["run"]
    assert [p.name for p in (tmp_path / "run").iterdir() if p.is_dir()] == []


@pytest.mark.parametrize("name", ["a/..", "../a", "a//b", "a/", "a/./b", "a/b\\c", "a/\x00"])
def test_nested_child_names_are_safe_parts_only(tmp_path: Path, name: str) -> None:
    # Sinks take "a/b" (nested sub-runs of the tensorboardX flavour), each part one safe
    # component; anything else is refused before a directory is created.
    with pytest.raises(ValueError):
        check_run_path(name)
    sink = FileSink(tmp_path / "run")
    with pytest.raises(ValueError):
        sink.child(name)
    nested = sink.child("a/b")
    nested.write(b"")
    sink.close()
    assert sorted(p.name for p in (tmp_path / "run").iterdir() if p.is_dir()) == ["a"]
    assert check_run_path("a/b") == "a/b"


@pytest.mark.parametrize("suffix", ["/../../evil", "a/b", "..\\x", "x\x00"])
def test_filename_suffix_cannot_carry_a_path(tmp_path: Path, suffix: str) -> None:
    logdir = tmp_path / "a" / "b" / "run"
    with pytest.raises(ValueError):
        SummaryWriter(logdir, filename_suffix=suffix)
    with pytest.raises(ValueError):
        npsummary.create_file_writer(logdir, filename_suffix=suffix)
    assert event_files(str(tmp_path)) == []


# -- no pickle / eval -----------------------------------------------------------------------------

_FORBIDDEN = {
    r"\bimport\s+(c?pickle|marshal|shelve|dill|cloudpickle)\b": "an unpickler",
    r"\bfrom\s+(c?pickle|marshal|shelve|dill|cloudpickle)\b": "an unpickler",
    r"(?<![\w.])eval\s*\(": "eval()",
    r"(?<![\w.])exec\s*\(": "exec()",
    r"\b__import__\s*\(": "__import__()",
    r"allow_pickle\s*=\s*True": "np.load(allow_pickle=True)",
    r"\byaml\.(unsafe_)?load\s*\(": "yaml.load()",
    r"\bnp\.load\s*\(|\bnumpy\.load\s*\(": "np.load()",
}


def test_source_has_no_pickle_or_eval() -> None:
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 5
    hits = []
    for path in files:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            for pattern, what in _FORBIDDEN.items():
                if re.search(pattern, code):
                    hits.append(f"{path.relative_to(SRC)}:{lineno}: {what}: {line.strip()}")
    assert not hits, "\n".join(hits)
    report("security.source_scan", files_scanned=len(files), patterns=len(_FORBIDDEN))


class _Payload:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("echo pwned > /dev/null",))


def test_reading_never_unpickles_or_evaluates(tmp_path: Path, monkeypatch: Any) -> None:
    tripped: list[str] = []

    def trap(name: str) -> Callable[..., Any]:
        def fail(*args: Any, **kwargs: Any) -> Any:
            tripped.append(name)
            raise AssertionError(f"{name} called while reading")

        return fail

    logdir = tmp_path / "run"
    with SummaryWriter(logdir) as w:
        w.add_scalar("loss", 1.0, 1)
        w.add_scalars("m", {"a": 2.0}, 1)
        w.add_text("note", "hello", 1)
        # A record whose payload is a pickle bomb: a reader that unpickled would run it.
        w.sink.write(pickle.dumps(_Payload()))
    for module, name in ((pickle, "loads"), (pickle, "load"), (marshal, "loads")):
        monkeypatch.setattr(module, name, trap(f"{module.__name__}.{name}"))
    monkeypatch.setattr(builtins, "eval", trap("eval"))
    monkeypatch.setattr(builtins, "exec", trap("exec"))
    records = 0
    for path in event_files(str(logdir)):
        data = Path(path).read_bytes()
        for payload in iter_records(data):
            records += 1
            with contextlib.suppress(Exception):  # the pickle bomb is no Event: refused, not run
                npsummary.proto.Event.FromString(payload)
        with open(path, "rb") as f:
            records += sum(1 for _ in read_records(f))
    assert not tripped
    assert records > 6


# -- umask ----------------------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "umask"), reason="POSIX umask")
def test_files_are_created_with_the_users_umask(tmp_path: Path) -> None:
    logdir = tmp_path / "run"
    out = subprocess.run(
        [sys.executable, CHILD, "umask", str(logdir)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    modes = json.loads(out.stdout.splitlines()[-1])["modes"]
    assert modes["."] == 0o750
    files = {k: v for k, v in modes.items() if "tfevents" in k}
    dirs = {k: v for k, v in modes.items() if k not in files}
    assert len(files) == 2 and set(files.values()) == {0o640}, modes
    assert set(dirs.values()) == {0o750}, modes
