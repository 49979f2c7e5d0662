#!/usr/bin/env bash
# The oldest supported protobuf: 3.20.3, pure-Python backend. tensorboard itself needs a newer
# protobuf, so this cell covers the tests that do not read files back through TensorBoard:
# protos, framing, writers (via MemorySink and our own reader), the histogram, PNG and image
# cores, the tf.summary surface and v1.
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
cell "python3.11 protobuf 3.20.3" python -m pytest -q -m "not live" -p no:cacheprovider \
    tests/test_proto.py tests/test_record.py tests/test_wire.py tests/test_sink.py \
    tests/test_writer.py tests/test_tf2.py tests/test_tf2_surface.py tests/test_v1.py \
    tests/test_histogram.py tests/test_png.py tests/test_image.py tests/test_reliability_reader.py
