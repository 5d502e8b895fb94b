#!/usr/bin/env bash
# Value-driven recipe selection (epsilon-greedy over learned Q2) against
# uniform random selection, on the same tasks, budget and seed, each from
# a cold memory. Prints both geometric-mean speedups and their ratio, per
# seed, and the geometric mean of the ratios over the seeds (one seed is
# noisy: a single lucky -ffast-math on a transcendental kernel moves a
# 12-task geomean by 20%).
#   KEVO=build/kevo ITER=8 SEEDS="1 2 3" TASKS="dir dir..." bash bench/recipes_value_vs_random.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-8}
SEEDS=${SEEDS:-${SEED:-1}}
L1=suites/c/level1
TASKS=${TASKS:-"$L1/002_leaky_relu $L1/003_sigmoid $L1/012_swish $L1/015_matmul_square $L1/019_matvec
  $L1/021_matmul_trans_b $L1/028_rmsnorm_lastdim $L1/037_reduce_sum_dim $L1/045_cumsum_rows
  $L1/051_conv2d $L1/055_conv2d_pointwise $L1/057_mse_loss"}
out=$(mktemp -d)
for seed in $SEEDS; do
  for mode in value random; do
    echo "== seed $seed, retrieval $mode"
    # shellcheck disable=SC2086
    "$KEVO" run $TASKS --generator builtin --retrieval "$mode" --iterations "$ITER" --seed "$seed" \
      --quick --db "$out/$mode-$seed.db" --quiet
    "$KEVO" report --db "$out/$mode-$seed.db" --format json > "$out/$mode-$seed.json"
  done
done
python3 - "$out" $SEEDS <<'PY'
import json, math, sys
d, seeds = sys.argv[1], sys.argv[2:]
logs = []
for s in seeds:
    v = json.load(open(f"{d}/value-{s}.json")); r = json.load(open(f"{d}/random-{s}.json"))
    print(f"seed {s}: tasks {v['tasks']}, iterations {v['config']['iterations']}")
    for name, m in (("value", v), ("random", r)):
        print(f"  {name:7s} geomean {m['geomean_speedup']:.3f}x  fast_1 {m['fast_1']:.2f}  "
              f"reaching 1.1x {m['share_reaching_1_1x']:.2f}  "
              f"iters to 1.1x {m['mean_iterations_to_first_speedup']:.2f}")
    ratio = v['geomean_speedup'] / r['geomean_speedup']
    logs.append(math.log(ratio))
    print(f"  ratio value/random geomean: {ratio:.3f}")
print(f"over {len(seeds)} seed(s): geometric mean of the ratios {math.exp(sum(logs) / len(logs)):.3f}")
PY
echo "stores kept in $out"
