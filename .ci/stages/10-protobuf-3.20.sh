#!/usr/bin/env bash
# The oldest supported protobuf: 3.20.3, pure-Python backend. tensorboard itself needs a newer
# protobuf and is not installed here, so the tests that read files back through TensorBoard skip;
# everything else of the unit tests, the three front ends (every summary kind, through
# MemorySink and our own reader) and the local sinks runs. Tests are chosen by folder and marker
# (tests/README.md), never by file name.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
python3 -m venv .venv-pb320
# shellcheck disable=SC1091
. .venv-pb320/bin/activate
python -m pip install --quiet --upgrade pip
pip install --quiet 'protobuf==3.20.3' numpy 'crc32c>=2.4' pytest hypothesis Pillow matplotlib
pip install --quiet --no-deps -e .
python - <<'PY'
from google.protobuf.internal import api_implementation
import google.protobuf
print("protobuf", google.protobuf.__version__, "backend", api_implementation.Type())
assert google.protobuf.__version__ == "3.20.3"
assert api_implementation.Type() == "python"
PY
cell "python3.11 protobuf 3.20.3" python -m pytest -q -p no:cacheprovider \
    -m "not live and not remote and not distributed" "${CORE_FOLDERS[@]}"
