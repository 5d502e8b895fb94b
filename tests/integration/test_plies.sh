#!/usr/bin/env bash
# tests/integration/test_plies.sh - the built-in generator's root ply, as a
# user's run shows it: from an empty memory every arm is novel and expected
# to gain (nothing is known: q_init, 1.73x), so the refinements after the
# draft are children of the draft, each a different arm (recipe, or flag
# set), none stacked on another, until a kernel is further ahead of the
# draft than an untried arm promises (kevo_agent__ply_novel_holds: on
# matvec, -ffast-math's 2x may end it after one refinement); no kernel
# but the draft is refined before one is (which kernel the best ply then
# picks depends on timings: tests/unit/test_builtin_gen.c).
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
# the root ply ends only once a kernel is 1.73x ahead of the draft (the
# draft is the reference: it counts at 1x); 1.7 leaves the rounding
ahead = max([a[3] for a in root] + [0])
check(len(root) >= 1 and (len(root) == len(v) - 1 or ahead >= 1.7),
      f"value run: the first {len(root)} refinements refine the draft, "
      f"until a kernel {ahead:.2f}x ahead of it (>= 1.73x) ends the root ply")
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
