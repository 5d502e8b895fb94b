#!/usr/bin/env bash
# bench/race_probe.sh - how often the correctness gate catches a threaded
# kernel whose result depends on how its threads interleave, and which part
# caught it: the main check (one thread per CPU, every size set x seed) or
# the race probe after it (more threads than CPUs, the check sets' calls in
# repeated passes; src/verify/gate_correctness.c). One `kevo eval
# --no-latency` per run; the feedback of a failed run names the probe's
# thread count when the probe failed it.
#
#   RUNS=40 bash bench/race_probe.sh [TASK_DIR:CANDIDATE ...]
#
# Default cases: the racy kernels in bench/race/ (both wrong on purpose).
# Prints, per case: runs, caught by the main check, caught by the probe,
# missed (verdict correct) and other verdicts.
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEVO=${KEVO:-$SRC/build/kevo}
RUNS=${RUNS:-20}
die() { echo "race_probe: $*" >&2; exit 2; }
[ -x "$KEVO" ] || die "KEVO=$KEVO is not an executable (build first: bash scripts/setup.sh)"
if [ $# -gt 0 ]; then
    CASES=("$@")
else
    CASES=("$SRC/suites/c/level2/036_convtranspose2d_gelu_groupnorm:$SRC/bench/race/convtranspose2d_scatter.c"
           "$SRC/suites/c/level1/001_relu:$SRC/bench/race/relu_box4.c")
fi
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; kevo $(git -C "$SRC" rev-parse --short HEAD)$(git -C "$SRC" diff --quiet || echo '+changes'); $RUNS runs per case"
printf '%-40s %5s %6s %6s %7s %6s\n' case runs main probe missed other
for c in "${CASES[@]}"; do
    task=${c%%:*} cand=${c#*:}
    [ -d "$task" ] && [ -f "$cand" ] || die "no task $task or candidate $cand"
    main=0 probe=0 missed=0 other=0
    for ((r = 0; r < RUNS; r++)); do
        out=$("$KEVO" eval "$task" "$cand" --no-latency 2>&1)
        verdict=$(sed -n 's/^verdict *//p' <<<"$out")
        if [ "$verdict" = correct ]; then
            missed=$((missed + 1))
        elif [ "$verdict" != incorrect ]; then
            other=$((other + 1))
        elif grep -q '^feedback.*threads, pass [0-9]*)' <<<"$out"; then
            probe=$((probe + 1))
        else
            main=$((main + 1))
        fi
    done
    printf '%-40s %5d %6d %6d %7d %6d\n' "$(basename "$task")/$(basename "$cand")" "$RUNS" \
        "$main" "$probe" "$missed" "$other"
done
