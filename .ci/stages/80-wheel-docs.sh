#!/usr/bin/env bash
# The release a user installs, and the documentation site (issue 24):
# 1. python -m build makes the sdist and the wheel; twine check passes on both;
# 2. the wheel (not the checkout) goes into a fresh venv that never sees src/: `npsummary demo`
#    runs, `npsummary --version` and npsummary.__version__ agree with the wheel's version, and
#    every public module (docs/_ext/public_api.py) imports;
# 3. the site builds from the docs extra with warnings as errors and nitpicky references.
# One summary line starting with "cell:".
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

release() {
    python3 -m venv .venv-release
    .venv-release/bin/python -m pip install --quiet --upgrade pip build twine
    .venv-release/bin/python -m build --outdir "$OUT/dist" . >"$OUT/build.log" 2>&1 ||
        { cat "$OUT/build.log"; return 1; }
    .venv-release/bin/python -m twine check --strict "$OUT"/dist/*
}

wheel_venv() {
    local wheel venv=$OUT/venv-wheel
    wheel=$(ls "$OUT"/dist/*.whl)
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "$wheel"
    # Run from an empty directory, so that nothing of the checkout can be imported.
    mkdir "$OUT/run"
    (
        cd "$OUT/run"
        PATH="$venv/bin:/usr/bin:/bin" "$venv/bin/npsummary" demo runs/demo >"$OUT/demo.txt"
        # No TensorBoard in this venv: the demo's last lines must say how to get it (issue 33).
        grep -q "pip install tensorboard" "$OUT/demo.txt" ||
            { cat "$OUT/demo.txt"; echo "demo: no install line for the viewer"; exit 1; }
        "$venv/bin/python" - "$wheel" "$ROOT/docs/_ext/public_api.py" <<'PY'
import importlib, pathlib, runpy, subprocess, sys
wheel, public_api = sys.argv[1], sys.argv[2]
import npsummary
assert "site-packages" in npsummary.__file__, npsummary.__file__
version = pathlib.Path(wheel).name.split("-")[1]
assert npsummary.__version__ == version, (npsummary.__version__, version)
cli = subprocess.run(
    [pathlib.Path(sys.executable).parent / "npsummary", "--version"],
    capture_output=True, text=True, check=True,
)
assert cli.stdout.strip() == f"npsummary {version}", cli.stdout
modules = runpy.run_path(public_api)["PUBLIC_MODULES"]
for name in modules:
    module = importlib.import_module(name)
    for attribute in getattr(module, "__all__", ()):
        getattr(module, attribute)
from npsummary import reader
assert {("train", "loss"), ("eval", "eval/loss")} <= set(reader.scalars("runs/demo"))
print(f"wheel {version}: demo ran, {len(modules)} public modules imported")
PY
    )
}

docs() {
    python3 -m venv .venv-docs
    .venv-docs/bin/python -m pip install --quiet --upgrade pip
    .venv-docs/bin/pip install --quiet -e '.[docs]'
    rm -rf docs/_build
    local t=$SECONDS
    .venv-docs/bin/sphinx-build -W --keep-going -n -q -c docs . docs/_build/html
    echo "$((SECONDS - t))" >"$OUT/docs_seconds"
    # The crawl: no broken link, no empty API entry, no hidden or private signature.
    .venv-docs/bin/python scripts/check_site.py docs/_build/html | tee "$OUT/crawl.txt"
}

ROOT=$PWD
stage() {
    release
    wheel_venv
    docs
    echo "sdist + wheel built and twine-checked; the wheel installed, npsummary demo run and" \
        "every public module imported; site built with -W -n in $(cat "$OUT/docs_seconds") s," \
        "crawled: $(tail -1 "$OUT/crawl.txt");" \
        "stage $((SECONDS - START)) s"
}
cell "80-wheel-docs" stage
