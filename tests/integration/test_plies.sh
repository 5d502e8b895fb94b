#!/usr/bin/env bash
# tests/integration/test_plies.sh - the built-in generator's root ply, as a
# user's run shows it: from an empty memory every arm is expected to gain
# (nothing is known), so the refinements after the draft are all children
# of the draft, each a different arm (recipe, or flag set), before any
# recipe is stacked on another (the best ply that follows is checked by
# tests/unit/test_builtin_gen.c: which kernel it picks depends on timings).
# And the ablation (--retrieval random) has no plies: its start points come
# from the start rule alone.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T="$SRC/suites/c/level1/019_matvec"
fail=0
"$KEVO" run "$T" --iterations 10 --quick --quiet --db "$tmp/v.db" > "$tmp/v.txt" 2>&1 \
  || { cat "$tmp/v.txt"; echo "1 failed"; exit 1; }
"$KEVO" run "$T" --iterations 10 --quick --quiet --retrieval random --db "$tmp/r.db" \
  > "$tmp/r.txt" 2>&1 || { cat "$tmp/r.txt"; echo "1 failed"; exit 1; }
python3 - "$tmp/v.db" "$tmp/r.db" <<'PY' || fail=1
import json, sqlite3, sys

def rows(path):
    db = sqlite3.connect(path)
    return db.execute("SELECT id, parent_id, verdict, speedup, recipes FROM attempts ORDER BY id").fetchall()

def arm(recipes):
    last = json.loads(recipes)[-1]
    return last["recipe"] + (" set=%s" % last["params"]["set"] if last["recipe"] == "flags" else "")

bad = 0
def check(ok, what):
    global bad
    print(("ok   " if ok else "FAIL ") + what)
    bad += not ok

v = rows(sys.argv[1])
draft = v[0][0]
check(v[0][1] is None and len(v) == 10, "value run: a draft and 9 refinements")
root = []
for a in v[1:]:
    if a[1] != draft:
        break
    root.append(a)
check(len(root) >= 5, f"value run: the first {len(root)} refinements all refine the draft")
arms = [arm(a[4]) for a in root]
check(len(set(arms)) == len(arms), f"value run: each a different arm ({', '.join(arms)})")
check(all(len(json.loads(a[4])) == 1 for a in root), "value run: one recipe each, none stacked")
r = rows(sys.argv[2])
kids = sum(1 for a in r[1:] if a[1] == r[0][0])
check(kids < len(r) - 1, f"random run: not every refinement refines the draft ({kids} of {len(r) - 1})")
sys.exit(1 if bad else 0)
PY
[ "$fail" = 0 ] && echo "1 passed, 0 failed" || echo "1 failed"
exit "$fail"
