#!/usr/bin/env bash
# What `--memory on|off` and `--start-score` promise a user: a run with the
# memory on seeds the backends' API notes and the best practices into a
# fresh store once (a second run adds none); with --memory off the attempts
# and their rewards are recorded but nothing is learnt or written as
# knowledge (no Q value, no experience, trace or note item); the start-point
# score is stored with the run, kept by --resume, and a bad one is refused.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
T="$SRC/suites/c/level1/010_hardtanh"
pass=0 fail=0
check() { # name, expected, actual
  if [ "$2" = "$3" ]; then echo "ok   $1 ($3)"; pass=$((pass + 1));
  else echo "FAIL $1: expected $2, got $3"; fail=$((fail + 1)); fi
}
q() { /usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"; }

"$KEVO" run "$T" --iterations 3 --quick --quiet --db "$tmp/off.db" --memory off > "$tmp/off.txt" 2>&1 ||
  { cat "$tmp/off.txt"; echo "0 passed, 1 failed"; exit 1; }
check "memory off: attempts recorded" 3 "$(q "$tmp/off.db" "SELECT count(*) FROM attempts")"
check "memory off: rewards recorded" 3 "$(q "$tmp/off.db" "SELECT count(*) FROM attempts WHERE reward_raw <> 0")"
check "memory off: no item written" 0 "$(q "$tmp/off.db" "SELECT count(*) FROM items")"
check "memory off: no Q value" 0 "$(q "$tmp/off.db" "SELECT (SELECT count(*) FROM q_item) + (SELECT count(*) FROM q_start)")"

"$KEVO" run "$T" --iterations 3 --quick --quiet --db "$tmp/on.db" > "$tmp/on.txt" 2>&1 ||
  { cat "$tmp/on.txt"; echo "0 passed, 1 failed"; exit 1; }
notes=$(q "$tmp/on.db" "SELECT count(*) FROM items WHERE kind = 'api_doc'")
practices=$(q "$tmp/on.db" "SELECT count(*) FROM items WHERE kind = 'best_practice'")
[ "$notes" -gt 0 ] && [ "$practices" -gt 0 ]; check "memory on: a fresh store is seeded" 0 $?
check "memory on: experience distilled" 3 "$(q "$tmp/on.db" "SELECT count(*) FROM items WHERE kind = 'experience'")"
check "start score stored (default q2)" q2 "$(q "$tmp/on.db" "SELECT json_extract(config, '\$.start_score') FROM runs WHERE id = 1")"
"$KEVO" run "$T" --iterations 2 --quick --quiet --db "$tmp/on.db" --start-score q2-latency > "$tmp/on2.txt" 2>&1 ||
  { cat "$tmp/on2.txt"; fail=$((fail + 1)); }
check "seeding is idempotent (notes)" "$notes" "$(q "$tmp/on.db" "SELECT count(*) FROM items WHERE kind = 'api_doc'")"
check "seeding is idempotent (practices)" "$practices" "$(q "$tmp/on.db" "SELECT count(*) FROM items WHERE kind = 'best_practice'")"
check "start score stored (q2-latency)" q2-latency "$(q "$tmp/on.db" "SELECT json_extract(config, '\$.start_score') FROM runs WHERE id = 2")"
"$KEVO" run "$T" --iterations 2 --quick --quiet --db "$tmp/on.db" --resume 2 > "$tmp/on3.txt" 2>&1
check "resume keeps the start score" q2-latency "$(q "$tmp/on.db" "SELECT json_extract(config, '\$.start_score') FROM runs WHERE id = 2")"

"$KEVO" run "$T" --db "$tmp/bad.db" --start-score fastest > "$tmp/bad.txt" 2>&1
rc=$?
check "bad --start-score: usage error" 2 "$rc"
grep -q "start_score must be q2 or q2-latency, not 'fastest'" "$tmp/bad.txt"; check "bad --start-score: says what is accepted" 0 $?
[ ! -e "$tmp/bad.db" ]; check "bad --start-score: no store created" 0 $?
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
