#!/usr/bin/env bash
# bench/workers.sh - shared work on one machine (issue 17): attempts per
# minute with 1, 2 and 4 `kevo worker` processes against one throwaway
# PostgreSQL (the same suite tasks and budget each time, a fresh run per
# worker count), then the retrieval latency (bench_memory_bench: one full
# kevo_context_build) at ATTEMPTS recorded attempts on PostgreSQL next to
# SQLite, in the same run.
#
#   bash bench/workers.sh            (build/ must be built with the benches)
#   TASKS=8 ITER=4 WORKERS="1 2 4" ATTEMPTS=100000 QUERIES=300 bash bench/workers.sh
#
# Timing takes turns machine-wide (one timing slot), so what scales with
# workers is everything else of an attempt: proposing, compiling, the
# correctness checks; what cannot is the latency gate.
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
BENCH=${BENCH:-build/bench_memory_bench}
TASKS=${TASKS:-8}
ITER=${ITER:-4}
WORKERS=${WORKERS:-"1 2 4"}
ATTEMPTS=${ATTEMPTS:-100000}
QUERIES=${QUERIES:-300}
tmp=$(mktemp -d /tmp/kevo-bench-workers-XXXXXX); chmod 755 "$tmp"
pg=$(mktemp -d /tmp/kevo-bench-pg-XXXXXX)
trap 'bash tests/helpers/pg_server.sh stop "$pg" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
url=$(bash tests/helpers/pg_server.sh start "$pg")
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "store: PostgreSQL $(psql -At "$url" -c 'show server_version' 2>/dev/null || echo '?') on a Unix socket"
dirs=$(ls -d suites/c/level1/0* | head -n "$TASKS")
echo
echo "== attempts per minute: $TASKS tasks x $ITER iterations, --quick, builtin generator"
printf '%-8s %8s %9s %13s %8s\n' workers attempts wall_s attempts/min ratio
base=""
for k in $WORKERS; do
  run=$("$KEVO" submit $dirs --db "$url" --iterations "$ITER" --quick --quiet --seed "$k")
  t0=$(date +%s.%N)
  pids=()
  for w in $(seq 1 "$k"); do
    "$KEVO" worker --db "$url" --until-idle --quiet --poll 0.5 >"$tmp/w$k-$w.log" 2>&1 & pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  t1=$(date +%s.%N)
  n=$("$KEVO" status --db "$url" --run "$run" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["attempts"])')
  python3 - "$k" "$n" "$t0" "$t1" "${base:-}" <<'PY'
import sys
k, n, t0, t1, base = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
rate = n / ((t1 - t0) / 60)
ratio = rate / float(base) if base else 1.0
print(f"{k:<8} {n:>8} {t1 - t0:>9.1f} {rate:>13.1f} {ratio:>7.2f}x")
PY
  if [ -z "$base" ]; then base=$(python3 -c "print($n / (($t1 - $t0) / 60))"); fi
done
echo
echo "== retrieval + context assembly at $ATTEMPTS attempts ($QUERIES queries each)"
for store in sqlite postgresql; do
  if [ $store = sqlite ]; then db="$tmp/bench.db"; else
    psql -q "$url" -c 'create database kevo_bench' >/dev/null
    db=${url/\/\/\/kevo\?/\/\/\/kevo_bench?}
  fi
  echo "-- $store"
  "$BENCH" --db "$db" --attempts "$ATTEMPTS" --items "$ATTEMPTS" --queries "$QUERIES" 2>&1 | sed 's/^/   /'
done
