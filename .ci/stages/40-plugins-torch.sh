#!/usr/bin/env bash
# The plugin methods checked against torch itself: add_mesh, add_tensor, add_image_with_boxes
# and add_hparams' discrete domains compare byte for byte (or pixel for pixel) with
# torch.utils.tensorboard. The main venv has no torch, so these tests skip there.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
python3 -m venv .venv-plugins-torch
# shellcheck disable=SC1091
. .venv-plugins-torch/bin/activate
python -m pip install --quiet --upgrade pip
pip install --quiet -e '.[test]' 'torch==2.13.0'
cell "plugins vs torch 2.13" python -m pytest -q -p no:cacheprovider \
    tests/test_mesh.py tests/test_tensor_summary.py tests/test_boxes.py tests/test_hparams.py \
    tests/test_plugins_conformance.py
