#!/usr/bin/env bash
# Value-driven recipe selection (epsilon-greedy over learned Q2) against
# uniform random selection, on the same held-out tasks, budget and seed.
#
# What is compared is what a user gets: kevo's memory learns, so the
# value-driven side runs with the memory of an earlier Level 1 run on other
# tasks (the training half, bench/train_l1_memory.sh: odd-numbered tasks,
# ITER_TRAIN attempts each),
# and both sides then run on the other half (even-numbered tasks, ITER
# attempts each). Random choice ignores the memory whatever it holds.
# COLD=1 adds value-driven choice from an empty memory (learning only within
# the test run). TRAIN_MEMORY=FILE reuses an exported training memory
# instead of training (bench/transfer_l1_l2.sh accepts the same file).
#
# Prints, per seed, both final geometric means and their ratio, the anytime
# curve (geomean after k attempts) and the attempts each needs to the same
# speedup (bench/compare_runs.py), then the geometric mean of the ratios.
#   KEVO=build/kevo ITER=4 ITER_TRAIN=6 SEEDS="1 2" bash bench/recipes_value_vs_random.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-4}
ITER_TRAIN=${ITER_TRAIN:-6}
SEEDS=${SEEDS:-${SEED:-1}}
TEST_TASKS=${TASKS:-$(ls -d suites/c/level1/*/ | awk 'NR % 2 == 0')}
out=$(mktemp -d)
memory=${TRAIN_MEMORY:-$(KEVO=$KEVO ITER_TRAIN=$ITER_TRAIN bash bench/train_l1_memory.sh "$out")}
modes="value random"
[ "${COLD:-0}" = 1 ] && modes="$modes cold"
for seed in $SEEDS; do
  for mode in $modes; do
    echo "== seed $seed, $mode, $(echo $TEST_TASKS | wc -w) held-out tasks, $ITER attempts each"
    case $mode in
      value) extra=(--retrieval value --memory-from "$memory") ;;
      random) extra=(--retrieval random --memory-from "$memory") ;;
      cold) extra=(--retrieval value) ;;
    esac
    # shellcheck disable=SC2086
    "$KEVO" run $TEST_TASKS --generator builtin "${extra[@]}" --iterations "$ITER" --seed "$seed" \
      --quick --db "$out/$mode-$seed.db" --quiet
  done
  echo "== seed $seed"
  args=()
  for mode in $modes; do args+=("$mode=$out/$mode-$seed.db"); done
  python3 bench/compare_runs.py "${args[@]}" | tee "$out/compare-$seed.txt"
done
python3 - "$out" $SEEDS <<'PY'
import math, re, sys
d, seeds = sys.argv[1], sys.argv[2:]
logs = []
for s in seeds:
    m = re.search(r"ratio value/random: ([0-9.]+)", open(f"{d}/compare-{s}.txt").read())
    logs.append(math.log(float(m.group(1))))
print(f"over {len(seeds)} seed(s): geometric mean of the value/random ratios "
      f"{math.exp(sum(logs) / len(logs)):.3f}")
PY
echo "stores and the training memory kept in $out"
