#!/usr/bin/env bash
# Remote logdirs and distributed training (issue 12): a real S3 endpoint (moto_server on
# 127.0.0.1, started and stopped by PID by the tests) written through s3fs and read back by stock
# TensorBoard and by npsummary's reader and CLI; faults through a loopback proxy; torchrun DDP on
# CPU with gloo (torch==2.13.0, the CPU wheel: never an unpinned torch, which pulls a multi-GB
# CUDA build).
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
python3 -m venv .venv-remote
# shellcheck disable=SC1091
. .venv-remote/bin/activate
python -m pip install --quiet --upgrade pip
pip install --quiet 'torch==2.13.0'
pip install --quiet -e '.[test,remote]' s3fs 'moto[server]' boto3
python - <<'PY'
import importlib
for name in ("torch", "s3fs", "moto", "boto3", "fsspec"):
    module = importlib.import_module(name)
    print(name, getattr(module, "__version__", "?"))
PY
echo "stage 50-remote: installed in $((SECONDS - START)) s"
# Tests marked `remote` (URL logdirs: writers, reader, CLI, the docs' S3 examples) and
# `distributed` (ranks, torchrun, multiprocessing, the docs' torchrun example), wherever they live.
cell "remote (memory://, S3 on moto, faults)" python -m pytest -q -p no:cacheprovider -m remote tests
cell "distributed (ranks, torchrun DDP gloo, multiprocessing, ranks on S3)" python -m pytest -q \
    -p no:cacheprovider -m distributed tests
echo "stage: 50-remote passed in $((SECONDS - START)) s"
