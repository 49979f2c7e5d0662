#!/usr/bin/env bash
# Helpers shared by the stages in .ci/stages/.

# The test folders that mirror the pure cores and the package itself (tests/README.md), and the
# core suite: those with the summary builders, the writer core, the three front ends and the sinks.
# shellcheck disable=SC2034
PURE_FOLDERS=(tests/common tests/format tests/histogram tests/imaging tests/proto tests/package)
# shellcheck disable=SC2034
CORE_FOLDERS=("${PURE_FOLDERS[@]}" tests/summaries tests/core tests/frontends tests/sinks)

# cell NAME COMMAND...: run a test command with its output kept in a log; print one summary line
# "cell: NAME: <pytest's closing line>"; on failure also print the log's tail and fail.
cell() {
    local name=$1
    shift
    local log
    log=$(mktemp)
    # In the background and waited for: bash ignores set -e inside a function run as an if's
    # condition, so a stage function's failing step would go on and the cell would pass.
    "$@" >"$log" 2>&1 &
    if wait "$!"; then
        echo "cell: $name: $(tail -n 1 "$log")"
        rm -f "$log"
    else
        local rc=$?
        tail -n 80 "$log"
        echo "cell: $name: FAILED (exit $rc)"
        rm -f "$log"
        return "$rc"
    fi
}

# new_venv DIR [PYTHON]: a fresh venv at DIR for PYTHON (default python3). Made by uv when .ci/run
# found one (CI_UV: installs take seconds instead of a minute of pip's CPU each, which on two
# cores is minutes of the run), else by the venv module, with pip upgraded. The README's own
# commands (the main job, stage 80's install blocks) always use pip, as written.
new_venv() {
    local dir=$1 python=${2:-python3}
    rm -rf "$dir"
    if [ -n "${CI_UV:-}" ]; then
        "$CI_UV" venv --quiet --python "$python" "$dir"
    else
        "$python" -m venv "$dir"
        "$dir/bin/python" -m pip install --quiet --upgrade pip
    fi
}

# venv_install DIR ARG...: install into the venv DIR what pip's install would with ARG... (
# requirements, -e, --no-deps, -c FILE), quietly. Through uv, this machine's pip settings are
# passed on: its find-links (where the CPU build of torch lies) and its constraints file.
venv_install() {
    local dir=$1
    shift
    if [ -n "${CI_UV:-}" ]; then
        local -a settings=()
        local links constraint
        links=${PIP_FIND_LINKS:-$(pip_setting find-links)}
        constraint=${PIP_CONSTRAINT:-$(pip_setting constraint)}
        [ -z "$links" ] || settings+=(--find-links "$links")
        [ -z "$constraint" ] || [ ! -e "$constraint" ] || settings+=(--constraint "$constraint")
        # Compiled as pip does: the tests start many interpreters that write no bytecode.
        "$CI_UV" pip install --quiet --compile-bytecode --python "$dir/bin/python" \
            "${settings[@]}" "$@"
    else
        "$dir/bin/python" -m pip install --quiet "$@"
    fi
}

# pip_setting NAME: pip's configured global NAME, from any of its configuration files (empty when
# unset; `pip config get` reads one file only).
pip_setting() {
    python3 -m pip config list 2>/dev/null | sed -n "s/^global\.$1='\(.*\)'\$/\1/p"
}
