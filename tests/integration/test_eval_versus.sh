#!/usr/bin/env bash
# test_eval_versus.sh - `kevo eval TASK A.c --versus B.c`: two kernels
# judged and timed side by side in the same rounds. A kernel that does the
# reference's work once against one that does it four times: the per-round
# ratio (B's time over A's) names A faster, and the other way round when
# the two swap places; both results carry the same reference samples; an
# incorrect other kernel leaves the candidate measured alone (exit 1, no
# ratio); a missing file is bad usage (exit 2). Then bench/versus_runs.sh
# on two short runs: a row per task both solved, the summary line, exit 1
# with no task in common, exit 2 on bad usage.
# Needs KEVO (the binary) and KEVO_SRC (the source tree).
set -euo pipefail

: "${KEVO:?set KEVO to the kevo binary}"
: "${KEVO_SRC:?set KEVO_SRC to the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-versus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$KEVO_SRC"
task=suites/c/level1/001_relu

. "$KEVO_SRC/tests/helpers/expect.sh" # fail, expect_status

cat >"$tmp/once.c" <<'EOF'
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
EOF
# the work four times over; the volatile stores keep gcc from merging the
# passes (no asm: the static gate rejects it)
cat >"$tmp/four.c" <<'EOF'
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int r = 0; r < 4; r++) {
        volatile float *vy = y;
        for (int64_t i = 0; i < N; i++)
            vy[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
EOF
cat >"$tmp/wrong.c" <<'EOF'
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i];
}
EOF

# ratio = time of the other / time of the candidate, per round
ratio_of() { # ratio_of JSON_FILE -> the versus object checked, its ratio printed
    python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["versus"]
a, b = d["candidate"], d["other"]
assert a["verdict"] == "correct" and b["verdict"] == "correct", (a["verdict"], b["verdict"])
assert v["measured"] is True, v
assert v["rounds"] >= 5, v
assert v["ratio_q1"] <= v["ratio"] <= v["ratio_q3"], v
la, lb = a["latency"], b["latency"]
# one measurement: the two share the reference's samples
assert la["reference_us"] == lb["reference_us"], (la, lb)
assert la["reference_samples"] == lb["reference_samples"], (la, lb)
print(v["ratio"])
PY
}

expect_status 0 "$KEVO" eval "$task" "$tmp/once.c" --versus "$tmp/four.c" --quick --json
cp "$tmp/out" "$tmp/ab.json"
r=$(ratio_of "$tmp/ab.json") || fail "versus object (once vs four): $(cat "$tmp/ab.json")"
python3 -c "import sys; sys.exit(0 if float('$r') > 1.5 else 1)" \
    || fail "four passes over once: ratio $r, expected above 1.5"

expect_status 0 "$KEVO" eval "$task" "$tmp/four.c" --versus "$tmp/once.c" --quick --json
cp "$tmp/out" "$tmp/ba.json"
r=$(ratio_of "$tmp/ba.json") || fail "versus object (four vs once): $(cat "$tmp/ba.json")"
python3 -c "import sys; sys.exit(0 if float('$r') < 1 / 1.5 else 1)" \
    || fail "once over four passes: ratio $r, expected below 0.67"

# the text form names the faster file
expect_status 0 "$KEVO" eval "$task" "$tmp/four.c" --versus "$tmp/once.c" --quick
grep -q "^versus .*$tmp/once.c is [0-9.]*x faster" "$tmp/out" \
    || { cat "$tmp/out" >&2; fail "text: the versus line does not name once.c faster"; }
[ "$(grep -c '^verdict    correct' "$tmp/out")" = 2 ] || { cat "$tmp/out" >&2; fail "text: two verdicts"; }

# an incorrect other kernel: no ratio, the candidate still measured, exit 1
expect_status 1 "$KEVO" eval "$task" "$tmp/once.c" --versus "$tmp/wrong.c" --quick --json
python3 - "$tmp/out" <<'PY' || fail "incorrect other: $(cat "$tmp/out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["versus"] == {"measured": False}, d["versus"]
assert d["candidate"]["verdict"] == "correct" and d["candidate"]["latency"]["speedup"] > 0
assert d["other"]["verdict"] == "incorrect" and d["other"]["latency"] is None
PY

expect_status 2 "$KEVO" eval "$task" "$tmp/once.c" --versus "$tmp/missing.c"
grep -q "missing.c" "$tmp/err" || fail "a missing --versus file is not named: $(cat "$tmp/err")"
# bench/versus_runs.sh: two stores' best kernels side by side
for db in a b; do
    "$KEVO" run "$task" --iterations 2 --quick --db "$tmp/$db.db" >"$tmp/run-$db.log" 2>&1 \
        || { cat "$tmp/run-$db.log" >&2; fail "kevo run ($db)"; }
done
"$KEVO" run suites/c/level1/019_matvec --iterations 1 --quick --db "$tmp/c.db" >"$tmp/run-c.log" 2>&1 \
    || { cat "$tmp/run-c.log" >&2; fail "kevo run (c)"; }
expect_status 0 env KEVO="$KEVO" bash bench/versus_runs.sh "$tmp/a.db" "$tmp/b.db" "$tmp/vr"
grep -Eq '^relu +[0-9.]+ +[0-9.]+-[0-9.]+ +[-AB]$' "$tmp/out" \
    || { cat "$tmp/out" >&2; fail "versus_runs: no row for relu"; }
grep -q '^1 tasks side by side: geomean of B/A [0-9.]*' "$tmp/out" \
    || { cat "$tmp/out" >&2; fail "versus_runs: no summary line"; }
expect_status 1 env KEVO="$KEVO" bash bench/versus_runs.sh "$tmp/a.db" "$tmp/c.db" "$tmp/vr2"
expect_status 2 env KEVO="$KEVO" bash bench/versus_runs.sh "$tmp/a.db"
expect_status 2 env KEVO="$KEVO" bash bench/versus_runs.sh "$tmp/a.db" "$tmp/missing.db"
echo "test_eval_versus: ok"
