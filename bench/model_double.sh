#!/usr/bin/env bash
# The mechanism against a context-sensitive model double
# (tests/helpers/model_double.c): a deterministic fake model whose draft is
# correct only when its context carries the construct a task needs (a seeded
# best practice or API note), a worked example (a trace) or the lesson or
# feedback of its own earlier failure, and whose refinement is faster only
# when a relevant best practice or trace is in the context. A simulation of
# the mechanism (retrieval, memory, context, transfer), NOT of model quality.
#
#   bench/model_double.sh [BUILD_DIR] [OUT_DIR]
#
# Same tasks, iterations, token budget and seed for every configuration:
#   value / heuristic / random retrieval, memory off, passive context (no
#   token budget: KOPE's agent-led baseline grows with the history) on
#   8 Level 1 tasks; then L1 -> L2 transfer: 3 Level 2 tasks from a memory
#   exported from the value run (`kevo memory export`, `--memory-from`) vs
#   an empty memory. Environment: ITER (default 6), BUDGET (token budget,
#   default 6000), POOL_N (experience items per prompt, default 3), SEED (1).
# Prints one table: attempts to the first correct kernel (mean over tasks; a
# task never solved counts ITER+1), correct rate, geomean of each task's best
# correct speedup (bench/compare_runs.py's definition: unsolved = 1.0x),
# prompt tokens (total and per attempt), and how often a draft prompt held
# the task's construct (from the double's decision log).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
OUT=${2:-$(mktemp -d /tmp/kevo-model-double.XXXXXX)}
KEVO=$BUILD/kevo
DOUBLE=$BUILD/tests/model_double
ITER=${ITER:-6}
BUDGET=${BUDGET:-6000}
POOL_N=${POOL_N:-3}
SEED=${SEED:-1}
S=$SRC/suites/c
L1=(level1/001_relu level1/003_sigmoid level1/013_softmax_rows level1/019_matvec
    level1/029_l2norm_rows level1/037_reduce_sum_dim level1/045_cumsum_rows level1/057_mse_loss)
L2=(level2/002_gemm_sigmoid_sum level2/007_matmul_bias_softmax level2/011_gemm_swish_scale)
[ -x "$KEVO" ] && [ -x "$DOUBLE" ] || { echo "build first: $KEVO, $DOUBLE" >&2; exit 2; }
mkdir -p "$OUT"
export KEVO_API_KEY=model-double # never checked; the client wants one
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null || true; }
trap cleanup EXIT

# run NAME SUITE-LIST-VAR [kevo run options...]
run() {
  local name=$1 list=$2; shift 2
  local -n dirs=$list
  local paths=()
  for d in "${dirs[@]}"; do paths+=("$S/$d"); done
  rm -f "$OUT/$name.db" "$OUT/$name.log"
  "$DOUBLE" --log "$OUT/$name.log" --suites "$S" --lifetime 1200 > "$OUT/$name.port" &
  spid=$!
  for _ in $(seq 1 50); do [ -s "$OUT/$name.port" ] && break; sleep 0.1; done
  local t0=$SECONDS
  # KOPE's passive baseline has no budget: its context grows with the history
  local budget=(--token-budget "$BUDGET")
  [ "$name" = passive ] && budget=()
  "$KEVO" run "${paths[@]}" --generator openai --api-base "http://127.0.0.1:$(head -1 "$OUT/$name.port")/v1" \
    --model double --no-audit --quick --quiet --iterations "$ITER" "${budget[@]}" \
    --pool-n "$POOL_N" --seed "$SEED" --db "$OUT/$name.db" "$@" > "$OUT/$name.out" 2>&1 \
    || { cat "$OUT/$name.out"; exit 1; }
  kill "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true; spid=
  "$KEVO" report --db "$OUT/$name.db" --format json > "$OUT/$name.json"
  echo "$name: $((SECONDS - t0)) s" >&2
}

run value L1
run heuristic L1 --retrieval heuristic
run random L1 --retrieval random
run memory_off L1 --memory off
run passive L1 --context passive
"$KEVO" memory --db "$OUT/value.db" export "$OUT/l1_memory.jsonl" > /dev/null
run l2_empty L2
run l2_from_l1 L2 --memory-from "$OUT/l1_memory.jsonl"

python3 - "$OUT" "$ITER" <<'PY'
import json, math, sys
out, T = sys.argv[1], int(sys.argv[2])
rows = [("value", "L1, --retrieval value (default)"), ("heuristic", "L1, --retrieval heuristic"),
        ("random", "L1, --retrieval random"), ("memory_off", "L1, --memory off"),
        ("passive", "L1, --context passive"), ("l2_empty", "L2, empty memory"),
        ("l2_from_l1", "L2, --memory-from L1 export")]
print("| configuration | attempts to 1st correct (mean) | correct rate | geomean speedup "
      "| prompt tokens (total) | per attempt | drafts with the construct |")
print("|---|---|---|---|---|---|---|")
for key, label in rows:
    r = json.load(open(f"{out}/{key}.json"))
    per = r["per_task"]
    firsts = [p["first_correct_iteration"] if p["correct"] else T + 1 for p in per]
    best = [p["best_speedup"] if p["correct"] and p["best_speedup"] > 0 else 1.0 for p in per]
    gm = math.exp(sum(math.log(b) for b in best) / len(best))
    drafts = hit = 0
    for line in open(f"{out}/{key}.log"):
        d = json.loads(line)
        if d.get("stage") != "draft" or not d.get("traps"):
            continue
        drafts += 1
        hit += any(t["avoided_by"].startswith(("construct", "trace")) for t in d["traps"])
    print(f"| {label} | {sum(firsts)/len(firsts):.2f} | {r['correct_rate']:.2f} | {gm:.2f}x "
          f"| {r['tokens_prompt']} | {r['tokens_prompt']/max(r['attempts'],1):.0f} "
          f"| {hit}/{drafts} |")
PY
echo "stores, reports and the double's decision logs: $OUT" >&2
