#!/usr/bin/env bash
# Shared work (issue 17): `kevo submit` queues 6 tasks in a real PostgreSQL
# (a throwaway server: tests/helpers/pg_server.sh; SQLite on one file when
# no server binaries are installed, said so), three `kevo worker`s claim
# them, one is killed with SIGKILL in the middle of a task. The other two
# finish every task; the store then holds exactly the attempts the workers'
# logs say were recorded, none twice, each task's iterations numbered
# 0..T-1 without a gap (the killed worker's attempt in flight is simply
# redone by the next holder), the killed task claimed twice, and every
# Q-value equal to the one replayed from the recorded rewards.
# Also: kevo status, and bad input (no backend here, a run twice, no tasks).
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d /tmp/kevo-workers-XXXXXX)
chmod 755 "$tmp"
pids=()
pgdir=""
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  [ -n "$pgdir" ] && bash "$SRC/tests/helpers/pg_server.sh" stop "$pgdir" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/w*.log; do echo "--- $f"; tail -30 "$f"; done; exit 1; }

pgdir=$(mktemp -d /tmp/kevo-pgw-XXXXXX)
if url=$(bash "$SRC/tests/helpers/pg_server.sh" start "$pgdir" 2>"$tmp/pg.err"); then
  DB=$url; echo "store: PostgreSQL ($url)"
else
  rc=$?
  rmdir "$pgdir" 2>/dev/null; pgdir=""
  if [ $rc -ne 77 ]; then cat "$tmp/pg.err"; fail "the test server did not start"; fi
  DB="$tmp/shared.db"; echo "store: SQLite $DB ($(head -1 "$tmp/pg.err"))"
fi
export KEVO_TIMING_LOCK="$tmp/timing.lock"

T=4
tasks="001_relu 002_leaky_relu 003_sigmoid 004_tanh 006_selu 007_elu"
dirs=""; for t in $tasks; do dirs="$dirs $SRC/suites/c/level1/$t"; done
[ "$(ls -d $dirs | wc -l)" = 6 ] || fail "the 6 suite tasks are not where the test expects them"
run=$("$KEVO" submit $dirs --db "$DB" --iterations $T --quick --quiet) || fail "submit"
echo "submitted run $run"

