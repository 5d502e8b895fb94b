#!/usr/bin/env bash
# tests/integration/test_kill_cleanup.sh - kevo killed with SIGKILL in the
# middle of an evaluation leaves nothing behind: no runner or compiler
# process, no file or directory under its TMPDIR.
#
# Scenarios: a kernel spinning forever in the correctness gate (one
# thread), an OpenMP kernel spinning in a parallel region (threads), and a
# kill during the reference's build. kevo must be root (it is in CI): the
# guarantee rests on PDEATHSIG, PID namespaces and kevo's private tmpfs.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, uids)"; exit 77; }

work=$(mktemp -d)
chmod 755 "$work" # runners (other uids) must reach their build folders beneath it
trap 'pkill -9 -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
export TMPDIR=$work/tmp
export KEVO_CACHE=off # the reference is built every time: the third scenario kills its build
mkdir -p "$TMPDIR"
fails=0
check() { # cond description
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}

cat >"$work/spin.c" <<'C'
#include <stdint.h>
void relu(const float *x, float *y, int64_t N)
{
    volatile int64_t k = 0;
    for (;;)
        k++;
}
C
cat >"$work/spin_omp.c" <<'C'
// kevo: cflags -fopenmp
#include <stdint.h>
void relu(const float *x, float *y, int64_t N)
{
    volatile int64_t k = 0;
#pragma omp parallel
    for (;;)
        k++;
}
C

# wait_for PATTERN SECONDS: a process whose command line matches appears
wait_for() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        pgrep -f "$1" >/dev/null && return 0
        sleep 0.1
    done
    return 1
}

scenario() { # name candidate pattern-to-wait-for
    local name=$1 cand=$2 pat=$3
    "$KEVO" eval --json "$KEVO_SRC/suites/c/level1/001_relu" "$cand" >/dev/null 2>&1 &
    local pid=$!
    if ! wait_for "$pat" 60; then
        echo "FAIL $name: never saw '$pat' running"
        fails=$((fails + 1))
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        return
    fi
    sleep 0.3
    kill -9 $pid
    wait $pid 2>/dev/null
    local i left=""
    for ((i = 0; i < 50; i++)); do # the kernel delivers PDEATHSIG at once; allow 5 s
        left=$(pgrep -af "$work" | grep -v -- "pgrep" || true)
        [ -z "$left" ] && break
        sleep 0.1
    done
    check '[ -z "$left" ]' "$name: no process left behind ${left:+($left)}"
    local files
    files=$(find "$TMPDIR" -mindepth 1 -not -path "$TMPDIR/kevo-scratch" 2>/dev/null | head -5)
    check '[ -z "$files" ]' "$name: nothing left under TMPDIR ${files:+($files)}"
}

scenario "spinning kernel, correctness gate" "$work/spin.c" "$work/tmp/kevo-scratch/kevo-eval-.*/candidate-1/runner"
scenario "OpenMP kernel spinning on every core" "$work/spin_omp.c" "$work/tmp/kevo-scratch/kevo-eval-.*/candidate-1/runner"
scenario "during the reference's build" "$work/spin.c" "cc1 .*reference|$work/tmp/kevo-scratch/kevo-eval-.*/reference"
echo "$((3 * 2 - fails)) passed, $fails failed"
[ $fails = 0 ]
