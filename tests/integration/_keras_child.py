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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden_tf"))

import keras
import programs

from npsummary.integrations.keras import KerasCallback, TensorBoard


def main() -> None:
    out = sys.argv[1]
    programs.keras_epoch(keras, TensorBoard, KerasCallback, os.path.join(out, "keras_epoch"))
    programs.keras_batch(keras, TensorBoard, os.path.join(out, "keras_batch"))
    files = programs.keras_embeddings(keras, TensorBoard, os.path.join(out, "keras_embeddings"))
    result = {
        "backend": keras.backend.backend(),
        "keras_embeddings": files,
        "tensorflow_imported": "tensorflow" in sys.modules,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
