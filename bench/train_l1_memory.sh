#!/usr/bin/env bash
# The training half of the built-in generator's benchmarks: a value-driven
# run on the odd-numbered Level 1 tasks (every category, since the suite is
# ordered by category), ITER_TRAIN attempts each, seed 1, its memory
# exported to DIR/train.jsonl. Prints that path on stdout (progress on
# stderr). Used by bench/recipes_value_vs_random.sh (tested on the
# even-numbered tasks) and bench/transfer_l1_l2.sh (tested on Level 2).
#   KEVO=build/kevo ITER_TRAIN=6 bash bench/train_l1_memory.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER_TRAIN=${ITER_TRAIN:-6}
dir=${1:?usage: train_l1_memory.sh DIR}
TRAIN_TASKS=$(ls -d suites/c/level1/*/ | awk 'NR % 2 == 1')
echo "== training: value-driven, $(echo $TRAIN_TASKS | wc -w) Level 1 tasks, $ITER_TRAIN attempts each" >&2
# shellcheck disable=SC2086
"$KEVO" run $TRAIN_TASKS --generator builtin --retrieval value --iterations "$ITER_TRAIN" \
  --seed 1 --quick --db "$dir/train.db" --quiet >&2
"$KEVO" memory --db "$dir/train.db" export "$dir/train.jsonl" >&2
echo "$dir/train.jsonl"
