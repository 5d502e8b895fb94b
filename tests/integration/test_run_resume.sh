#!/usr/bin/env bash
# A run killed with SIGKILL mid-way resumes and completes with no duplicate
# and no lost attempt: every task ends with exactly --iterations attempts,
# iterations 1..T each once; the method's hyper-parameters given as flags
# are recorded with the run and survive the resume.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/run.db"
T1="$SRC/suites/c/level1/010_hardtanh"
T2="$SRC/suites/c/level1/002_leaky_relu"
"$KEVO" run "$T1" "$T2" --iterations 3 --quick --db "$db" --alpha 0.2 --q-init 0.1 --lambda 2 \
  --pool-n 4 --normalize --epsilon 0.05 > "$tmp/out.txt" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "iter  2/3" "$tmp/out.txt" 2>/dev/null && break
  sleep 0.2
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
echo "killed after: $(grep -c iter "$tmp/out.txt") attempts"
"$KEVO" run --resume 1 --db "$db" > "$tmp/resume.txt" 2>&1 || { cat "$tmp/resume.txt"; echo "1 failed"; exit 1; }
"$KEVO" report --db "$db" --format json > "$tmp/report.json"
python3 - "$tmp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = 0
for t in r["per_task"]:
    ok = t["attempts"] == 3
    print(("ok  " if ok else "FAIL"), t["task"], "attempts", t["attempts"])
    bad += not ok
ok = r["tasks"] == 2 and r["status"] == "finished"
print(("ok  " if ok else "FAIL"), "tasks", r["tasks"], "status", r["status"])
bad += not ok
c = r["config"]
want = {"alpha": 0.2, "q_init": 0.1, "lambda": 2, "pool_n": 4, "normalize": True, "epsilon": 0.05}
got = {k: c.get(k) for k in want}
ok = got == want
print(("ok  " if ok else "FAIL"), "hyper-parameters recorded and resumed", got)
bad += not ok
print(f"{4 - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
PY
