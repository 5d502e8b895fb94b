#!/usr/bin/env bash
# tests/integration/test_fuzz_regressions.sh - replay every input kept in
# tests/fuzz/corpus/<target>/ (seeds and every crash ever found) through its
# libFuzzer target, so fixed crashes stay fixed.
#
# Needs a fuzz build (CC=clang cmake -S . -B build-fuzz -DKEVO_FUZZ=ON ...):
# KEVO_BUILD is the build folder (ctest sets it). Without fuzz targets in it
# the test prints why and passes: an ordinary build has none.
set -euo pipefail

src="${KEVO_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}"
build="${KEVO_BUILD:-}"
corpus_root="$src/tests/fuzz/corpus"

if [[ -z "$build" ]]; then
    echo "SKIP: KEVO_BUILD is not set (run through ctest, or set it to a fuzz build folder)"
    exit 0
fi
if [[ ! -x "$build/tests/fuzz/fuzz_task_json" ]]; then
    echo "SKIP: $build/tests/fuzz/fuzz_task_json not found: not a fuzz build" \
         "(configure with CC=clang cmake -DKEVO_FUZZ=ON)"
    exit 0
fi

failed=0
replayed=0
for dir in "$corpus_root"/*/; do
    target="$(basename "$dir")"
    fuzzer="$build/tests/fuzz/$target"
    if [[ ! -x "$fuzzer" ]]; then
        echo "FAIL: corpus folder $dir has no fuzz target $fuzzer"
        failed=1
        continue
    fi
    n=$(find "$dir" -maxdepth 1 -type f | wc -l)
    log="$(mktemp)"
    # -runs=0: execute every corpus input once, no mutation. Inputs are
    # replayed whole (-max_len at least the largest file).
    max=$(find "$dir" -maxdepth 1 -type f -printf '%s\n' | sort -n | tail -1)
    if "$fuzzer" -runs=0 -max_len="$(( ${max:-0} + 1 ))" "$dir" >"$log" 2>&1; then
        echo "ok: $target: $n inputs replayed"
        replayed=$(( replayed + n ))
    else
        echo "FAIL: $target crashed on its corpus:"
        grep -E 'ERROR|runtime error|SUMMARY|Test unit written|abort' "$log" | head -20 || true
        tail -n 30 "$log"
        failed=1
    fi
    rm -f "$log"
done

if [[ $failed -ne 0 ]]; then
    exit 1
fi
echo "fuzz regressions: $replayed inputs, no crash"
