"""The integrations as a hostile user drives them (issue 29, items 1 and 2): every rank source
ranks.py reads (and ``LOCAL_RANK``, which it does not) on every entry point, every URL scheme
on every path that creates a file, and use after ``close()``.

The rule under test: every process writes, as the originals do through TensorFlow (none of
Keras, Flax, CLU or optuna-integration has a rank rule), and every file goes into the logdir
through npsummary's storage, nothing under the working directory outside it. Flax's and CLU's
``SummaryWriter`` and the hp API need no framework (they run in the README's test command);
CLU's ``create_default_writer`` needs CLU and the Optuna callback Optuna (stage 70). Keras is
in ``test_keras_adversarial.py`` (a child process: Keras fixes its backend at import).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npsummary._core.ranks import RANK_VARIABLES
from npsummary._format.record import iter_records
from url_schemes import SCHEMES, logdir_in, stray_files

pytestmark = pytest.mark.tf_free

fsspec = pytest.importorskip("fsspec", reason="URL logdirs need fsspec (npsummary[remote])")

NEEDS_CLU = pytest.mark.skipif(
    importlib.util.find_spec("clu") is None, reason="CLU runs in .ci/stages/70-integrations.sh"
)
NEEDS_OPTUNA = pytest.mark.skipif(
    importlib.util.find_spec("optuna") is None,
    reason="Optuna runs in .ci/stages/70-integrations.sh",
)


# -- the entry points: each writes through one integration, closes, and names its runs --------


def _flax(logdir: str) -> list[str]:
    from npsummary.integrations.flax import SummaryWriter

    writer = SummaryWriter(logdir)
    writer.scalar("loss", 0.5, 0)
    writer.hparams({"lr": 0.1, "net": {"depth": 2}})
    writer.close()
    return [""]


def _clu_summary_writer(logdir: str) -> list[str]:
    from npsummary.integrations import clu

    writer = clu.SummaryWriter(logdir)
    writer.write_scalars(0, {"loss": 0.5})
    writer.write_hparams({"lr": 0.1})
    writer.close()
    return [""]


def _clu_default_writer(logdir: str) -> list[str]:
    from npsummary.integrations import clu

    writer = clu.create_default_writer(logdir, collection="train", asynchronous=False)
    writer.write_scalars(0, {"loss": 0.5})
    writer.close()
    return ["train"]


def _optuna(logdir: str) -> list[str]:
    import optuna

    from npsummary.integrations.optuna import TensorBoardCallback

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))

    def objective(trial: Any) -> float:
        return float(trial.suggest_float("x", 0.0, 1.0))

    study.optimize(objective, n_trials=2, callbacks=[TensorBoardCallback(logdir, "value")])
    return ["trial-0", "trial-1"]


def _hp_api(logdir: str) -> list[str]:
    import npsummary
    from npsummary import hparams as hp

    with npsummary.create_file_writer(logdir).as_default():
        hp.hparams_config([hp.HParam("lr", hp.RealInterval(0.0, 1.0))], [hp.Metric("loss")])
        hp.hparams({"lr": 0.5}, trial_id="t")
        npsummary.scalar("loss", 0.25, step=1)
    return [""]


ENTRY_POINTS = [
    pytest.param(_flax, id="flax"),
    pytest.param(_clu_summary_writer, id="clu_summary_writer"),
    pytest.param(_clu_default_writer, id="clu_default_writer", marks=NEEDS_CLU),
    pytest.param(_optuna, id="optuna", marks=NEEDS_OPTUNA),
]
# The hp API has no writer of its own (it writes through the caller's): URL cases only.
WRITING_ENTRY_POINTS = [*ENTRY_POINTS, pytest.param(_hp_api, id="hp_api")]


def _summaries_per_run(files: dict[str, bytes]) -> dict[str, int]:
    """Run (relative folder, "" for the logdir) -> records past each file's version record."""
    counts: dict[str, int] = {}
    for name, data in files.items():
        if "tfevents" not in name.rsplit("/", 1)[-1]:
            continue
        run = name.rpartition("/")[0]
        counts[run] = counts.get(run, 0) + len(list(iter_records(data))) - 1
    return counts


def _assert_written(files: dict[str, bytes], runs: list[str]) -> None:
    counts = _summaries_per_run(files)
    for run in runs:
        assert counts.get(run, 0) > 0, f"run {run!r} has no summary: {sorted(files)}"


