#!/usr/bin/env bash
# Which start-point score refines better on the same budget: the paper's Q2
# (`--start-score q2`) or kevo's Q2 + log(speedup / best) (`q2-latency`).
# Both sides run the built-in generator on the same tasks, seeds and
# iterations, from an empty memory, the two runs of a seed one after the
# other on one machine; bench/compare_runs.py prints per seed the geometric
# mean of each task's best speedup (a task without a correct kernel counts
# 1.0x), the anytime curve and the attempts each side needs to the same
# speedup; at the end the geometric mean of the q2/q2-latency ratios.
#   KEVO=build/kevo ITER=10 SEEDS="1 2" bash bench/start_score.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KEVO=${KEVO:-build/kevo}
ITER=${ITER:-10}
SEEDS=${SEEDS:-1}
TASKS=${TASKS:-"suites/c/level1/015_matmul_square suites/c/level1/013_softmax_rows
  suites/c/level1/025_layernorm_lastdim suites/c/level1/051_conv2d suites/c/level1/044_logsumexp_dim
  suites/c/level1/019_matvec"}
out=$(mktemp -d)
chmod 755 "$out"
for seed in $SEEDS; do
  for score in q2 q2-latency; do
    echo "== seed $seed, --start-score $score, $(echo $TASKS | wc -w) tasks, $ITER attempts each"
    # shellcheck disable=SC2086
    "$KEVO" run $TASKS --generator builtin --start-score "$score" --iterations "$ITER" \
      --seed "$seed" --quick --db "$out/$score-$seed.db" --quiet
  done
  python3 bench/compare_runs.py "q2=$out/q2-$seed.db" "q2-latency=$out/q2-latency-$seed.db" |
    tee "$out/compare-$seed.txt"
done
python3 - "$out" $SEEDS <<'PY'
import math, re, sys
d, seeds = sys.argv[1], sys.argv[2:]
logs = []
for s in seeds:
    m = re.search(r"ratio q2/q2-latency: ([0-9.]+)", open(f"{d}/compare-{s}.txt").read())
    logs.append(math.log(float(m.group(1))))
print(f"over {len(seeds)} seed(s): geometric mean of the q2/q2-latency ratios "
      f"{math.exp(sum(logs) / len(logs)):.3f} (above 1: the paper's Q2 refines better)")
PY
echo "stores kept in $out"
