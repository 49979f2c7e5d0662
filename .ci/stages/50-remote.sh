#!/usr/bin/env bash
# Remote logdirs and distributed training (issue 12): a real S3 endpoint (moto_server on
# 127.0.0.1, started and stopped by PID by the tests) written through s3fs, and through boto3
# where s3fs is missing (issue 21), and read back by stock TensorBoard and by npsummary's reader
# and CLI; faults through a loopback proxy; torchrun DDP on CPU with gloo (torch==2.13.0, the CPU
# wheel: never an unpinned torch, which pulls a multi-GB CUDA build).
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
new_venv .venv-remote
constraints=$(mktemp)
echo "torch==2.13.0" >"$constraints"
venv_install .venv-remote 'torch==2.13.0'
# jax for the device-path histograms of sharded jax.Arrays (issue 31), on 4 forced host devices
venv_install .venv-remote -c "$constraints" jax jaxlib -e '.[test,remote]' s3fs 'moto[server]' \
    boto3
rm -f "$constraints"
# shellcheck disable=SC1091
. .venv-remote/bin/activate
python - <<'PY'
import importlib
for name in ("torch", "jax", "s3fs", "moto", "boto3", "fsspec"):
    module = importlib.import_module(name)
    print(name, getattr(module, "__version__", "?"))
import torch
assert torch.__version__.startswith("2.13.0") and torch.version.cuda is None, torch.__version__
PY
echo "stage 50-remote: installed in $((SECONDS - START)) s"
# Tests marked `remote` (URL logdirs: writers, reader, CLI, the docs' S3 examples) and
# `distributed` (ranks, torchrun, multiprocessing, the docs' torchrun example; DTensor and
# process_group histograms under torchrun, device-path histograms of torch and JAX arrays),
# wherever they live.
cell "remote (memory://, S3 on moto, faults)" python -m pytest -q -p no:cacheprovider -m remote tests
cell "distributed (ranks, torchrun DDP gloo, FSDP2/DTensor histograms, multiprocessing, ranks on S3)" python -m pytest -q \
    -p no:cacheprovider -m distributed tests
deactivate
# s3:// with boto3 alone (issue 21): a tensorboardX user's environment, boto3 without s3fs, and
# moto 4, whose in-process mock_s3 tensorboardX's own tests use (moto 5 renamed it mock_aws; the
# cell above runs the same tests on moto 5, with s3fs hidden). The remote tests that need s3fs
# skip here; the rest run again without it.
new_venv .venv-boto3
venv_install .venv-boto3 -e '.[test]' boto3 'moto[server]<5'
# shellcheck disable=SC1091
. .venv-boto3/bin/activate
python - <<'PY'
import importlib.util
import boto3, moto
assert importlib.util.find_spec("s3fs") is None, "this cell is about s3:// without s3fs"
print("boto3", boto3.__version__, "moto", moto.__version__)
PY
cell "remote, s3:// through boto3 without s3fs (moto 4, mock_s3 and moto_server)" python -m pytest \
    -q -p no:cacheprovider -m remote tests
echo "stage: 50-remote passed in $((SECONDS - START)) s"
