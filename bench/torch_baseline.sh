#!/usr/bin/env bash
# kevo's best kernels against two baselines, side by side, in one run: the
# task's single-threaded C reference (what kevo's C suites measure against)
# and PyTorch eager on the same cores (what KernelBench, EvoKernel and a
# PyTorch user measure against).
#
#   bench/torch_baseline.sh KERNELBENCH_DIR [BUILD_DIR] [OUT_DIR]
#
# KERNELBENCH_DIR: a checkout of ScalingIntelligence/KernelBench (its
# KernelBench/ folder, holding level1/ and level2/). Needs the torch venv
# (scripts/setup.sh --with-torch). For each C task of TASKS (suites/c paths;
# each names its KernelBench problem in task.json):
#   1. kevo run on the C task (built-in generator, ITER attempts, --quick
#      search): its best correct kernel;
#   2. kevo tasks import of the KernelBench problem it translates (--scale
#      auto: one forward 5..200 ms here): the torch task;
#   3. kevo tasks adapt of the C reference and of the best kernel to the
#      torch task's prototype, then kevo eval of both on the torch task (full
#      latency gate, interleaved with PyTorch eager, same inputs, same sizes).
# SEARCH_ON_PROBLEM=1: also search on each imported problem itself (`kevo
# run` on it: its linked C draft, its sizes, PyTorch eager the baseline of
# every attempt, ITER attempts) and print that table and its geomean: issue
# 20's Level 2 measure.
# MEMORY_FROM=FILE: each run starts from that exported memory (`kevo memory
# export`, e.g. of a Level 1 run), as `kevo run --memory-from`; else from an
# empty one.
# Columns: the best kernel over PyTorch eager; the best kernel over the C
# reference at the same sizes (= the ratio of the two evals: C ref time /
# best time, both timed against the same torch baseline); the C reference
# over PyTorch eager (how far kevo's old baseline is from PyTorch); and the
# speedup kevo's run reported on the C task at its own sizes.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
KB=${1:?usage: bench/torch_baseline.sh KERNELBENCH_DIR [BUILD_DIR] [OUT_DIR]}
BUILD=${2:-$SRC/build}
OUT=${3:-$(mktemp -d /tmp/kevo-torch-baseline.XXXXXX)}
KEVO=$BUILD/kevo
ITER=${ITER:-6}
TASKS=${TASKS:-"level1/001_relu level1/013_softmax_rows level1/015_matmul_square level1/019_matvec
  level1/025_layernorm_lastdim level1/037_reduce_sum_dim level1/045_cumsum_rows level1/051_conv2d
  level2/002_gemm_sigmoid_sum level2/011_gemm_swish_scale"}
[ -x "$KEVO" ] || { echo "build first: $KEVO" >&2; exit 2; }
[ -d "$KB/level1" ] || { echo "$KB: no level1/ (give the KernelBench/ folder of a checkout)" >&2; exit 2; }
mkdir -p "$OUT"
chmod 755 "$OUT"
rows=()
for t in $TASKS; do
  c="$SRC/suites/c/$t"
  kb=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('kernelbench') or '')" "$c/task.json")
  [ -n "$kb" ] || { echo "$t: names no KernelBench problem, skipped" >&2; continue; }
  name=$(basename "$t")
  w="$OUT/$name"; rm -rf "$w"; mkdir -p "$w"; chmod 755 "$w"
  echo "== $t ($kb)" >&2
  "$KEVO" run "$c" --iterations "$ITER" --quick --quiet --db "$w/run.db" \
    ${MEMORY_FROM:+--memory-from "$MEMORY_FROM"} > "$w/run.txt" 2>&1
  python3 - "$w/run.db" "$w/best.c" "$c/task.json" > "$w/run_speedup" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
task = json.load(open(sys.argv[3]))["name"]  # an imported memory holds other tasks' attempts
src, sp = db.execute("SELECT a.source, a.speedup FROM attempts a JOIN tasks t ON t.id = a.task_id "
                     "WHERE a.verdict = 'correct' AND t.name = ? "
                     "ORDER BY a.speedup DESC, a.id LIMIT 1", (task,)).fetchone()
