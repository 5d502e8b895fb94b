#!/usr/bin/env bash
# Behaviour kept across refactors: a built-in run with a fixed seed on six
# tasks records, attempt for attempt, the verdict and the whole recipe
# chain that kevo recorded before the attempt pipeline was rebuilt
# (golden/builtin_seed7_verdicts.txt, written by de5606f with the same
# command; written again when issue 20 added unroll_jam, fuse, vectorize and
# register_block: the random draw among the applicable recipes then picks
# others: 8 of 18 attempts changed, all still correct; and again when loop
# recipes stopped declining on unroll hints: tile and omp_parallel then
# apply after `unroll`, 2 of 18 changed, both correct; and again when
# `unroll` got its `loop` parameter: the chains record `"loop":-1`, nothing
# else changed; and again when `stream` joined the registry: relu's two
# refine attempts draw it, both correct; its lane loop's omp simd then took
# unroll off the second one's draw: omp_simd, correct; and again when
# `flags` started declining the sets that change nothing on the C compile
# line (-O3 -march=native, -ffp-contract=fast, -mtune=native): the mutated
# set of two draws changed, 4 of 18 attempts, all still correct; and again
# when `scan` joined the registry: applicable to cumsum_rows, it moved the
# random draw there, 2 of 18 attempts, both still correct; and again when
# a nest shaper drawn after a vector or thread step went before it
# (kevo_builtin__place): reduce_sum_dim's second refine draws tile on the
# unrolled kernel, now chained tile then unroll, 1 of 18, still correct; and
# again when unroll_jam got its `tail` parameter: a mutation draws among
# three parameters, so three draws of unroll_jam took other values, 4 of 18
# attempts' chains changed (cumsum_rows, matmul_square: factor 4 with tail
# 1; softmax_rows: the same factor 16, the chains recording `"tail":0`), all
# still correct). The refinement
# strategy with random retrieval is used because its choices do not
# depend on measured latencies: every one is a function of the seed and of
# the verdicts, so a difference is a change of behaviour, not timing noise.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
S="$SRC/suites/c/level1"
"$KEVO" run "$S/001_relu" "$S/013_softmax_rows" "$S/015_matmul_square" "$S/025_layernorm_lastdim" \
  "$S/037_reduce_sum_dim" "$S/045_cumsum_rows" --db "$tmp/run.db" --strategy refine \
  --retrieval random --seed 7 --iterations 3 --quick --quiet > "$tmp/out.txt" 2>&1 ||
  { cat "$tmp/out.txt"; echo "1 failed: the run"; exit 1; }
/usr/bin/python3 - "$tmp/run.db" > "$tmp/now.txt" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("SELECT t.name, a.iteration, a.stage, a.verdict, coalesce(a.recipes, '-')"
                      " FROM attempts a JOIN tasks t ON t.id = a.task_id"
                      " ORDER BY t.name, a.iteration"):
    print(*row)
PY
if diff "$SRC/tests/integration/golden/builtin_seed7_verdicts.txt" "$tmp/now.txt" > "$tmp/diff.txt"; then
  echo "ok   $(wc -l < "$tmp/now.txt") attempts: the same verdicts and recipe chains as before"
  echo "1 passed, 0 failed"
else
  echo "FAIL the run differs from the recorded one (< before, > now):"
  cat "$tmp/diff.txt"
  echo "0 passed, 1 failed"
  exit 1
fi
