"""Child process of test_keras_adversarial.py: Keras's ``TensorBoard`` (npsummary's) and
``hp.KerasCallback`` on every URL scheme, under every rank source, and fitted twice.

    python _keras_adversarial_child.py <base_dir>

prints one JSON line (see ``main``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))

import keras  # noqa: E402
import numpy as np  # noqa: E402

from npsummary._core.ranks import RANK_VARIABLES  # noqa: E402
from npsummary._format.record import iter_records  # noqa: E402
from npsummary.integrations._private import run_path  # noqa: E402
from npsummary.integrations.keras import KerasCallback, TensorBoard  # noqa: E402
from url_schemes import SCHEMES, logdir_in, stray_files  # noqa: E402

RANK_SOURCES = (*RANK_VARIABLES, "LOCAL_RANK", "RANK=not-a-rank", "torch.distributed", "jax")
TOKENS = np.arange(24, dtype="int32").reshape(8, 3) % 6
TARGETS = np.linspace(0, 1, 8, dtype="float32").reshape(8, 1)


def _model() -> Any:
    keras.backend.clear_session()
    model = keras.Sequential(
        [
            keras.Input((3,), dtype="int32"),
            keras.layers.Embedding(6, 2, name="emb"),
            keras.layers.Flatten(),
            keras.layers.Dense(1),
        ]
    )
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    return model


def _fit(model: Any, logdir: str, epochs: int = 1, callback: Any = None) -> Any:
    callback = callback or TensorBoard(logdir, embeddings_freq=1, histogram_freq=1)
    hparams = KerasCallback(run_path(logdir, "hp"), {"lr": 0.1})
    model.fit(TOKENS, TARGETS, epochs=epochs, verbose=0, callbacks=[callback, hparams])
    return callback


def _summaries_per_run(files: dict[str, bytes]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name, data in files.items():
        if "tfevents" in name.rsplit("/", 1)[-1]:
            run = name.rpartition("/")[0]
            counts[run] = counts.get(run, 0) + len(list(iter_records(data))) - 1
    return counts


def _local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@contextlib.contextmanager
def _rank_one(source: str) -> Iterator[None]:
    """``source`` says this process is rank 1 (``RANK=not-a-rank``: garbage) while it lasts."""
    saved_env = dict(os.environ)
    saved_dist = sys.modules.get("torch.distributed")
    jax = sys.modules.get("jax")
    saved_index = getattr(jax, "process_index", None)
    try:
        if source == "RANK=not-a-rank":
            os.environ["RANK"] = "not-a-rank"
        elif source == "torch.distributed":
            dist = types.ModuleType("torch.distributed")
            dist.is_available = lambda: True  # type: ignore[attr-defined]
            dist.is_initialized = lambda: True  # type: ignore[attr-defined]
            dist.get_rank = lambda: 1  # type: ignore[attr-defined]
            sys.modules["torch.distributed"] = dist
        elif source == "jax":
            if jax is None:
                jax = sys.modules["jax"] = types.ModuleType("jax")
            jax.process_index = lambda: 1  # type: ignore[attr-defined]
        else:
            os.environ[source] = "1"
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        if saved_dist is None:
            sys.modules.pop("torch.distributed", None)
        else:
            sys.modules["torch.distributed"] = saved_dist
        if jax is not None:
            if saved_index is None:
                if getattr(jax, "__file__", None) is None:  # our stand-in
                    sys.modules.pop("jax", None)
            else:
                jax.process_index = saved_index  # type: ignore[attr-defined]


def schemes(base: Path) -> dict[str, Any]:
    """Per scheme: the files in the logdir, the strays under the working directory, the config,
    and whether the embeddings' weights file loads back into the model."""
    out: dict[str, Any] = {}
    for scheme in SCHEMES:
        cwd = base / f"cwd_{scheme}"
        cwd.mkdir()
        os.chdir(cwd)
        try:
            with logdir_in(scheme, base) as logdir:
                model = _model()
                _fit(model, logdir.url)
                files = logdir.files()
        finally:
            os.chdir(base)
        weights = files.get("train/keras_embedding.ckpt-0.weights.h5")
        loads = False
        if weights is not None:
            copy = base / f"{scheme}.weights.h5"
            copy.write_bytes(weights)
            expected = [w.copy() for w in model.get_weights()]
            fresh = _model()
            fresh.load_weights(copy)
            loads = all(
                np.array_equal(a, b) for a, b in zip(fresh.get_weights(), expected, strict=True)
            )
            copy.unlink()
        config = files.get("projector_config.pbtxt", b"").decode()
        out[scheme] = {
            "files": sorted(n for n in files if "tfevents" not in n),
            "runs": _summaries_per_run(files),
            "stray": stray_files(cwd, scheme),
            "config": config,
            "weights_load": loads,
        }
    return out


def ranks(base: Path) -> dict[str, dict[str, int]]:
    out = {}
    for source in RANK_SOURCES:
        root = base / "ranks" / source
        with _rank_one(source):
            _fit(_model(), str(root))
        out[source] = _summaries_per_run(_local_files(root))
    return out


def refit(base: Path) -> list[dict[str, int]]:
    """One callback, two fits (Keras closes its writers after each and opens new ones)."""
    root = base / "refit"
    model = _model()
    callback = TensorBoard(str(root), embeddings_freq=1)
    counts = []
    for _ in range(2):
        model.fit(TOKENS, TARGETS, epochs=1, verbose=0, callbacks=[callback])
        counts.append(_summaries_per_run(_local_files(root)))
    return counts


def main() -> None:
    base = Path(sys.argv[1]).resolve()
    os.chdir(base)
    result = {
        "backend": keras.backend.backend(),
        "schemes": schemes(base),
        "ranks": ranks(base),
        "refit": refit(base),
        "tensorflow_imported": "tensorflow" in sys.modules,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
