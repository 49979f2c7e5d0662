#!/usr/bin/env bash
# TensorBoard without TensorFlow for Keras 3, Flax, CLU and Optuna users (issue 23): the
# integrations in npsummary.integrations and the HParams API in npsummary.hparams, in a venv
# that has the frameworks but NOT TensorFlow (asserted below). Keras 3 runs on the JAX backend
# (CPU) and on the torch backend (torch pinned to the 2.13.0 CPU wheel through a constraints
# file); every logdir is compared with the golden files the originals wrote with TensorFlow
# 2.21 (tests/integrations/golden_tf/), read back with TensorBoard's loader, and the HParams
# dashboard of a live tensorboard (both loaders) is checked for the hp API and Optuna.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
new_venv .venv-integrations
constraints=$(mktemp)
echo "torch==2.13.0" >"$constraints"
venv_install .venv-integrations torch==2.13.0
venv_install .venv-integrations -c "$constraints" keras jax jaxlib flax clu optuna \
    optuna-integration tensorboard Pillow
venv_install .venv-integrations -c "$constraints" -e '.[test]'
rm -f "$constraints"
# shellcheck disable=SC1091
. .venv-integrations/bin/activate
python - <<'PY'
import importlib.util

import torch

print("torch", torch.__version__)
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert torch.version.cuda is None, f"a CUDA build of torch: {torch.version.cuda}"
assert importlib.util.find_spec("tensorflow") is None, "TensorFlow must not be installed here"
try:
    import tensorflow  # noqa: F401
except ImportError:
    print("import tensorflow: fails, as it must")
else:
    raise SystemExit("import tensorflow succeeded: this stage must run without TensorFlow")
PY
echo "stage 70: venv ready in $((SECONDS - START)) s"
export KERAS_BACKEND=jax JAX_PLATFORMS=cpu
# tests/docs: the programs of docs/integrations.md, run as written, and the signatures written by
# hand on docs/api/integrations.rst, compared with the real ones.
cell "integrations (Keras 3 on JAX+torch, Flax, CLU, Optuna, hp API; no TF)" \
    python -m pytest -q -p no:cacheprovider -rs -m tf_free tests/integrations \
    tests/docs/test_code_blocks.py tests/docs/test_api_reference.py
echo "stage: 70-integrations done in $((SECONDS - START)) s"
