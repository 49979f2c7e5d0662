#!/usr/bin/env bash
# The supported Python x NumPy range (README "Supported versions", pyproject.toml). Two cells run
# the README's test command (python -m pytest, the whole suite) with every test extra of
# pyproject.toml: Python 3.10 with the newest NumPy it gets, and Python 3.11 with the lowest NumPy
# that pyproject.toml declares (held while the extras install). Python 3.12 and 3.13, with their
# newest NumPy, run the TensorBoard-free core suite. The main run covers Python 3.11 with the
# newest NumPy; 10-protobuf-3.20.sh the oldest protobuf. Each cell has its own venv
# (.venv-<cell>) and prints one summary line; a test whose dependency a cell could not install
# (or import) is skipped, and the reasons are printed under the line.
# Arguments name cells to run, one after another: .ci/run runs each cell as a job of its own.
# Without arguments every cell runs, in two lanes side by side, one per core: a whole-suite
# cell, then a core cell. Measured with the venvs in place at load average 2-4: the Python 3.10
# whole suite 398 s, a core cell 45-62 s, the stage's CPU 589 s. Four cells at once do the same
# work on the same two cores, no sooner, and double each whole suite's time and the memory.
set -euo pipefail
# shellcheck disable=SC1091
. .ci/lib.sh
PYENV=/root/.pyenv/versions
START=$SECONDS

# The floor and the test extras come from pyproject.toml, so that the declaration and the test
# cannot drift apart.
PYPROJECT=$("$PYENV/3.11.7/bin/python3" - <<'PY'
import re, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
(spec,) = [d for d in project["dependencies"] if re.match(r"numpy\b", d)]
print(re.fullmatch(r"numpy\s*>=\s*([\w.]+)", spec).group(1))
print(" ".join(project["optional-dependencies"]["test"]))
PY
)
NUMPY_FLOOR=$(echo "$PYPROJECT" | sed -n 1p)
read -r -a TEST_EXTRAS <<<"$(echo "$PYPROJECT" | sed -n 2p)"

# The core suite, by folder (CORE_FOLDERS in lib.sh): the pure cores, the builders, the writer
# core, the three front ends and the local sinks; remote and multi-process tests run in
# 50-remote.sh. Its test-only dependencies leave TensorBoard out (the tests that read back through
# it skip, counted on one line).
CORE_TESTS=(-m "not live and not remote and not distributed" "${CORE_FOLDERS[@]}")
CORE_DEPS=(pytest hypothesis tensorboardX Pillow matplotlib ml_dtypes)

# pip_q COMMAND...: run an install silently; on failure print its output and fail.
pip_q() {
    local out
    if ! out=$("$@" 2>&1); then
        echo "$out" | grep -v "is ignored: it is neither" >&2
        return 1
    fi
}

