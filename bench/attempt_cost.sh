#!/usr/bin/env bash
# bench/attempt_cost.sh - what one attempt costs: the demo's 6 tasks x 6
# attempts (built-in generator, --quick, a fresh store each) with a build of
# an older commit and with this tree, one after the other in one run.
# Prints per build the wall time, seconds per attempt, the share of that
# spent in timed kernel calls (both sides, from each attempt's latency
# gate), and the ratio; then whether the two runs gave the same verdicts
# attempt by attempt (the built-in generator is seeded: same choices while
# the speedups it learns from agree).
#
#   bash bench/attempt_cost.sh                  # BEFORE=55e48c2 against this tree
#   BEFORE=<commit> ITER=6 bash bench/attempt_cost.sh
#
# The BEFORE build is made in a git worktree under $WORK (default
# /tmp/kevo-eval-cost, shared with bench/eval_cost.sh); the AFTER binary is
# KEVO (default build/kevo).
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BEFORE=${BEFORE:-55e48c2}
ITER=${ITER:-6}
WORK=${WORK:-/tmp/kevo-eval-cost}
KEVO=${KEVO:-$SRC/build/kevo}
PY=${PYTHON:-python3}
TASKS=(suites/c/level1/001_relu suites/c/level1/013_softmax_rows
       suites/c/level1/015_matmul_square suites/c/level1/019_matvec
       suites/c/level1/037_reduce_sum_dim suites/c/level1/051_conv2d)

die() { echo "attempt_cost: $*" >&2; exit 2; }
[ -x "$KEVO" ] || die "KEVO=$KEVO is not an executable (build first: bash scripts/setup.sh)"
# shellcheck source=before_build.sh
. "$SRC/bench/before_build.sh"

# run NAME BINARY TREE -> WORK/NAME.db, WORK/NAME.secs
run() {
    rm -rf "$WORK/$1.db" "$WORK/$1.cache"
    local t0 t1
    t0=$(date +%s.%N)
    # an empty cache folder: both builds start cold (no reference results,
    # no harness objects from an earlier run)
    (cd "$3" && KEVO_CACHE_DIR="$WORK/$1.cache" "$2" run "${TASKS[@]}" --generator builtin --iterations "$ITER" --quick \
        --quiet --db "$WORK/$1.db") >"$WORK/$1.log" 2>&1 || die "$1: kevo run failed (see $WORK/$1.log)"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}' >"$WORK/$1.secs"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
echo "before: $BEFORE; after: $(git -C "$SRC" rev-parse --short HEAD)$(git -C "$SRC" diff --quiet || echo '+changes'); ${#TASKS[@]} tasks x $ITER attempts each"
run before "$old/build/kevo" "$old"
run after "$KEVO" "$SRC"

"$PY" - "$WORK" <<'PY'
import json, re, sqlite3, sys
work = sys.argv[1]
rows = {}
for side in ("before", "after"):
    db = sqlite3.connect(f"{work}/{side}.db")
    att = db.execute("select t.name, a.iteration, a.verdict, a.gates from attempts a "
                     "join tasks t on t.id = a.task_id order by a.id").fetchall()
    timed = 0.0
    for _, _, _, gates in att:
        for g in json.loads(gates or "[]"):
            if g.get("name") != "latency":
                continue
            for m in g.get("messages", []):
                # "candidate median X us (...N calls); reference median Y us (...M calls)"
                for us, n in re.findall(r"median ([0-9.]+) us \([^)]*?(\d+) calls\)", m):
                    timed += float(us) * 1e-6 * int(n)
    secs = float(open(f"{work}/{side}.secs").read())
    rows[side] = (secs, len(att), timed, [(a[0], a[1], a[2]) for a in att])
print(f"{'build':8} {'wall s':>8} {'attempts':>8} {'s/attempt':>10} {'timed share':>12}")
for side in ("before", "after"):
    secs, n, timed, _ = rows[side]
    print(f"{side:8} {secs:8.1f} {n:8d} {secs / max(n, 1):10.2f} {timed / secs:11.1%}")
b, a = rows["before"], rows["after"]
print(f"ratio (before / after seconds per attempt): "
      f"{(b[0] / max(b[1], 1)) / (a[0] / max(a[1], 1)):.2f}x")
same = sum(1 for x, y in zip(b[3], a[3]) if x == y)
print(f"same verdict at the same attempt: {same} of {max(len(b[3]), len(a[3]))}")
for x, y in zip(b[3], a[3]):
    if x != y:
        print(f"  differs: {x[0]} iteration {x[1]}: before {x[2]}, after {y[2]}")
PY
