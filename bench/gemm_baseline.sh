#!/usr/bin/env bash
# kevo's best GEMM kernels against OpenBLAS (cblas_sgemm) and the task's
# single-threaded C reference, side by side, in one process per shape
# (bench/gemm_baseline.c: same inputs, alternating calls, medians, warm-up,
# the same thread count for the kernel and OpenBLAS, outputs cross-checked
# against OpenBLAS). That process is a child the bench starts inside kevo's
# sandbox (untrusted: its own uid, no network, no process creation, no
# writes outside its work folder, none of this script's environment but the
# thread and wait-policy variables), so the kernels of a `kevo run` never
# run unsandboxed here; a shape whose child is killed (a forbidden call, a
# crash, its --timeout) is reported on stderr and makes the exit status 1.
# PyTorch eager is bench/torch_baseline.sh's business.
#
#   bench/gemm_baseline.sh [BUILD_DIR] [OUT_DIR]
#
# 1. Unless KERNELS names a folder written by `kevo best --out`: kevo run
#    on the GEMM tasks (built-in generator, ITER attempts each, --quick
#    latency gate), then kevo best --out OUT_DIR/best.
# 2. bench_gemm_baseline on each shape: matmul_square at its task size, the
#    two non-square, non-multiple-of-16 shapes of issue 20 (matmul_rect at
#    M=1000,N=777,K=1023; matmul_trans_b at M=333,N=1021,K=517), then (unless
#    SHAPES=acceptance) every GEMM task at its own size.
# 3. A markdown table of the JSON lines (OUT_DIR/*.json).
#
# Environment: THREADS (default: all cores, as kevo's latency gate), ITER
# (default 30), RUN_ARGS (more `kevo run` options, e.g. `--seed 2`),
# KERNELS (skip step 1), SHAPES (all | acceptance), ROUNDS
# (default 21), SEARCH_AT (task: the run searches at each task's own
# sizes, the default; shape: at the shape the kernel is then measured at,
# on copies of the tasks with those sizes, as a user with that shape would
# run kevo; needs SHAPES=acceptance), OMP_WAIT_POLICY / OPENBLAS_THREAD_TIMEOUT (the bench's
# defaults PASSIVE / 4 keep idle pool threads off the cores the other
# contender computes on; set them to measure otherwise).
# Installs nothing: without libopenblas it prints the apt-get line and
# exits 2. Exit status: 0 all shapes measured and cross-checked; 1 an
# output disagreed with OpenBLAS or a shape could not be measured.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
OUT=${2:-$(mktemp -d /tmp/kevo-gemm-baseline.XXXXXX)}
KEVO=$BUILD/kevo
BENCH=$BUILD/bench_gemm_baseline
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
ITER=${ITER:-30}
SHAPES=${SHAPES:-all}
ROUNDS=${ROUNDS:-21}
L1=$SRC/suites/c/level1
[ -x "$BENCH" ] || { echo "build first: $BENCH (cmake --build $BUILD)" >&2; exit 2; }
if ! python3 -c "import ctypes; ctypes.CDLL('libopenblas.so.0')" 2>/dev/null; then
  echo "libopenblas.so.0 not found: install Debian's OpenBLAS (runtime only is enough):" >&2
  echo "  apt-get install -y libopenblas0-pthread    # or libopenblas-dev" >&2
  exit 2
fi
case $SHAPES in all | acceptance) ;; *) echo "SHAPES: all or acceptance, got $SHAPES" >&2; exit 2 ;; esac
SEARCH_AT=${SEARCH_AT:-task}
case $SEARCH_AT in
  task) ;;
  shape) [ "$SHAPES" = acceptance ] || { echo "SEARCH_AT=shape needs SHAPES=acceptance (one shape per task)" >&2; exit 2; } ;;
  *) echo "SEARCH_AT: task or shape, got $SEARCH_AT" >&2; exit 2 ;;
esac
# task folder | size overrides
cases=("015_matmul_square|" "016_matmul_rect|M=1000 N=777 K=1023" "021_matmul_trans_b|M=333 N=1021 K=517")
if [ "$SHAPES" = all ]; then
  cases+=("016_matmul_rect|" "017_matmul_tall_skinny|" "018_matmul_batched|" "020_matmul_trans_a|"
    "021_matmul_trans_b|" "023_matmul_3d_tensor|")
