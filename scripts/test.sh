#!/usr/bin/env bash
# Runs every test: unit + integration (ctest), the same unit tests under
# ASan+UBSan, the NumPy cross-check of every suite reference, the suite
# check (`kevo tasks check suites/c`) and a short fuzzing run; with the
# PyTorch venv (made once by setup.sh --with-torch, ~5.4 GB, reused after)
# also the PyTorch-defined task tests and the PyTorch cross-check.
# Usage: bash scripts/test.sh      (FUZZ_SECONDS=N to change the fuzz time;
#        KEVO_NO_TORCH=1 to skip making the venv: the torch tests then skip)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${KEVO_NO_TORCH:-0}" = 1 ]; then bash scripts/setup.sh; else bash scripts/setup.sh --with-torch; fi
echo "== layers (docs/architecture.md): who may include whom"
/usr/bin/python3 scripts/check_layers.py src
echo "== ctest (unit + integration)"
# the adversarial set runs two evaluations at a time (JOBS)
(cd build && JOBS=2 ctest --output-on-failure -j2)
echo "== sanitizer build (ASan + UBSan), unit tests"
cmake -S . -B build-asan -DKEVO_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$(nproc)" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit -j2)
echo "== NumPy cross-check of every reference"
/usr/bin/python3 tests/crosscheck/crosscheck.py suites/c
TP=${KEVO_TORCH_PYTHON:-/var/cache/kevo/torch-venv/bin/python}; if [ -x "$TP" ]; then echo "== PyTorch cross-check of every KernelBench translation"; "$TP" tests/crosscheck/crosscheck.py --torch suites/c; else echo "== PyTorch cross-check skipped: no $TP (./setup.sh --with-torch, or set KEVO_TORCH_PYTHON)"; fi
echo "== kevo tasks check suites/c"
./build/kevo tasks check suites/c --jobs 2
if [ -f .ci/fuzz.sh ]; then
  echo "== fuzzing (${FUZZ_SECONDS:-60} s per target)"
  bash .ci/fuzz.sh
fi
echo "all tests passed"
