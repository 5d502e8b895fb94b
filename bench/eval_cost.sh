#!/usr/bin/env bash
# bench/eval_cost.sh - what the evaluation's checks cost: the wall time of
# `kevo eval` on the same honest candidates with two kevo builds, run side
# by side in one session (alternating, so machine noise hits both alike).
#
#   bash bench/eval_cost.sh                 # BEFORE=55e48c2 against this tree
#   BEFORE=<commit> RUNS=5 bash bench/eval_cost.sh [TASK_DIR:CANDIDATE ...]
#
# The BEFORE build is made in a git worktree under $WORK (default
# /tmp/kevo-eval-cost); the AFTER binary is KEVO (default build/kevo).
# Default cases: tests/candidates/001_relu/correct.c and
# tests/candidates/015_matmul_square/correct.c on their suite tasks.
# Prints, per case, the median wall time of each build, their ratio
# (after / before) and the verdicts; EVAL_ARGS adds `kevo eval` options.
# The AFTER build runs twice per round: cold (an empty cache folder, as on
# a first evaluation) and warm (the reference cache and harness objects of
# an earlier evaluation); "ratio" is cold after / before.
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BEFORE=${BEFORE:-55e48c2}
RUNS=${RUNS:-3}
WORK=${WORK:-/tmp/kevo-eval-cost}
KEVO=${KEVO:-$SRC/build/kevo}
EVAL_ARGS=${EVAL_ARGS:-}
PY=${PYTHON:-python3}

die() { echo "eval_cost: $*" >&2; exit 2; }
[ -x "$KEVO" ] || die "KEVO=$KEVO is not an executable (build first: bash scripts/setup.sh)"
if [ $# -gt 0 ]; then
    CASES=("$@")
else
    CASES=("$SRC/suites/c/level1/001_relu:$SRC/tests/candidates/001_relu/correct.c"
           "$SRC/suites/c/level1/015_matmul_square:$SRC/tests/candidates/015_matmul_square/correct.c")
fi

# shellcheck source=before_build.sh
. "$SRC/bench/before_build.sh"

# one NAME BINARY SOURCE TASK CAND -> "seconds verdict"
one() {
    local t0 t1 out
    t0=$(date +%s.%N)
    # each build finds its own harness through the source path compiled in
    out=$(KEVO_CACHE_DIR=$6 "$2" eval --json $EVAL_ARGS "$4" "$5" 2>/dev/null)
    t1=$(date +%s.%N)
    local verdict
    verdict=$("$PY" -c 'import json,sys
try: print(json.loads(sys.stdin.read())["verdict"])
except Exception: print("no-json")' <<<"$out")
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}') $verdict"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "before: $BEFORE ($old/build/kevo); after: $(git -C "$SRC" rev-parse --short HEAD)$(git -C "$SRC" diff --quiet || echo '+changes') ($KEVO); $RUNS runs each, alternating"
printf '%-22s %10s %10s %10s %8s  %s\n' case "before s" "cold s" "warm s" ratio verdicts
cache=$WORK/cache
for c in "${CASES[@]}"; do
    task=${c%%:*} cand=${c#*:}
    bs=() as=() ws=() verdicts=""
    rm -rf "$cache.warm"
    one after "$KEVO" "$SRC" "$task" "$cand" "$cache.warm" >/dev/null # primes the warm cache
    for ((r = 0; r < RUNS; r++)); do
        rm -rf "$cache.none" "$cache.cold"
        read -r s v < <(one before "$old/build/kevo" "$old" "$task" "$cand" "$cache.none")
        bs+=("$s"); verdicts+="b:$v "
        read -r s v < <(one after "$KEVO" "$SRC" "$task" "$cand" "$cache.cold")
        as+=("$s"); verdicts+="c:$v "
        read -r s v < <(one after "$KEVO" "$SRC" "$task" "$cand" "$cache.warm")
        ws+=("$s"); verdicts+="w:$v "
    done
    mb=$(median "${bs[@]}") ma=$(median "${as[@]}") mw=$(median "${ws[@]}")
    printf '%-22s %10.2f %10.2f %10.2f %8.2f  %s\n' "$(basename "$task")" "$mb" "$ma" "$mw" \
        "$(awk -v a="$ma" -v b="$mb" 'BEGIN {print a / b}')" "$verdicts"
done
rm -rf "$cache.none" "$cache.cold" "$cache.warm"