# bad input first (nothing of run $run may be lost by it)
out=$("$KEVO" submit $dirs --db "$DB" --backend nosuch 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "nosuch" || fail "submit with an unknown backend: exit $rc: $out"
out=$("$KEVO" submit "$SRC/suites/c/level1/001_relu" "$SRC/suites/c/level1/001_relu" --db "$DB" 2>&1 >/dev/null); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "a run holds a task once" || fail "a task twice: exit $rc: $out"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  out=$("$KEVO" worker --db "$DB" --backend cuda --until-idle 2>&1); rc=$?
  [ $rc = 2 ] && [ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q "backend 'cuda' cannot run on this machine" ||
    fail "a worker without the run's backend: exit $rc: $out"
fi
for cmd in "worker --until-idle" "status" "submit $SRC/suites/c/level1/001_relu"; do
  out=$("$KEVO" $cmd --db "postgresql://kevo@127.0.0.1:1/kevo" 2>&1 >/dev/null); rc=$?
  [ $rc != 0 ] && [ "$(echo "$out" | grep -c .)" = 1 ] && echo "$out" | grep -q "127.0.0.1" ||
    fail "kevo $cmd against an unreachable server: exit $rc: $out"
done
out=$("$KEVO" worker --db "$DB" --backend nosuch 2>&1); rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "unknown backend 'nosuch'" || fail "worker --backend nosuch: exit $rc: $out"

for w in 1 2 3; do
  "$KEVO" worker --db "$DB" --until-idle --lease 6 --poll 0.5 >"$tmp/w$w.log" 2>&1 &
  pids+=($!)
done
victim=${pids[0]}
# kill worker 1 in the middle of a task: once it has recorded an attempt of
# the task it holds and has more to go
for i in $(seq 1 600); do
  if grep -qE "^\[[0-9]+/[0-9]+\] .* iter +[12]/$T " "$tmp/w1.log"; then break; fi
  sleep 0.2
done
grep -qE "iter +[12]/$T " "$tmp/w1.log" || fail "worker 1 never recorded an attempt"
kill -9 "$victim"
held=$(grep -oE "task [a-z_0-9]+ \(claim" "$tmp/w1.log" | tail -1 | awk '{print $2}')
echo "killed worker 1 (pid $victim) while it held $held"
status_mid=$("$KEVO" status --db "$DB" --run "$run") || fail "kevo status"
echo "$status_mid" | sed 's/^/  status: /'
echo "$status_mid" | grep -q "running  $held" || fail "kevo status does not show $held as running"
for p in "${pids[1]}" "${pids[2]}"; do
  wait "$p" || fail "a surviving worker exited with $?"
done
pids=()
"$KEVO" status --db "$DB" --run "$run" --format json >"$tmp/status.json" || fail "status json"
"$KEVO" memory export "$tmp/mem.jsonl" --db "$DB" >/dev/null || fail "export"
cat "$tmp"/w1.log "$tmp"/w2.log "$tmp"/w3.log >"$tmp/all.log"
python3 - "$tmp/status.json" "$tmp/mem.jsonl" "$tmp/all.log" "$run" "$T" "$held" <<'PY' || fail "the store does not match the logs"
import json, re, sys
status, export, logs, run, T, held = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
st = json.load(open(status))[0]
assert st["run"] == run and st["done"] == 6 and st["queued"] == 0 and st["running"] == 0, st
claims = {w["task"]: w["claims"] for w in st["work"]}
assert claims[held] == 2, ("the killed task was claimed", claims[held], "times")
assert all(c == 1 for t, c in claims.items() if t != held), claims
recs = [json.loads(l) for l in open(export)]
runcfg = json.loads([r for r in recs if r["type"] == "run" and r["id"] == run][0]["config"])
atts = [r for r in recs if r["type"] == "attempt" and r["run"] == run]
# the logs' attempt lines: each one recorded
logged = []
for line in open(logs):
    m = re.match(r"^\[\d+/\d+\] (\S+)\s+iter\s+(\d+)/(\d+) ", line)
    if m:
        logged.append((m.group(1), int(m.group(2)) - 1))
stored = [(a["task"], a["iteration"]) for a in atts]
assert len(set(stored)) == len(stored), "an iteration stored twice"
assert len(set(a["uid"] for a in atts)) == len(atts), "a uid twice"
assert sorted(logged) == sorted(stored), ("logs say", sorted(set(logged) ^ set(stored)))
for t in claims:
    its = sorted(i for (n, i) in stored if n == t)
    assert its == list(range(T)), (t, its)
# every Q replayed from the recorded rewards, in the order they were recorded
alpha, q0 = runcfg.get("alpha", 0.3), runcfg.get("q_init", 0.5)
by_id = {a["id"]: a for a in recs if a["type"] == "attempt"}
q, qs = {}, {}
used = {}
for r in recs:
    if r["type"] == "used" and not r.get("no_credit"):  # a retune's items learn nothing
        used.setdefault(r["attempt"], []).append(r["item"])
for aid in sorted(by_id):
    a = by_id[aid]
    if a["verdict"] == "infra_error":
        continue
    for it in used.get(aid, []):
        k = (it, a["stage"]); q[k] = q.get(k, q0) + alpha * (a["reward"] - q.get(k, q0))
    if a["stage"] == "refine" and a.get("parent"):
        p = a["parent"]; qs[p] = qs.get(p, q0) + alpha * (a["reward"] - qs.get(p, q0))
got = {(r["item"], r["stage"]): r["q"] for r in recs if r["type"] == "q"}
gots = {r["attempt"]: r["q"] for r in recs if r["type"] == "q_start"}
assert set(got) == set(q), ("Q rows", set(got) ^ set(q))
assert all(abs(got[k] - q[k]) < 1e-9 for k in q), [(k, got[k], q[k]) for k in q if abs(got[k] - q[k]) >= 1e-9][:3]
assert set(gots) == set(qs) and all(abs(gots[k] - qs[k]) < 1e-9 for k in qs), "Q2 rows"
print(f"ok: {len(stored)} attempts = the logs' {len(logged)} lines, none twice, 0..{T-1} per task, "
      f"{len(q)} item Q and {len(qs)} start-point Q2 values replayed exactly; {held} claimed twice")
PY
grep -q "lease lost" "$tmp/w2.log" "$tmp/w3.log" && fail "a surviving worker lost a lease"
# the store names the submitter's task folders (the workers' copies are gone):
# kevo best writes every task's kernel from the shared store
"$KEVO" best --db "$DB" --run "$run" --out "$tmp/best" >"$tmp/best.log" 2>&1 || { cat "$tmp/best.log"; fail "kevo best from the shared store"; }
[ "$(ls "$tmp/best"/*.c | wc -l)" = 6 ] || fail "kevo best wrote $(ls "$tmp/best" | wc -l) files"
# moving memory: the run's memory into SQLite, and a new run on another
# PostgreSQL database starting from that SQLite file
"$KEVO" memory import "$tmp/mem.jsonl" --db "$tmp/moved.db" >/dev/null || fail "import into SQLite"
if [ -n "$pgdir" ]; then
  psql -q "$DB" -c 'create database kevo_moved' >/dev/null || fail "createdb"
  DB2=${DB/\/\/\/kevo\?/\/\/\/kevo_moved?}
  "$KEVO" submit "$SRC/suites/c/level1/001_relu" --db "$DB2" --memory-from "$tmp/moved.db" --quiet >/dev/null || fail "submit --memory-from a SQLite store"
  n=$("$KEVO" memory stats --db "$DB2" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"])')
  [ "$n" = 24 ] || fail "the SQLite memory did not arrive in PostgreSQL: $n attempts"
  echo "ok: a PostgreSQL run started from a SQLite memory ($n attempts imported)"
fi
# a task whose holders keep dying is failed after 5 claims, not reclaimed forever
P="$tmp/poison.db"
prun=$("$KEVO" submit "$SRC/suites/c/level1/001_relu" --db "$P" --iterations 50 --quick --quiet) || fail "submit (poison)"
for k in 1 2 3 4 5; do
  "$KEVO" worker --db "$P" --lease 1 --poll 0.2 >"$tmp/p$k.log" 2>&1 & pk=$!
  for i in $(seq 1 300); do grep -q "(claim $k)" "$tmp/p$k.log" 2>/dev/null && break; sleep 0.1; done
  kill -9 "$pk"; wait "$pk" 2>/dev/null
  sleep 1.2 # the lease runs out
done
"$KEVO" worker --db "$P" --until-idle --poll 0.2 >"$tmp/p6.log" 2>&1 || fail "the sixth worker"
grep -q "relu failed: claimed 6 times without finishing" "$tmp/p6.log" || { cat "$tmp/p6.log"; fail "a task killing its workers was not failed"; }
"$KEVO" status --db "$P" --run "$prun" | grep -q "1 failed" || fail "status does not show the failed task"
echo "ok: a task whose workers keep dying fails after 5 claims"
echo "ok: workers (store $( [ -n "$pgdir" ] && echo PostgreSQL || echo SQLite))"
