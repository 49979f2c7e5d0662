#!/usr/bin/env bash
# The install lines a user is shown, the release a user installs, and the documentation site
# (issues 24 and 33):
# 1. every block marked <!-- docs-test: install --> in README.md and docs/ (tests/support/
#    docblocks.py takes them out) runs with bash, as written, from the root of a fresh copy of
#    the clone (the files a clone of this checkout gives, with its uncommitted changes), in a
#    fresh venv of its own: the README's main job, the landing page's and the install page's
#    lines; none may end with the demo saying that the viewer is not installed;
# 2. the install page's wheel block is the release build: twine check passes on the sdist and
#    wheel it made; with the venv it installed the wheel into (which never sees src/), from an
#    empty directory and without TensorBoard, `npsummary demo` runs and says how to get the
#    viewer, `npsummary --version` and npsummary.__version__ agree with the wheel's version, and
#    every public module (docs/_ext/public_api.py) imports, but for the integrations whose
#    framework is not there (stage 70 imports them with it);
# 3. the site builds from the docs extra with warnings as errors and nitpicky references, and the
#    crawl of it (scripts/check_site.py) finds no problem.
# One summary line starting with "cell:".
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
START=$SECONDS
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# A fresh copy of what a clone of this checkout holds (tracked and new files, as they are now;
# nothing git ignores, such as the .venv* folders and docs/_build).
clone_copy() {
    mkdir -p "$1"
    git ls-files -z --cached --others --exclude-standard |
        tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$1"
}

# One install block in its own copy ($2/clone) and venv ($2/venv), its output in $2/output.txt.
run_block() {
    local block=$1 dir=$2 name t=$SECONDS
    name=$(basename "$block" .sh)
    clone_copy "$dir/clone"
    python3 -m venv "$dir/venv"
    (
        cd "$dir/clone"
        export VIRTUAL_ENV=$dir/venv PATH=$dir/venv/bin:$PATH
        # pip's bytecode pass over every installed file is most of the CPU the blocks take;
        # Python compiles what it imports anyway.
        export PIP_NO_COMPILE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
        bash -e -o pipefail "$block"
    ) >"$dir/output.txt" 2>&1 ||
        { tail -n 40 "$dir/output.txt"; echo "$name: failed as written"; return 1; }
    # The demo's words when `tensorboard` is missing: the block installed no viewer.
    if grep -q "which is not installed here" "$dir/output.txt"; then
        tail -n 20 "$dir/output.txt"
        echo "$name: the demo says the viewer is missing after this block"
        return 1
    fi
    echo "$name $((SECONDS - t)) s" >"$dir/seconds"
}

# Every install block, side by side: each waits mostly on PyPI and on pip unpacking, not on a core.
install_blocks() {
    local block pids=() failed=0
    python3 tests/support/docblocks.py install --out "$OUT/blocks" >"$OUT/blocks.txt"
    while read -r block; do
        run_block "$block" "$OUT/$(basename "$block" .sh)" &
        pids+=("$!")
    done <"$OUT/blocks.txt"
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=1
    done
    [ "$failed" = 0 ]
    cat "$OUT"/*/seconds | paste -sd, - | sed 's/,/, /g' >"$OUT/blocks_summary"
}

# The checks of the wheel the install page's wheel block built and installed.
wheel_checks() {
    local wheel venv
    wheel=$(ls "$OUT"/*/clone/dist/*.whl)
    [ "$(echo "$wheel" | wc -l)" = 1 ] || { echo "not one wheel built: $wheel"; return 1; }
    venv=$(dirname "$(dirname "$(dirname "$wheel")")")/venv
    .venv-docs/bin/python -m twine check --strict "$(dirname "$wheel")"/*
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

def load(name):
    module = importlib.import_module(name)
    for attribute in getattr(module, "__all__", ()):
        getattr(module, attribute)


imported, need_framework = [], []
for name in modules:
    try:
        load(name)
    except ImportError as exc:
        # An integration needs its framework, which this venv has not (stage 70 has them): its
        # import fails on the framework's module, or a re-export says what to install.
        says_which = (exc.name and not exc.name.startswith("npsummary")) or "pip install" in str(exc)
        if not (name.startswith("npsummary.integrations.") and says_which):
            raise
        need_framework.append(name.rpartition(".")[2])
        continue
    imported.append(name)
from npsummary import reader
assert {("train", "loss"), ("eval", "eval/loss")} <= set(reader.scalars("runs/demo"))
print(f"wheel {version}: demo ran, {len(imported)} public modules imported,",
      f"{len(need_framework)} need their framework ({', '.join(need_framework)})")
PY
    )
}

docs_venv() {  # Sphinx, and twine for the wheel's check
    new_venv .venv-docs
    venv_install .venv-docs -e '.[docs,release]'
}

docs() {
    rm -rf docs/_build
    local t=$SECONDS
    .venv-docs/bin/sphinx-build -W --keep-going -n -q -c docs . docs/_build/html
    echo "$((SECONDS - t))" >"$OUT/docs_seconds"
    # The crawl: no broken link, no empty API entry, no hidden or private signature.
    .venv-docs/bin/python scripts/check_site.py docs/_build/html | tee "$OUT/crawl.txt"
}

ROOT=$PWD
stage() {
    # The install blocks in the background while the site builds: they wait on the network.
    install_blocks >"$OUT/install_blocks.log" 2>&1 &
    local blocks=$!
    docs_venv
    docs
    wait "$blocks" || { cat "$OUT/install_blocks.log"; return 1; }
    wheel_checks | tee "$OUT/wheel.txt"
    echo "install blocks ran as written in fresh venvs ($(cat "$OUT/blocks_summary"));" \
        "sdist + wheel twine-checked; $(tail -1 "$OUT/wheel.txt");" \
        "site built with -W -n in $(cat "$OUT/docs_seconds") s," \
        "crawled: $(tail -1 "$OUT/crawl.txt");" \
        "stage $((SECONDS - START)) s"
}
cell "80-wheel-docs" stage
