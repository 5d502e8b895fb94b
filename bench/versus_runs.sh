#!/usr/bin/env bash
# bench/versus_runs.sh - two runs' best kernels, task by task, timed side by
# side: for every task both stores solved, `kevo eval TASK A.c --versus B.c`
# (the reference, A's best and B's best in the same rounds, on the same
# inputs; docs/evaluation.md "Two kernels side by side").
#
#   bench/versus_runs.sh A.db B.db [OUT_DIR]
#
# A run's own speedups were measured at different moments (minutes or hours
# apart, each against the reference of its moment), so two runs' geomeans
# differ by the machine as well as by the search; here each pair of best
# kernels is timed together, so the ratio is the kernels'. Prints one row
# per task (the ratio B/A per round: median and quartiles; above 1: A's
# kernel faster), then the geometric mean of the medians, and how many
# tasks each side wins (a win: the quartiles on one side of 1 and the
# median outside 0.91-1.1, as `kevo eval --versus` calls a difference).
# Environment: KEVO (default build/kevo), KEVO_SRC (default: this script's
# repository; the task folders named in the kernels' headers are relative
# to it), EVAL_ARGS (default --quick), TASKS (a regular expression on task
# names; default all), PYTHON.
# Exit status: 0 done, 1 no task in common, 2 bad usage.
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
KEVO=${KEVO:-build/kevo}
EVAL_ARGS=${EVAL_ARGS---quick}
TASKS=${TASKS:-.}
PY=${PYTHON:-python3}

usage() { echo "usage: bench/versus_runs.sh A.db B.db [OUT_DIR]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
A=$1 B=$2
for db in "$A" "$B"; do
    [ -f "$db" ] || { echo "versus_runs: $db: no such store" >&2; exit 2; }
done
case $KEVO in /*) ;; *) KEVO=$PWD/$KEVO ;; esac
[ -x "$KEVO" ] || { echo "versus_runs: KEVO=$KEVO is not an executable" >&2; exit 2; }
OUT=${3:-$(mktemp -d "${TMPDIR:-/tmp}/kevo-versus-runs.XXXXXX")}
mkdir -p "$OUT" || exit 2
"$KEVO" best --db "$A" --out "$OUT/a" >"$OUT/best-a.log" 2>&1 \
    || { cat "$OUT/best-a.log" >&2; echo "versus_runs: kevo best on $A failed" >&2; exit 2; }
"$KEVO" best --db "$B" --out "$OUT/b" >"$OUT/best-b.log" 2>&1 \
    || { cat "$OUT/best-b.log" >&2; echo "versus_runs: kevo best on $B failed" >&2; exit 2; }

cd "$KEVO_SRC" || exit 2
n=0
: >"$OUT/pairs.tsv"
for fa in "$OUT"/a/*.c; do
    name=$(basename "$fa" .c)
    fb=$OUT/b/$name.c
    [ -f "$fb" ] || continue
    [[ $name =~ $TASKS ]] || continue
    # the task folder, from the header's `check:` line (kevo best writes it)
    dir=$(sed -n 's|^// check: *kevo eval \([^ ]*\) .*|\1|p' "$fa" | head -1)
    [ -n "$dir" ] && [ -d "$dir" ] || { echo "versus_runs: $name: no task folder in $fa" >&2; continue; }
    # shellcheck disable=SC2086
    "$KEVO" eval "$dir" "$fa" --versus "$fb" --json $EVAL_ARGS >"$OUT/$name.json" 2>"$OUT/$name.err"
    printf '%s\t%s\n' "$name" "$OUT/$name.json" >>"$OUT/pairs.tsv"
    n=$((n + 1))
    printf '%s ' "$name" >&2
done
echo >&2
[ "$n" -gt 0 ] || { echo "versus_runs: no task has a best kernel in both stores" >&2; exit 1; }

"$PY" - "$OUT/pairs.tsv" "$A" "$B" <<'PY'
import json, math, sys
rows, logs = [], []
for line in open(sys.argv[1]):
    name, path = line.rstrip("\n").split("\t")
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        print(f"{name:40s} (no result: see {path[:-5]}.err)")
        continue
    v = d.get("versus") or {}
    if not v.get("measured"):
        va, vb = d["candidate"]["verdict"], d["other"]["verdict"]
        print(f"{name:40s} not measured (A {va}, B {vb})")
        continue
    r, q1, q3 = v["ratio"], v["ratio_q1"], v["ratio_q3"]
    won = "" if (q1 <= 1 <= q3) or (1 / 1.1 < r < 1.1) else ("A" if r > 1 else "B")
    rows.append((name, r, q1, q3, won))
print(f"A = {sys.argv[2]}\nB = {sys.argv[3]}")
print(f"{'task':40s} {'B/A median':>10s} {'quartiles':>15s}  faster")
for name, r, q1, q3, won in rows:
    print(f"{name:40s} {r:10.3f} {q1:7.3f}-{q3:<7.3f}  {won or '-'}")
if rows:
    g = math.exp(sum(math.log(r) for _, r, *_ in rows) / len(rows))
    a = sum(1 for *_, w in rows if w == "A")
    b = sum(1 for *_, w in rows if w == "B")
    print(f"{len(rows)} tasks side by side: geomean of B/A {g:.3f} "
          f"(above 1: A's kernels faster); A faster on {a}, B faster on {b}, "
          f"no clear difference on {len(rows) - a - b}")
PY
