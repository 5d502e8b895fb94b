#!/usr/bin/env bash
# bench/reference_vs_itself.sh - the timing sanity check: a task's own
# reference.c, submitted as the candidate, must come out `correct` with a
# speedup of about 1. Runs `kevo eval --json` RUNS times (default 10) on
# each task, prints every speedup and whether all lie in [LOW, HIGH]
# (default [0.9, 1.1]); exits 1 otherwise (2 when it cannot run).
#
#   KEVO=build/kevo bench/reference_vs_itself.sh [TASK_DIR...]
#
# Default tasks: suites/c/level1/001_relu and suites/c/level1/015_matmul_square.
# Environment: KEVO (default build/kevo), KEVO_SRC (default: this script's
# repository), RUNS, LOW, HIGH, EVAL_ARGS (extra `kevo eval` options, e.g.
# "--quick" or "--min-time 2").
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
KEVO=${KEVO:-build/kevo}
RUNS=${RUNS:-10}
LOW=${LOW:-0.9}
HIGH=${HIGH:-1.1}
EVAL_ARGS=${EVAL_ARGS:-}
PY=${PYTHON:-python3}

[ -x "$KEVO" ] || { echo "reference_vs_itself: KEVO=$KEVO is not an executable" >&2; exit 2; }
if [ $# -gt 0 ]; then
    TASKS=("$@")
else
    TASKS=("$KEVO_SRC/suites/c/level1/001_relu" "$KEVO_SRC/suites/c/level1/015_matmul_square")
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kevo-self.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT

status=0
for task in "${TASKS[@]}"; do
    [ -f "$task/reference.c" ] || { echo "reference_vs_itself: $task/reference.c missing" >&2; exit 2; }
    cand=$WORK/candidate.c
    cp "$task/reference.c" "$cand"
    ratios=()
    bad=0
    for ((r = 1; r <= RUNS; r++)); do
        # shellcheck disable=SC2086
        out=$("$KEVO" eval --json $EVAL_ARGS "$task" "$cand" 2>"$WORK/err")
        rc=$?
        line=$("$PY" -c '
import json, sys
try:
    o = json.loads(sys.stdin.read())
except Exception:
    print("no-json none"); sys.exit()
lat = o.get("latency") or {}
s = lat.get("speedup")
print(o.get("verdict", "?"), s if isinstance(s, (int, float)) else "none")
' <<<"$out")
        verdict=${line%% *}
        speedup=${line#* }
        if [ "$verdict" != correct ] || [ "$speedup" = none ]; then
            echo "  run $r: verdict $verdict (expected correct), exit status $rc: $(head -c 300 "$WORK/err")"
            ratios+=("-")
            bad=$((bad + 1))
            continue
        fi
        ratios+=("$(printf '%.3f' "$speedup")")
        awk -v s="$speedup" -v lo="$LOW" -v hi="$HIGH" 'BEGIN { exit !(s >= lo && s <= hi) }' ||
            bad=$((bad + 1))
    done
    name=$(basename "$task")
    if [ $bad -eq 0 ]; then
        echo "ok   $name: speedups ${ratios[*]} all in [$LOW, $HIGH]"
    else
        echo "FAIL $name: speedups ${ratios[*]}: $bad of $RUNS outside [$LOW, $HIGH] or not correct"
        status=1
    fi
done
exit $status