fi
mkdir -p "$OUT"
chmod 755 "$OUT"
rm -f "$OUT"/[0-9][0-9]_*.json "$OUT"/[0-9][0-9]_*.err # a rerun's table is its own
if [ -z "${KERNELS:-}" ]; then
  [ -x "$KEVO" ] || { echo "build first: $KEVO" >&2; exit 2; }
  dirs=()
  for c in "${cases[@]}"; do
    d="$L1/${c%%|*}"
    if [ "$SEARCH_AT" = shape ]; then
      # the task as a user with this shape would write it: its sizes are
      # the shape the kernel is measured at below (a copy; the suite is
      # untouched)
      sz=${c#*|}
      mkdir -p "$OUT/tasks"
      rm -rf "$OUT/tasks/${c%%|*}"
      cp -r "$d" "$OUT/tasks/${c%%|*}"
      d="$OUT/tasks/${c%%|*}"
      python3 - "$d/task.json" $sz <<'PY'
import json, sys
path = sys.argv[1]
t = json.load(open(path))
for kv in sys.argv[2:]:
    k, v = kv.split("=")
    t["sizes"][k] = int(v)
json.dump(t, open(path, "w"), indent=2)
PY
    fi
    case " ${dirs[*]-} " in *" $d "*) ;; *) dirs+=("$d") ;; esac
  done
  echo "== kevo run: ${#dirs[@]} GEMM tasks, $ITER attempts each, --quick (log: $OUT/run.txt)" >&2
  # shellcheck disable=SC2086 # RUN_ARGS: options, split on spaces
  "$KEVO" run "${dirs[@]}" --iterations "$ITER" --quick --quiet --db "$OUT/run.db" ${RUN_ARGS:-} \
    > "$OUT/run.txt" 2>&1 \
    || { tail -20 "$OUT/run.txt" >&2; echo "kevo run failed (log: $OUT/run.txt)" >&2; exit 1; }
  "$KEVO" best --db "$OUT/run.db" --out "$OUT/best" >&2 || true # exit 1: no kernel (per shape below)
  KERNELS=$OUT/best
fi
status=0
i=0
for c in "${cases[@]}"; do
  t=${c%%|*}
  sizes=${c#*|}
  name=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['name'])" "$L1/$t/task.json")
  i=$((i + 1))
  j=$(printf '%s/%02d_%s.json' "$OUT" "$i" "$name")
  if [ ! -f "$KERNELS/$name.c" ]; then
    echo "$t: no kernel $KERNELS/$name.c (no correct kernel in the run?), skipped" >&2
    status=1
    continue
  fi
  args=()
  for s in $sizes; do args+=(--size "$s"); done
  echo "== $t ${sizes:-(task sizes)}, $THREADS threads" >&2
  rc=0
  "$BENCH" "$L1/$t" "$KERNELS/$name.c" "${args[@]}" --threads "$THREADS" --rounds "$ROUNDS" \
    --json > "$j" 2> "${j%.json}.err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "${j%.json}.err" >&2
    status=1
    [ "$rc" -eq 1 ] || rm -f "$j"
  fi
done
python3 - "$OUT" <<'PY'
import glob, json, sys
rows = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/[0-9][0-9]_*.json"))]
if rows:
    r = rows[0]
    print(f"{r['date']}; OpenBLAS: {r['openblas']}; OMP_WAIT_POLICY={r['omp_wait_policy']} "
          f"OPENBLAS_THREAD_TIMEOUT={r['openblas_thread_timeout']}; {r['rounds']} rounds; "
          "GFLOP/s at the median call\n")
print("| task | sizes | threads (kevo / OpenBLAS / ref) | kevo GFLOP/s | OpenBLAS GFLOP/s "
      "| reference GFLOP/s | kevo / OpenBLAS | kevo / reference | max rel err kevo, ref | check "
      "| load (1 min) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
def err(c):  # null: a NaN/inf or an element never written
    return "inf" if c["max_rel_err"] is None else f"{c['max_rel_err']:.1e}"
for r in rows:
    c = r["contenders"]
    sz = ",".join(f"{k}={v}" for k, v in r["sizes"].items())
    print(f"| {r['task']} | {sz} | {r['kernel_threads']} / {r['threads']} / 1 "
          f"| {c['kernel']['gflops']:.1f} | {c['openblas']['gflops']:.1f} "
          f"| {c['reference']['gflops']:.1f} | {r['kernel_over_openblas']:.2f}x "
          f"| {r['kernel_over_reference']:.2f}x "
          f"| {err(c['kernel'])}, {err(c['reference'])} "
          f"| {r['cross_check']} | {r['loadavg_before'][0]:.1f} |")
PY
echo "work folder: $OUT" >&2
exit $status
