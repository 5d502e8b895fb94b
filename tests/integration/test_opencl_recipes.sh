#!/usr/bin/env bash
# tests/integration/test_opencl_recipes.sh - the built-in generator on the
# OpenCL backend: the port of the reference and every OpenCL recipe (and
# chains of them, local-memory tiling of the GEMMs included) produce candidates that pass the compile and correctness
# gates under PoCL, on an elementwise task, a row-wise task and a fused
# three-nest GEMM; then `kevo run --backend opencl --generator builtin`
# completes with a correct kernel for each task.
# Skipped (77) where no OpenCL platform works.
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
KEVO_BUILD=${KEVO_BUILD:-$KEVO_SRC/build}
APPLY=$KEVO_BUILD/tests/recipe_apply
[ -x "$APPLY" ] || APPLY=$KEVO_BUILD/recipe_apply
[ -x "$APPLY" ] || { echo "recipe_apply helper not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
L1=$KEVO_SRC/suites/c/level1
L2=$KEVO_SRC/suites/c/level2

verdict() { python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["verdict"])
except Exception: print("none")' "$1"; }

# platform probe
"$APPLY" "$L1/001_relu/reference.c" relu port-opencl >"$tmp/probe.cl" || exit 1
"$KEVO" eval --backend opencl --json --no-latency "$L1/001_relu" "$tmp/probe.cl" >"$tmp/probe.json" 2>/dev/null
if [ "$(verdict "$tmp/probe.json")" = infra_error ] && grep -q "OpenCL" "$tmp/probe.json"; then
    echo "SKIP: no usable OpenCL platform here"; exit 77
fi

pass=0 fail=0
case_ok() { # name task_dir kernel steps...
    local name=$1 task=$2 kernel=$3; shift 3
    if ! "$APPLY" "$task/reference.c" "$kernel" port-opencl "$@" >"$tmp/$name.cl" 2>"$tmp/$name.err"; then
        echo "FAIL $name: recipe declined: $(cat "$tmp/$name.err")"; fail=$((fail + 1)); return
    fi
    "$KEVO" eval --backend opencl --json --no-latency "$task" "$tmp/$name.cl" >"$tmp/$name.json" 2>/dev/null
    local v; v=$(verdict "$tmp/$name.json")
    if [ "$v" = correct ]; then pass=$((pass + 1)); echo "ok   $name"
    else fail=$((fail + 1)); echo "FAIL $name: $v"; head -c 600 "$tmp/$name.json"; echo; fi
}
declines() { # name task_dir kernel steps... (the last step must decline)
    local name=$1 task=$2 kernel=$3; shift 3
    if "$APPLY" "$task/reference.c" "$kernel" port-opencl "$@" >/dev/null 2>"$tmp/$name.err"; then
        echo "FAIL $name: applied where it should decline"; fail=$((fail + 1))
    else pass=$((pass + 1)); echo "ok   $name (declined: $(head -c 160 "$tmp/$name.err"))"; fi
}

case_ok relu_port            "$L1/001_relu" relu
case_ok relu_ndrange         "$L1/001_relu" relu ocl_ndrange
case_ok relu_wg              "$L1/001_relu" relu ocl_ndrange ocl_work_group:32
case_ok relu_coarsen         "$L1/001_relu" relu ocl_ndrange ocl_coarsen:4,0
case_ok relu_coarsen_strided "$L1/001_relu" relu ocl_ndrange ocl_coarsen:8,1 ocl_work_group:256
case_ok softmax_ndrange      "$L1/013_softmax_rows" softmax_rows ocl_ndrange ocl_work_group:16
case_ok gemm3_ndrange2       "$L2/011_gemm_swish_scale" fused_gemm_swish_scale ocl_ndrange:2
case_ok gemm3_all            "$L2/011_gemm_swish_scale" fused_gemm_swish_scale ocl_ndrange:2 ocl_work_group:64,2 ocl_coarsen:2,1
case_ok matvec_rows_ndrange  "$L1/019_matvec" matvec ocl_ndrange ocl_coarsen:2,0
case_ok gemm3_local_tile     "$L2/011_gemm_swish_scale" fused_gemm_swish_scale ocl_ndrange:2 ocl_local_tile:16
case_ok gemm_res_local_tile8 "$L2/003_gemm_scale_residual" fused_gemm_scale_residual ocl_ndrange:2 ocl_local_tile:8 ocl_coarsen:4,1
declines relu_local_tile_1d  "$L1/001_relu" relu ocl_ndrange ocl_local_tile
declines frobenius_reduction "$L1/030_frobenius_norm" frobenius_norm ocl_ndrange
declines relu_twice          "$L1/001_relu" relu ocl_ndrange ocl_ndrange
declines relu_c_recipe       "$L1/001_relu" relu omp_parallel
declines relu_coarsen_serial "$L1/001_relu" relu ocl_coarsen

# the whole loop, offline
"$KEVO" run "$L1/001_relu" "$L2/011_gemm_swish_scale" --backend opencl --generator builtin \
    --iterations 4 --quick --db "$tmp/run.db" --quiet >"$tmp/run.out" 2>&1 || {
    echo "FAIL kevo run: $(tail -5 "$tmp/run.out")"; exit 1; }
"$KEVO" report --db "$tmp/run.db" --format json >"$tmp/report.json" || exit 1
if python3 - "$tmp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["tasks"] == 2 and r["correct_rate"] == 1.0
print("run: tasks", r["tasks"], "correct_rate", r["correct_rate"])
sys.exit(0 if ok else 1)
PY
then pass=$((pass + 1)); echo "ok   kevo run --backend opencl --generator builtin"
else fail=$((fail + 1)); echo "FAIL kevo run: $(cat "$tmp/report.json" | head -c 400)"; fi

echo "opencl recipes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
