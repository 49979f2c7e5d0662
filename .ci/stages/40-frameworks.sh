#!/usr/bin/env bash
# Real training frameworks on top of npsummary (issue 10): Lightning, transformers, skorch,
# stable-baselines3 and accelerate, each compared with the same run through torch's writer,
# plus the tensorboardX conformance check with tbparse, and the plugin methods checked against
# torch itself (add_mesh, add_tensor, add_image_with_boxes and add_hparams' discrete domains,
# byte for byte or pixel for pixel). The main venv has no torch, so these tests skip there. torch is pinned to the CPU wheel
# (2.13.0) and a constraints file keeps every framework from replacing it with a CUDA build.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
new_venv .venv-frameworks
constraints=$(mktemp)
echo "torch==2.13.0" >"$constraints"
venv_install .venv-frameworks torch==2.13.0
venv_install .venv-frameworks -c "$constraints" lightning transformers stable-baselines3 \
    accelerate skorch tbparse tensorboardX tensorboard matplotlib Pillow
venv_install .venv-frameworks -c "$constraints" -e '.[test]'
rm -f "$constraints"
# shellcheck disable=SC1091
. .venv-frameworks/bin/activate
python - <<'PY'
import torch
print("torch", torch.__version__)
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert torch.version.cuda is None, f"a CUDA build of torch: {torch.version.cuda}"
PY
echo "stage 40: venv ready in $((SECONDS - START)) s"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
cell "frameworks (torch 2.13 CPU)" python -m pytest -q -p no:cacheprovider -rs tests/integrations
# Every test module marked `torch` (compared with torch itself; they skip where torch is absent).
cell "compared with torch 2.13" python -m pytest -q -p no:cacheprovider -rs -m torch tests
echo "stage: 40-frameworks done in $((SECONDS - START)) s"
