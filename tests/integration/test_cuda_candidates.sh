#!/usr/bin/env bash
# tests/integration/test_cuda_candidates.sh - judges the example CUDA
# candidates tests/candidates_cuda/<task>/candidate.cu with `kevo eval
# --backend cuda --quick`. With a GPU every one must be `correct`. Without
# one (no driver or no device) the anti-hack and compile gates still run and
# every verdict must be `infra_error` saying "no CUDA device" with the
# compile gate passed; the GPU part is reported as skipped. Skipped entirely
# (exit 77) without nvcc at /usr/local/cuda/bin/nvcc.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root), PYTHON.
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
PY=${PYTHON:-python3}
[ -x "$KEVO" ] || { echo "test_cuda_candidates: KEVO=$KEVO is not an executable" >&2; exit 2; }
[ -x /usr/local/cuda/bin/nvcc ] || { echo "SKIP: no CUDA toolkit (/usr/local/cuda/bin/nvcc)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 gpu=unknown
for cand in "$KEVO_SRC"/tests/candidates_cuda/*/candidate.cu; do
    task=$(basename "$(dirname "$cand")")
    dir=$KEVO_SRC/suites/c/level1/$task
    [ -d "$dir" ] || dir=$KEVO_SRC/suites/c/level2/$task
    "$KEVO" eval --backend cuda --json --quick "$dir" "$cand" >"$tmp/out.json" 2>"$tmp/err"
    line=$("$PY" - "$tmp/out.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    print("none|0|kevo printed no JSON"); sys.exit()
compiled = any(g["name"] == "compile" and g["ok"] for g in d["gates"])
print("%s|%d|%s" % (d["verdict"], compiled, d["feedback"].replace("\n", " ")[:300]))
PY
)
    verdict=${line%%|*}; rest=${line#*|}; compiled=${rest%%|*}; feedback=${rest#*|}
    if [ "$verdict" = correct ]; then
        gpu=yes; pass=$((pass + 1)); echo "ok   $task: correct"
    elif [ "$verdict" = infra_error ] && [ "$compiled" = 1 ] && grep -q "no CUDA device" <<<"$feedback"; then
        gpu=no; pass=$((pass + 1)); echo "ok   $task: compiled; not run: no CUDA device"
    else
        fail=$((fail + 1)); echo "FAIL $task: $verdict: $feedback"
        head -c 400 "$tmp/err"
    fi
done
[ "$gpu" = no ] && echo "SKIP (GPU part): no CUDA device here; bench/cuda_device_check.sh runs it on a GPU"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
