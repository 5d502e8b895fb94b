#!/usr/bin/env bash
# The papers' L1 -> L2 transfer experiment with the built-in generator: a
# Level 1 run's memory is exported and imported into a Level 2 run, against
# a cold Level 2 run with the same budget and seed. Compares iterations to
# the first >= 1.1x kernel and the final geometric-mean speedup.
# The Level 1 run learns on every L1_STRIDE-th task (all categories, since
# the suite is ordered by category); Level 2 runs its first L2_TASKS tasks.
#   KEVO=build/kevo ITER=6 L1_STRIDE=3 L2_TASKS=10 SEED=1 bash bench/transfer_l1_l2.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-6}
SEED=${SEED:-1}
L1_TASKS=$(ls -d suites/c/level1/*/ | awk -v s="${L1_STRIDE:-3}" 'NR % s == 1')
out=$(mktemp -d)
echo "== Level 1 run (learning)"
# shellcheck disable=SC2086
"$KEVO" run $L1_TASKS --generator builtin --iterations "$ITER" --seed "$SEED" \
  --quick --db "$out/l1.db" --quiet
"$KEVO" memory --db "$out/l1.db" export "$out/l1.jsonl"
echo "== Level 2, cold"
"$KEVO" run suites/c/level2 --max-tasks "${L2_TASKS:-10}" --generator builtin --iterations "$ITER" \
  --seed "$SEED" --quick --db "$out/cold.db" --quiet
echo "== Level 2, warm (memory from Level 1)"
"$KEVO" run suites/c/level2 --max-tasks "${L2_TASKS:-10}" --generator builtin --iterations "$ITER" \
  --seed "$SEED" --quick --db "$out/warm.db" --memory-from "$out/l1.jsonl" --quiet
"$KEVO" report --db "$out/cold.db" --format json > "$out/cold.json"
"$KEVO" report --db "$out/warm.db" --format json > "$out/warm.json"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/cold.json")); w = json.load(open(d + "/warm.json"))
for name, m in (("cold", c), ("warm", w)):
    print(f"{name:5s} geomean {m['geomean_speedup']:.3f}x  reaching 1.1x {m['share_reaching_1_1x']:.2f}  "
          f"iterations to first 1.1x {m['mean_iterations_to_first_speedup']:.2f}")
PY
echo "stores kept in $out"
