#!/usr/bin/env bash
# The supported Python x NumPy range (README "Supported versions", pyproject.toml): the
# TensorBoard-free core suite on Python 3.10, 3.12 and 3.13 with the newest NumPy each one gets,
# and on Python 3.11 with the lowest NumPy that pyproject.toml declares. The main run covers
# Python 3.11 with the newest NumPy and every test dependency; 10-protobuf-3.20.sh the oldest
# protobuf. Each cell has its own venv (.venv-<cell>) and prints one summary line; a test whose
# dependency a cell could not install is skipped, and the reasons are printed under the line.
# The cells run side by side: 217 s from fresh venvs with a warm pip cache on this 2-core
# machine under other load (load average ~5), 134 s when the venvs exist.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
PYENV=/root/.pyenv/versions
START=$SECONDS

# The floor comes from pyproject.toml, so that the declaration and the test cannot drift apart.
NUMPY_FLOOR=$("$PYENV/3.11.7/bin/python3" - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
(spec,) = [d for d in deps if re.match(r"numpy\b", d)]
print(re.fullmatch(r"numpy\s*>=\s*([\w.]+)", spec).group(1))
PY
)

# The core suite, by folder (tests/README.md): the unit tests, the three front ends and the local
# sinks; remote and multi-process tests run in 50-remote.sh.
CORE_TESTS=(tests/unit tests/frontends tests/sinks)
CORE_MARKS="not live and not remote and not distributed"
# Test-only dependencies of the core suite (no tensorboard: see the header).
TEST_DEPS=(pytest hypothesis tensorboardX Pillow matplotlib ml_dtypes)

# pip_q COMMAND...: run pip silently; on failure print its output and fail.
pip_q() {
    local out
    if ! out=$("$@" 2>&1); then
        echo "$out" | grep -v "is ignored: it is neither" >&2
        return 1
    fi
}

# matrix_cell NAME PYTHON NUMPY_SPEC: venv .venv-NAME, install, run the core suite.
matrix_cell() {
    local name=$1 python=$2 numpy_spec=$3 venv=.venv-$1
    "$python" -m venv "$venv"
    local pip="$venv/bin/pip"
    pip_q "$pip" install "$numpy_spec" 'protobuf>=3.20.3' 'crc32c>=2.4'
    local numpy_now dep
    numpy_now=$("$venv/bin/python" -c "import numpy; print(numpy.__version__)")
    # NumPy held where it is. If the test dependencies do not install together, they are
    # installed one by one, so that one without wheels for this Python/NumPy only costs its own
    # tests (skipped, with the reason printed), never the cell.
    if ! pip_q "$pip" install "${TEST_DEPS[@]}" "numpy==$numpy_now" 2>/dev/null; then
        for dep in "${TEST_DEPS[@]}"; do
            pip_q "$pip" install "$dep" "numpy==$numpy_now" 2>/dev/null ||
                echo "  $name: could not install $dep; the tests that need it are skipped"
        done
    fi
    pip_q "$pip" install --no-deps -e .
    local label log
    label="$("$venv/bin/python" -c "import sys; print('python%d.%d' % sys.version_info[:2])")"
    label="$label numpy $numpy_now"
    log=$(mktemp)
    cell "$label" bash -c "set -o pipefail; \"$venv/bin/python\" -m pytest -q -m '$CORE_MARKS' \
        -p no:cacheprovider -rs ${CORE_TESTS[*]} | tee '$log'"
    # Why anything was skipped: TensorBoard is left out of these cells on purpose (one line);
    # any other reason is printed as it is, once.
    local reasons tb
    reasons=$(grep '^SKIPPED' "$log" | sed -E 's/^SKIPPED \[([0-9]+)\] [^:]+:[0-9]+: /\1 /' || true)
    tb=$(echo "$reasons" | grep "No module named 'tensorboard'" | awk '{n += $1} END {print n + 0}')
    [ "$tb" = 0 ] || echo "    skipped: $tb tests that read back through TensorBoard (not installed here)"
    echo "$reasons" | grep -v "No module named 'tensorboard'" | grep . |
        awk '{n = $1; $1 = ""; c[$0] += n} END {for (r in c) print "    skipped: " c[r] r}' |
        sort || true
    rm -f "$log"
}

# The cells run side by side (installs wait on the network, tests use both cores); each one's
# output is printed in order as it finishes.
NAMES=(py310 py311-numpy-floor py312 py313)
PYTHONS=(3.10.13 3.11.7 3.12.1 3.13.0)
SPECS=(numpy "numpy==$NUMPY_FLOOR" numpy numpy)
OUT=$(mktemp -d)
PIDS=()
for i in "${!NAMES[@]}"; do
    matrix_cell "${NAMES[$i]}" "$PYENV/${PYTHONS[$i]}/bin/python3" "${SPECS[$i]}" \
        >"$OUT/$i" 2>&1 &
    PIDS+=($!)
done
FAILED=0
for i in "${!NAMES[@]}"; do
    wait "${PIDS[$i]}" || FAILED=$((FAILED + 1))
    cat "$OUT/$i"
done
rm -rf "$OUT"
if [ "$FAILED" != 0 ]; then
    echo "stage: 20-matrix: $FAILED of ${#NAMES[@]} cells FAILED in $((SECONDS - START)) s"
    exit 1
fi
echo "stage: 20-matrix: ${#NAMES[@]} cells passed in $((SECONDS - START)) s"
