"""Child process of test_keras.py: the Keras programs of ``golden_tf/programs.py`` with
npsummary's callbacks on the backend ``KERAS_BACKEND`` names (Keras fixes its backend at
import, so each backend needs its own process).

    python _keras_child.py <out_dir>

writes ``<out_dir>/<case>/`` per case and prints one JSON line: the backend, the programs'
return values, and whether TensorFlow was imported.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_tf"))

import keras

if TYPE_CHECKING:
    from integrations.golden_tf import programs
else:
    import programs

from npsummary import hparams as hp
from npsummary.integrations.keras import KerasCallback, TensorBoard


def keras_callback_errors(logdir: str) -> list[str]:
    """What the HParams Keras callback raises on misuse (names of the exception types)."""
    errors = []
    misuses: tuple[Callable[[], object], ...] = (
        lambda: KerasCallback(None, {"a": 1}),
        lambda: KerasCallback(logdir, {"a": []}),
    )
    for bad in misuses:
        try:
            bad()
        except (TypeError, ValueError) as exc:
            errors.append(type(exc).__name__)
    callback = KerasCallback(logdir, {"a": 1})
    model = programs.dense_model(keras)
    model.fit(programs.X, programs.Y, epochs=1, verbose=0, callbacks=[callback])
    try:
        model.fit(programs.X, programs.Y, epochs=1, verbose=0, callbacks=[callback])
    except RuntimeError as exc:
        errors.append(f"RuntimeError: {exc}")
    return errors


def main() -> None:
    out = sys.argv[1]
    programs.keras_epoch(keras, TensorBoard, KerasCallback, os.path.join(out, "keras_epoch"))
    programs.keras_batch(keras, TensorBoard, os.path.join(out, "keras_batch"))
    programs.keras_update_batch(keras, TensorBoard, os.path.join(out, "keras_update_batch"))
    files = programs.keras_embeddings(keras, TensorBoard, os.path.join(out, "keras_embeddings"))
    result = {
        "hp_keras_callback": hp.KerasCallback is KerasCallback,
        "keras_callback_errors": keras_callback_errors(os.path.join(out, "errors")),
        "backend": keras.backend.backend(),
        "keras_embeddings": files,
        "tensorflow_imported": "tensorflow" in sys.modules,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