# matrix_cell NAME PYTHON NUMPY_SPEC SUITE [HOLD...]: venv .venv-NAME, install, run the suite:
# "full" is the README's test command with the test extras, "core" the core suite with CORE_DEPS;
# each HOLD is a requirement added to every install of the test dependencies.
matrix_cell() {
    local name=$1 python=$2 numpy_spec=$3 suite=$4 venv=.venv-$1
    shift 4
    local -a holds=("$@") deps tests
    if [ "$suite" = full ]; then
        deps=("${TEST_EXTRAS[@]}")
        tests=()
    else
        deps=("${CORE_DEPS[@]}")
        tests=("${CORE_TESTS[@]}")
    fi
    new_venv "$venv" "$python"
    pip_q venv_install "$venv" "$numpy_spec" 'protobuf>=3.20.3' 'crc32c>=2.4'
    local numpy_now dep
    numpy_now=$("$venv/bin/python" -c "import numpy; print(numpy.__version__)")
    # NumPy held where it is. If the test dependencies do not install together, they are
    # installed one by one, so that one without wheels for this Python/NumPy only costs its own
    # tests (skipped, with the reason printed), never the cell.
    if ! pip_q venv_install "$venv" "${deps[@]}" "${holds[@]}" "numpy==$numpy_now" 2>/dev/null; then
        for dep in "${deps[@]}"; do
            pip_q venv_install "$venv" "$dep" "${holds[@]}" "numpy==$numpy_now" 2>/dev/null ||
                echo "  $name: could not install $dep; the tests that need it are skipped"
        done
    fi
    pip_q venv_install "$venv" --no-deps -e .
    local label log
    label="$("$venv/bin/python" -c "import sys; print('python%d.%d' % sys.version_info[:2])")"
    label="$label numpy $numpy_now ($suite)"
    log=$(mktemp)
    cell "$label" bash -c 'set -o pipefail; log=$1; shift; "$@" | tee "$log"' _ "$log" \
        "$venv/bin/python" -m pytest -q -p no:cacheprovider -rs "${tests[@]}"
    # Why anything was skipped: TensorBoard is left out of the core cells on purpose (one line);
    # any other reason is printed as it is, once.
    local reasons tb
    reasons=$(grep '^SKIPPED' "$log" | sed -E 's/^SKIPPED \[([0-9]+)\] [^:]+:[0-9]+: /\1 /' || true)
    # (grep finds nothing in the whole-suite cells: || true, or pipefail would end the cell.)
    tb=$({ echo "$reasons" | grep "No module named 'tensorboard'" || true; } |
        awk '{n += $1} END {print n + 0}')
    [ "$tb" = 0 ] || echo "    skipped: $tb tests that read back through TensorBoard (not installed here)"
    echo "$reasons" | grep -v "No module named 'tensorboard'" | grep . |
        awk '{n = $1; $1 = ""; c[$0] += n} END {for (r in c) print "    skipped: " c[r] r}' |
        sort || true
    rm -f "$log"
}

NAMES=(py310 py311-numpy-floor py312 py313)
PYTHONS=(3.10.13 3.11.7 3.12.1 3.13.0)
SPECS=(numpy "numpy==$NUMPY_FLOOR" numpy numpy)
SUITES=(full full core core)
# pyarrow 25 needs NumPy >= 2 on import without declaring it, so pip would install it beside the
# floor; 24 is the newest that imports with NumPy 1.23.2.
HOLDS=("" "pyarrow<25" "" "")

# run_cell I: matrix cell I, its output in $OUT/I; a failure is counted in $OUT/failed.
run_cell() {
    # In the background and waited for, so that set -e holds inside the cell (it does not in a
    # command followed by ||).
    # shellcheck disable=SC2086  # HOLDS: one word per requirement, none for most cells
    matrix_cell "${NAMES[$1]}" "$PYENV/${PYTHONS[$1]}/bin/python3" "${SPECS[$1]}" \
        "${SUITES[$1]}" ${HOLDS[$1]} >"$OUT/$1" 2>&1 &
    wait "$!" || echo "$1" >>"$OUT/failed"
}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SELECTED=()
if [ $# -gt 0 ]; then
    # The cells named (.ci/run gives each cell a job of its own in its two lanes), in turn.
    for name in "$@"; do
        for i in "${!NAMES[@]}"; do
            [ "${NAMES[$i]}" != "$name" ] || SELECTED+=("$i")
        done
    done
    [ "${#SELECTED[@]}" = $# ] || { echo "20-matrix: unknown cell in: $* (cells: ${NAMES[*]})"; exit 2; }
    for i in "${SELECTED[@]}"; do
        run_cell "$i"
    done
else
    # Every cell, in two lanes side by side, one per core (the whole suite keeps a core busy;
    # four cells at once only made each one slower): in each lane a whole-suite cell, then a
    # core cell.
    SELECTED=("${!NAMES[@]}")
    lane() {
        local i
        for i in $1; do
            run_cell "$i"
        done
    }
    PIDS=()
    for l in "0 2" "1 3"; do
        lane "$l" &
        PIDS+=($!)
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" || true
    done
fi
# Each cell's output, in order, once all have finished.
for i in "${SELECTED[@]}"; do
    cat "$OUT/$i"
done
FAILED=$( [ -e "$OUT/failed" ] && wc -l <"$OUT/failed" || echo 0)
if [ "$FAILED" != 0 ]; then
    echo "stage: 20-matrix: $FAILED of ${#SELECTED[@]} cells FAILED in $((SECONDS - START)) s"
    exit 1
fi
echo "stage: 20-matrix: ${#SELECTED[@]} cells passed in $((SECONDS - START)) s"
