#!/usr/bin/env bash
# tests/integration/test_tasks_check.sh - `kevo tasks check` judges a task's
# tolerance against its outputs: a copy of l2norm_rows with atol 1e-2
# (outputs ~x/64) is flagged with the output, the size set and the atol to
# use, and exits 1; the attack it stops is real: a kernel that divides by
# the norm the input distribution implies instead of computing it is
# `correct` on that copy and `incorrect` on the real task. A near-constant
# output is flagged too; the real task passes.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # cond description
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
real=$KEVO_SRC/suites/c/level1/029_l2norm_rows
cheat=$KEVO_SRC/tests/adversarial/l2norm_rows/dist_scale.c
mk() { # name python-statement
    cp -r "$real" "$tmp/$1"
    python3 - "$tmp/$1/task.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[1], "w"))
PY
}
mk loose 'd["tolerance"] = {"atol": 1e-2, "rtol": 1e-4}'
mk flat 'd["tolerance"] = {"atol": 2.0, "rtol": 0}'

out=$("$KEVO" tasks check "$tmp/loose" 2>&1); rc=$?
check '[ $rc = 1 ]' "loose tolerance: exit 1 (got $rc)"
check 'grep -q "output '"'"'y'"'"' on sizes .*atol=0.01 is .*% of the range" <<<"$out"' \
    "loose tolerance: names the output, the sizes and the share of the range"
check 'grep -q "set atol <= " <<<"$out"' "loose tolerance: says which atol would do"

out=$("$KEVO" tasks check "$tmp/flat" 2>&1); rc=$?
check '[ $rc = 1 ] && grep -q "near-constant" <<<"$out"' "atol wider than the outputs: near-constant (exit $rc)"

out=$("$KEVO" tasks check "$real" 2>&1); rc=$?
check '[ $rc = 0 ]' "the real task passes (exit $rc) ${out:0:300}"

verdict() { "$KEVO" eval --quick --json --no-latency "$1" "$2" 2>/dev/null |
    python3 -c 'import json,sys
try: print(json.load(sys.stdin)["verdict"])
except Exception: print("no-json")'; }
v=$(verdict "$tmp/loose" "$cheat")
check '[ "$v" = correct ]' "the distribution-aware kernel passes the loose copy (got $v): the check is needed"
v=$(verdict "$real" "$cheat")
check '[ "$v" = incorrect ]' "the distribution-aware kernel fails the real task (got $v)"
echo "$((7 - fails)) passed, $fails failed"
[ $fails = 0 ]
