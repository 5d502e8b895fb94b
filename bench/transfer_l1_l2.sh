#!/usr/bin/env bash
# The papers' L1 -> L2 transfer experiment with the built-in generator: a
# Level 1 run's memory is exported and imported into a Level 2 run, against
# a cold Level 2 run with the same budget and seed. Compares the final
# geometric mean, the anytime curve and the attempts to the same speedup
# (bench/compare_runs.py).
# The Level 1 run learns on the odd-numbered Level 1 tasks
# (bench/train_l1_memory.sh, the same training half as
# bench/recipes_value_vs_random.sh, whose exported memory TRAIN_MEMORY=FILE
# reuses); Level 2 runs its first L2_TASKS tasks.
#   KEVO=build/kevo ITER=6 ITER_TRAIN=6 L2_TASKS=12 SEED=1 bash bench/transfer_l1_l2.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-6}
ITER_TRAIN=${ITER_TRAIN:-6}
SEED=${SEED:-1}
out=$(mktemp -d)
memory=${TRAIN_MEMORY:-$(KEVO=$KEVO ITER_TRAIN=$ITER_TRAIN bash bench/train_l1_memory.sh "$out")}
echo "== Level 2, cold"
"$KEVO" run suites/c/level2 --max-tasks "${L2_TASKS:-12}" --generator builtin --iterations "$ITER" \
  --seed "$SEED" --quick --db "$out/cold.db" --quiet
echo "== Level 2, warm (memory from Level 1)"
"$KEVO" run suites/c/level2 --max-tasks "${L2_TASKS:-12}" --generator builtin --iterations "$ITER" \
  --seed "$SEED" --quick --db "$out/warm.db" --memory-from "$memory" --quiet
python3 bench/compare_runs.py warm="$out/warm.db" cold="$out/cold.db"
echo "stores kept in $out"
