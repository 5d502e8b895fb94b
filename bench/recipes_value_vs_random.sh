#!/usr/bin/env bash
# Value-driven recipe selection (epsilon-greedy over learned Q2) against
# uniform random selection, on the same tasks, budget and seed, each from
# a cold memory. Prints both geometric-mean speedups and their ratio.
#   KEVO=build/kevo ITER=8 SEED=1 TASKS="dir dir..." bash bench/recipes_value_vs_random.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-8}
SEED=${SEED:-1}
L1=suites/c/level1
TASKS=${TASKS:-"$L1/002_leaky_relu $L1/003_sigmoid $L1/012_swish $L1/015_matmul_square $L1/019_matvec
  $L1/021_matmul_trans_b $L1/028_rmsnorm_lastdim $L1/037_reduce_sum_dim $L1/045_cumsum_rows
  $L1/051_conv2d $L1/055_conv2d_pointwise $L1/057_mse_loss"}
out=$(mktemp -d)
for mode in value random; do
  echo "== retrieval $mode"
  "$KEVO" run $TASKS --generator builtin --retrieval "$mode" --iterations "$ITER" --seed "$SEED" \
    --quick --db "$out/$mode.db" --quiet
  "$KEVO" report --db "$out/$mode.db" --format json > "$out/$mode.json"
done
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
v = json.load(open(d + "/value.json")); r = json.load(open(d + "/random.json"))
print(f"tasks {v['tasks']}, iterations {v['config']['iterations']}")
for name, m in (("value", v), ("random", r)):
    print(f"{name:7s} geomean {m['geomean_speedup']:.3f}x  fast_1 {m['fast_1']:.2f}  "
          f"reaching 1.1x {m['share_reaching_1_1x']:.2f}  iters to 1.1x {m['mean_iterations_to_first_speedup']:.2f}")
print(f"ratio value/random geomean: {v['geomean_speedup'] / r['geomean_speedup']:.3f}")
PY
echo "stores kept in $out"
