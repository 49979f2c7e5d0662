#!/usr/bin/env bash
# npsummary.reader and the npsummary command on the oldest supported Python (3.10) and protobuf
# (3.20.3, forced to its pure-Python backend), without TensorBoard installed: framing, corruption and torn
# tails, fuzzing with its memory bound, golden files from TF2/TF1/tensorboardX/torch against what
# each program logged, PNG/WAV decoding, pandas/Arrow/Parquet tables, Dask (to_dask on a LocalCluster
# of two worker processes), and the CLI as a subprocess.
# The comparisons with TensorBoard's own reader and the demo check need tensorboard; they run in
# the main suite and skip here. The unit tests run here too, as in every cell.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
PY=/root/.pyenv/versions/3.10.13/bin/python3
[ -x "$PY" ] || PY=python3
new_venv .venv-reader "$PY"
venv_install .venv-reader 'protobuf==3.20.3' numpy 'crc32c>=2.4' pytest hypothesis Pillow pandas \
    pyarrow 'dask[dataframe]' distributed
venv_install .venv-reader --no-deps -e .
# shellcheck disable=SC1091
. .venv-reader/bin/activate
export PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python
python - <<'PY'
import sys
import google.protobuf
from google.protobuf.internal import api_implementation
print("python", sys.version.split()[0], "protobuf", google.protobuf.__version__,
      "backend", api_implementation.Type())
assert google.protobuf.__version__ == "3.20.3"
assert api_implementation.Type() == "python"
PY
cell "reader python3.10 protobuf 3.20.3 (python backend)" python -m pytest -q -p no:cacheprovider \
    -m "not remote and not dask" tests/reader tests/cli "${PURE_FOLDERS[@]}"
python -c "import dask.dataframe, distributed"  # the dask tests below must run, not skip
cell "reader to_dask on a LocalCluster of two worker processes" python -m pytest -q \
    -p no:cacheprovider -m dask tests/reader
