#!/usr/bin/env bash
# kevo run on imported KernelBench problems, both generators:
#   1. kevo tasks import kernelbench (--scale auto) of PROBLEMS, then
#      kevo tasks link (each gets the C reference of the kevo C task
#      translating it as draft.c, kept only when correct against PyTorch);
#   2. kevo run with the built-in generator (ITER attempts per task, --quick
#      timing: this shows the pipeline; bench/torch_baseline.sh measures);
#   3. kevo run against the fake OpenAI server (tests/helpers/fake_llm_server),
#      scripted to answer each task's draft prompt with that task's linked
#      draft.c: the prompts carry the PyTorch source (checked), the answers
#      go through every gate; a test double for the LLM, not a model;
#   4. kevo report of both: speedups over torch-eager-cpu.
#
#   bench/kernelbench_run.sh KERNELBENCH_DIR [BUILD_DIR] [OUT_DIR]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
KB=${1:?usage: bench/kernelbench_run.sh KERNELBENCH_DIR [BUILD_DIR] [OUT_DIR]}
BUILD=${2:-$SRC/build}
OUT=${3:-$(mktemp -d /tmp/kevo-kernelbench-run.XXXXXX)}
KEVO=$BUILD/kevo
SERVER=$BUILD/tests/fake_llm_server
ITER=${ITER:-4}
PROBLEMS=${PROBLEMS:-"level1/19_ReLU.py level1/23_Softmax.py level1/1_Square_matrix_multiplication_.py
  level1/4_Matrix_vector_multiplication_.py level1/40_LayerNorm.py level1/47_Sum_reduction_over_a_dimension.py
  level1/89_cumsum.py level1/33_BatchNorm.py level2/56_Matmul_Sigmoid_Sum.py level2/59_Matmul_Swish_Scaling.py"}
[ -x "$KEVO" ] && [ -x "$SERVER" ] || { echo "build first: $KEVO, $SERVER" >&2; exit 2; }
mkdir -p "$OUT/problems/level1" "$OUT/problems/level2"
chmod -R 755 "$OUT"
for p in $PROBLEMS; do cp "$KB/$p" "$OUT/problems/$p"; done
spid=
cleanup() { [ -n "$spid" ] && kill "$spid" 2>/dev/null || true; }
trap cleanup EXIT
t0=$SECONDS
rm -rf "$OUT/tasks"
"$KEVO" tasks import kernelbench "$OUT/problems/level1" "$OUT/problems/level2" --out "$OUT/tasks" \
  --scale auto | tee "$OUT/import.txt" >&2 || true
"$KEVO" tasks link "$OUT/tasks" | tee "$OUT/link.txt" >&2 || true
echo "import + link: $((SECONDS - t0)) s" >&2

t0=$SECONDS
rm -f "$OUT/builtin.db"
"$KEVO" run "$OUT/tasks" --iterations "$ITER" --quick --db "$OUT/builtin.db" | tee "$OUT/builtin.txt" >&2
echo "built-in run: $((SECONDS - t0)) s" >&2

# the fake server answers task i's draft prompt (tasks run sorted by path)
# with task i's linked draft, or a comment for a task without one
python3 - "$OUT/tasks" "$OUT/script.jsonl" <<'PY'
import json, os, sys
root, out = sys.argv[1], sys.argv[2]
dirs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f == "task.json")
with open(out, "w") as f:
    for tj in dirs:
        d = os.path.dirname(tj)
        draft = os.path.join(d, "draft.c")
        code = open(draft).read() if os.path.exists(draft) else "/* no draft */\n"
        f.write(json.dumps({"content": "```c\n" + code + "```",
                            "usage": {"prompt_tokens": 1000, "completion_tokens": 300}}) + "\n")
PY
"$SERVER" --script "$OUT/script.jsonl" --log "$OUT/requests.jsonl" --lifetime 3600 > "$OUT/port" &
spid=$!
for _ in $(seq 1 50); do [ -s "$OUT/port" ] && break; sleep 0.1; done
t0=$SECONDS
rm -f "$OUT/llm.db"
KEVO_API_KEY=fake "$KEVO" run "$OUT/tasks" --generator openai --no-audit \
  --api-base "http://127.0.0.1:$(head -1 "$OUT/port")/v1" --model fake --iterations 1 --quick \
  --db "$OUT/llm.db" | tee "$OUT/llm.txt" >&2
echo "LLM (fake server) run: $((SECONDS - t0)) s" >&2
python3 - "$OUT/requests.jsonl" <<'PY'
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
fence = "`" * 3 + "python"
with_torch = sum(1 for r in reqs if any(fence in m["content"] and "class Model" in m["content"]
                                        for m in r["body"]["messages"]))
print(f"draft prompts carrying the PyTorch source: {with_torch} of {len(reqs)}")
PY
echo "== built-in"; "$KEVO" report --db "$OUT/builtin.db" | head -16
echo "== fake LLM server"; "$KEVO" report --db "$OUT/llm.db" | head -16
echo "work folder: $OUT" >&2
