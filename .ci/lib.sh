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
