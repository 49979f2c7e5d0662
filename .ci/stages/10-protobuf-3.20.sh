#!/usr/bin/env bash
# The oldest supported protobuf: 3.20.3, pure-Python backend. tensorboard itself needs a newer
# protobuf and is not installed here, so the tests that read files back through TensorBoard skip;
# everything else of the unit tests, the three front ends (every summary kind, through
# MemorySink and our own reader) and the local sinks runs. Tests are chosen by folder and marker
# (tests/README.md), never by file name.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
new_venv .venv-pb320
venv_install .venv-pb320 'protobuf==3.20.3' numpy 'crc32c>=2.4' pytest hypothesis Pillow matplotlib
venv_install .venv-pb320 --no-deps -e .
# shellcheck disable=SC1091
. .venv-pb320/bin/activate
python - <<'PY'
from google.protobuf.internal import api_implementation
import google.protobuf
print("protobuf", google.protobuf.__version__, "backend", api_implementation.Type())
assert google.protobuf.__version__ == "3.20.3"
assert api_implementation.Type() == "python"
PY
cell "python3.11 protobuf 3.20.3" python -m pytest -q -p no:cacheprovider \
    -m "not live and not remote and not distributed" "${CORE_FOLDERS[@]}"