open(sys.argv[2], "w").write(src)
print(sp)
PY
  "$KEVO" tasks import kernelbench "$KB/$kb" --out "$w/torch" --scale auto > "$w/import.txt" 2>&1 \
    || { cat "$w/import.txt" >&2; echo "$t: import failed, skipped" >&2; continue; }
  tt=$(find "$w/torch" -name task.json -printf '%h\n' | head -1)
  "$KEVO" tasks adapt "$c/reference.c" --from "$c" --to "$tt" -o "$w/cref_torch.c"
  "$KEVO" tasks adapt "$w/best.c" --from "$c" --to "$tt" -o "$w/best_torch.c"
  "$KEVO" eval "$tt" "$w/cref_torch.c" --json > "$w/cref.json" 2>&1 || true
  "$KEVO" eval "$tt" "$w/best_torch.c" --json > "$w/best.json" 2>&1 || true
  if [ -n "${SEARCH_ON_PROBLEM:-}" ]; then
    # the search on the imported problem itself (its linked C draft, at its
    # sizes, PyTorch eager the baseline of every attempt)
    "$KEVO" run "$tt" --iterations "$ITER" --quick --quiet --db "$w/problem.db" \
      ${MEMORY_FROM:+--memory-from "$MEMORY_FROM"} > "$w/problem.txt" 2>&1 || true
    python3 - "$w/problem.db" "$tt/task.json" > "$w/problem_speedup" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
task = json.load(open(sys.argv[2]))["name"]
row = db.execute("SELECT MAX(a.speedup) FROM attempts a JOIN tasks t ON t.id = a.task_id "
                 "WHERE a.verdict = 'correct' AND t.name = ? AND a.baseline = 'torch-eager-cpu'",
                 (task,)).fetchone()
print(row[0] if row and row[0] else "")
PY
  fi
  rows+=("$t|$kb|$w")
done
python3 - "${rows[@]}" <<'PY'
import json, math, sys
on_problem = []
print("| C task | KernelBench problem | torch task sizes | best over PyTorch eager | best over C reference (same sizes) | C reference over PyTorch eager | kevo run (C task, own sizes) |")
print("|---|---|---|---|---|---|---|")
for row in sys.argv[1:]:
    t, kb, w = row.split("|")
    def load(n):
        try:
            return json.load(open(f"{w}/{n}.json"))
        except Exception:
            return {}
    b, r = load("best"), load("cref")
    lb, lr = b.get("latency") or {}, r.get("latency") or {}
    import glob
    tj = glob.glob(f"{w}/torch/*/*/task.json")
    sizes = json.load(open(tj[0]))["sizes"] if tj else {}
    run = open(f"{w}/run_speedup").read().strip()
    if b.get("verdict") != "correct" or r.get("verdict") != "correct":
        print(f"| {t} | {kb} | {sizes} | best: {b.get('verdict')} | | C ref: {r.get('verdict')} | {float(run):.2f}x |")
        continue
    sb, sr = lb["speedup"], lr["speedup"]
    assert lb["baseline"] == lr["baseline"] == "torch-eager-cpu"
    print(f"| {t} | {kb} | {sizes} | {sb:.2f}x | {sb / sr:.2f}x | {sr:.2f}x | {float(run):.2f}x |")
for row in sys.argv[1:]:
    t, kb, w = row.split("|")
    try:
        v = open(f"{w}/problem_speedup").read().strip()
    except OSError:
        continue
    on_problem.append((t, float(v) if v else None))
if on_problem:
    print()
    print("| C task | searched on the problem itself: best over PyTorch eager |")
    print("|---|---|")
    for t, v in on_problem:
        print(f"| {t} | {v:.2f}x |" if v else f"| {t} | no correct kernel |")
    got = [v for _, v in on_problem if v]
    if got:
        g = math.exp(sum(math.log(v) for v in got) / len(got))
        print(f"\ngeomean over PyTorch eager, searched on the problems: {g:.2f}x "
              f"({len(got)} of {len(on_problem)} with a correct kernel)")
PY
echo "work folder: $OUT" >&2