# -- ranks ------------------------------------------------------------------------------------

RANK_SOURCES = (*RANK_VARIABLES, "LOCAL_RANK", "RANK=not-a-rank", "torch.distributed", "jax")


def _fake_rank(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``source`` say this process is rank 1 (or, for ``RANK=not-a-rank``, say garbage)."""
    if source == "RANK=not-a-rank":
        monkeypatch.setenv("RANK", "not-a-rank")
    elif source == "torch.distributed":
        dist = types.ModuleType("torch.distributed")
        dist.is_available = lambda: True  # type: ignore[attr-defined]
        dist.is_initialized = lambda: True  # type: ignore[attr-defined]
        dist.get_rank = lambda: 1  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "torch.distributed", dist)
    elif source == "jax":
        jax = sys.modules.get("jax")
        if jax is None:
            jax = types.ModuleType("jax")
            monkeypatch.setitem(sys.modules, "jax", jax)
        monkeypatch.setattr(jax, "process_index", lambda: 1, raising=False)
        # npsummary asks only a JAX whose backends run (asking starts them)
        bridge = types.ModuleType("jax._src.xla_bridge")
        bridge.backends_are_initialized = lambda: True  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "jax._src.xla_bridge", bridge)
    else:
        monkeypatch.setenv(source, "1")


def test_the_rank_sources_really_silence_npsummarys_own_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fakes below work: each one makes ``npsummary.create_file_writer`` silent."""
    import npsummary

    for source in (*RANK_VARIABLES, "torch.distributed", "jax"):
        with monkeypatch.context() as patch:
            _fake_rank(source, patch)
            writer = npsummary.create_file_writer(str(tmp_path / source))
            assert isinstance(writer, npsummary.NoopSummaryWriter), source
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("source", RANK_SOURCES)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_every_process_writes_whatever_rank_the_environment_names(
    entry: Callable[[str], list[str]],
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29 item 2: optuna-integration, Flax and CLU write on every process through TF; a
    worker with ``SLURM_PROCID=1`` or ``RANK=1`` wrote nothing here (its trials were lost)."""
    _fake_rank(source, monkeypatch)
    logdir = tmp_path / "logs"
    runs = entry(str(logdir))
    files = {p.relative_to(logdir).as_posix(): p.read_bytes() for p in logdir.rglob("*.*")}
    _assert_written(files, runs)
    assert not [p for p in logdir.rglob("rank_*")], "a rank sub-run instead of the logdir"


@pytest.mark.parametrize("source", (*RANK_VARIABLES, "torch.distributed", "jax"))
def test_the_hp_api_follows_the_callers_writer(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hp.hparams`` has no rank rule of its own, as TensorBoard's: on rank 1 it writes where
    the caller's writer writes (nothing under npsummary's default, ``rank_1`` with
    ``ranks="all"``, the logdir with ``rank=0``)."""
    import npsummary
    from npsummary import hparams as hp

    _fake_rank(source, monkeypatch)
    written = {}
    cases: dict[str, dict[str, Any]] = {"default": {}, "all": {"ranks": "all"}, "zero": {"rank": 0}}
    for name, options in cases.items():
        with npsummary.create_file_writer(str(tmp_path / name), **options).as_default():
            written[name] = hp.hparams({"lr": 0.5}, trial_id="t")
    assert written == {"default": False, "all": True, "zero": True}
    runs = sorted(p.parent.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*tfevents*"))
    assert runs == ["all/rank_1", "zero"]


# -- URL schemes --------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("entry", WRITING_ENTRY_POINTS)
def test_every_file_lands_in_the_logdirs_own_filesystem(
    entry: Callable[[str], list[str]],
    scheme: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with logdir_in(scheme, tmp_path) as logdir:
        runs = entry(logdir.url)
        _assert_written(logdir.files(), runs)
    assert stray_files(cwd, scheme) == [], "files created under the working directory"


@pytest.mark.parametrize("entry", WRITING_ENTRY_POINTS)
def test_a_pathlike_logdir_is_accepted(
    entry: Callable[[str], list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The originals take ``os.PathLike`` logdirs (TensorFlow's writer does): so do these."""
    monkeypatch.chdir(tmp_path)
    runs = entry(Path("logs"))  # type: ignore[arg-type]
    logdir = tmp_path / "logs"
    files = {p.relative_to(logdir).as_posix(): p.read_bytes() for p in logdir.rglob("*.*")}
    _assert_written(files, runs)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"]


@pytest.mark.parametrize(
    "url", ["nosuchscheme://bucket/logs", "gs://bucket/logs"], ids=["unknown", "gs-uninstalled"]
)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_url_that_cannot_be_written_is_refused_clearly_and_creates_nothing(
    entry: Callable[[str], list[str]],
    url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if url.startswith("gs:") and importlib.util.find_spec("gcsfs") is not None:
        pytest.skip("gcsfs is installed: gs:// would reach Google")
    monkeypatch.chdir(tmp_path)
    with pytest.raises((ImportError, ValueError), match=r"logdir '.*://bucket/logs.*'"):
        entry(url)
    assert list(tmp_path.iterdir()) == []


# -- use after close ------------------------------------------------------------------------------


def _records(logdir: Path) -> int:
    return sum(len(list(iter_records(p.read_bytes()))) for p in logdir.rglob("*tfevents*"))


def test_flax_writer_after_close_raises_as_flax_and_writes_nothing(tmp_path: Path) -> None:
    from npsummary.integrations.flax import SummaryWriter

    writer = SummaryWriter(tmp_path)
    writer.scalar("loss", 1.0, 0)
    writer.close()
    before = _records(tmp_path)
    calls = {
        "scalar": lambda: writer.scalar("loss", 1.0, 1),
        "image": lambda: writer.image("img", np.zeros((2, 2)), 1),
        "audio": lambda: writer.audio("snd", np.zeros((1, 8, 1)), 1),
        "histogram": lambda: writer.histogram("h", np.arange(4), 1),
        "text": lambda: writer.text("t", "x", 1),
        "write": lambda: writer.write("w", np.ones(2), 1),
        "hparams": lambda: writer.hparams({"lr": 1.0}),
        "flush": writer.flush,
    }
    for name, call in calls.items():
        with pytest.raises(AttributeError):  # Flax deletes its TF writer in close()
            call()
        assert _records(tmp_path) == before, name
    writer.close()  # idempotent, as Flax's


def test_clu_writer_after_close_raises_as_tensorflows_and_writes_nothing(tmp_path: Path) -> None:
    from npsummary.integrations import clu

    writer = clu.SummaryWriter(tmp_path)
    writer.write_scalars(0, {"loss": 1.0})
    writer.close()
    before = _records(tmp_path)
    calls: dict[str, Callable[[], object]] = {
        "write_scalars": lambda: writer.write_scalars(1, {"loss": 1.0}),
        "write_summaries": lambda: writer.write_summaries(1, {"s": np.ones(2)}),
        "write_images": lambda: writer.write_images(1, {"i": np.zeros((2, 2, 3))}),
        "write_audios": lambda: writer.write_audios(1, {"a": np.zeros((1, 8, 1))}, sample_rate=8),
        "write_texts": lambda: writer.write_texts(1, {"t": "x"}),
        "write_histograms": lambda: writer.write_histograms(1, {"h": np.arange(4)}),
        "write_pointcloud": lambda: writer.write_pointcloud(1, {"p": np.zeros((1, 2, 3))}),
        "write_hparams": lambda: writer.write_hparams({"lr": 1.0}),
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match="closed"):  # TF's closed SummaryWriter
            call()
        assert _records(tmp_path) == before, name
    writer.flush()  # TF's flush and close of a closed writer do nothing
    writer.close()
    assert _records(tmp_path) == before


@NEEDS_OPTUNA
def test_optuna_callback_serves_study_after_study(tmp_path: Path) -> None:
    """The callback holds no writer between trials: a second study reuses it and writes its
    trials (numbered from 0 again, as optuna-integration's, into the same runs)."""
    _optuna(str(tmp_path))
    first = _summaries_per_run(
        {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*.*")}
    )
    _optuna(str(tmp_path))
    second = _summaries_per_run(
        {p.relative_to(tmp_path).as_posix(): p.read_bytes() for p in tmp_path.rglob("*.*")}
    )
    assert sorted(first) == sorted(second) == ["trial-0", "trial-1"]
    assert all(second[run] == 2 * first[run] for run in first)
