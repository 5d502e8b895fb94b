#!/usr/bin/env bash
# The main job, offline: installs and builds kevo, runs the built-in
# generator on a small subset of the Level 1 suite with a short budget, and
# prints the report. Results go to demo.db (delete it to start afresh; run
# the script again to add another run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
TASKS="suites/c/level1/001_relu suites/c/level1/013_softmax_rows suites/c/level1/015_matmul_square
       suites/c/level1/019_matvec suites/c/level1/037_reduce_sum_dim suites/c/level1/051_conv2d"
./build/kevo run $TASKS --generator builtin --iterations "${ITERATIONS:-6}" --quick --db demo.db
./build/kevo report --db demo.db
./build/kevo report --db demo.db --format html -o demo-report.html
echo "HTML report: demo-report.html"
