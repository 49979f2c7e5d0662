#!/usr/bin/env bash
# The GIF decoder against videos written by tensorboardX's add_video, which needs moviepy (absent
# from the main venv, where that test skips): the pure cores' tests (the GIF decoder's among them) with
# moviepy 2, imageio and tensorboardX installed.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
new_venv .venv-gifread
venv_install .venv-gifread numpy protobuf 'crc32c>=2.4' pytest hypothesis Pillow tensorboardX moviepy
venv_install .venv-gifread --no-deps -e .
# shellcheck disable=SC1091
. .venv-gifread/bin/activate
cell "pure cores (gifread with tensorboardX + moviepy)" python -m pytest -q -p no:cacheprovider -rs \
    "${PURE_FOLDERS[@]}"
