#!/usr/bin/env bash
# .ci/fuzz.sh - build every libFuzzer target with clang (ASan + UBSan) in
# build-fuzz/ and run each for ${FUZZ_SECONDS:-60} s over its corpus in
# tests/fuzz/corpus/<target>/. Fails when any target crashes.
#
# New interesting inputs go to build-fuzz/fuzz-work/<target>/ (the checked-in
# corpus is only read); a crash input is written to
# build-fuzz/fuzz-artifacts/<target>/. Copy it into tests/fuzz/corpus/<target>/
# by hand with the fix, so tests/integration/test_fuzz_regressions.sh replays
# it from then on.
#
# Environment: FUZZ_SECONDS (default 60), FUZZ_JOBS (cmake -j, default 2),
# FUZZ_BUILD (default build-fuzz), FUZZ_TARGETS (default: all). A dictionary
# tests/fuzz/<target>.dict is used when present.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${FUZZ_SECONDS:-60}"
jobs="${FUZZ_JOBS:-2}"
build="${FUZZ_BUILD:-build-fuzz}"

CC=clang cmake -S . -B "$build" -DKEVO_FUZZ=ON -DKEVO_TESTS=OFF >/dev/null
cmake --build "$build" -j"$jobs"

targets="${FUZZ_TARGETS:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}"
status=0
for target in $targets; do
    fuzzer="$build/tests/fuzz/$target"
    corpus="tests/fuzz/corpus/$target"
    work="$build/fuzz-work/$target"
    artifacts="$build/fuzz-artifacts/$target"
    mkdir -p "$work" "$artifacts" "$corpus"
    log="$build/fuzz-$target.log"
    echo "== $target: ${seconds}s over $corpus"
    # first dir: where new inputs are written; the checked-in corpus is read.
    dict=()
    if [[ -f "tests/fuzz/$target.dict" ]]; then
        dict=(-dict="tests/fuzz/$target.dict")
    fi
    if "$fuzzer" -max_total_time="$seconds" -print_final_stats=1 "${dict[@]}" \
            -artifact_prefix="$artifacts/" "$work" "$corpus" >"$log" 2>&1; then
        execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
        echo "   ok: $execs executions, no crash (log: $log)"
    else
        status=1
        echo "   CRASH (log: $log); input(s):"
        ls -1 "$artifacts"/ 2>/dev/null | sed "s|^|     $artifacts/|"
        grep -E 'ERROR|runtime error|SUMMARY' "$log" | head -10 | sed 's/^/     /'
    fi
done

if [[ $status -ne 0 ]]; then
    echo "fuzz: crash found; keep the input in tests/fuzz/corpus/<target>/ with the fix"
fi
exit $status
