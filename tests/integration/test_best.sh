#!/usr/bin/env bash
# test_best.sh - `kevo best` end to end: a short built-in run on two tasks,
# then each task's best kernel written as a file that `kevo eval` judges
# correct again, with the header naming task, speedup and baseline, the
# kernel's text byte for byte after it, summary.csv, --min-speedup, bad
# usage (exit 2), a missing store (exit 3), and the store's bytes unchanged.
# Needs KEVO (the binary) and KEVO_SRC (the source tree).
set -euo pipefail

: "${KEVO:?set KEVO to the kevo binary}"
: "${KEVO_SRC:?set KEVO_SRC to the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-best.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$KEVO_SRC" # the run records the task folders relative to here

. "$KEVO_SRC/tests/helpers/expect.sh" # fail, expect_status

"$KEVO" run suites/c/level1/001_relu suites/c/level1/019_matvec --iterations 3 --quick \
    --db "$tmp/a.db" >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "kevo run"; }
before=$(sha256sum "$tmp/a.db" | cut -d' ' -f1)

expect_status 0 "$KEVO" best --db "$tmp/a.db" --out "$tmp/best"
[ "$(ls "$tmp/best" | wc -l)" = 3 ] || { ls "$tmp/best" >&2; fail "expected 2 kernels + summary.csv"; }
[ -f "$tmp/best/summary.csv" ] || fail "no summary.csv"
head -1 "$tmp/best/summary.csv" | grep -qx \
    "task,backend,file,speedup,baseline,candidate_us,reference_us,attempt_id,run_id" \
    || fail "summary.csv header"
[ "$(tail -n +2 "$tmp/best/summary.csv" | wc -l)" = 2 ] || fail "summary.csv rows"

for spec in relu:001_relu matvec:019_matvec; do
    task=${spec%%:*} dir=suites/c/level1/${spec##*:}
    f="$tmp/best/$task.c"
    [ -f "$f" ] || fail "no $f"
    grep -q "^// task:      $task\$" "$f" || fail "$task: header does not name the task"
    grep -q "^// speedup:   [0-9.]*x over c-reference (medians: candidate" "$f" \
        || fail "$task: header does not give the speedup and its baseline"
    grep -q "^// prototype: void $task(" "$f" || fail "$task: header has no prototype"
    grep -q "^// build:     /usr/bin/gcc -std=gnu11 -O3 -march=native" "$f" \
        || fail "$task: header has no build line"
    grep -q "^$task,c,$task.c,[0-9.]*,c-reference," "$tmp/best/summary.csv" \
        || fail "$task: summary.csv row"
    # a `// kevo: cflags` line stays the first line
    if grep -q "^// kevo: cflags" "$f"; then
        head -1 "$f" | grep -q "^// kevo: cflags" || fail "$task: cflags line is not first"
    fi
    set +e
    "$KEVO" eval "$dir" "$f" --quick --json >"$tmp/eval.json" 2>"$tmp/eval.err"
    set -e
    python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["verdict"] != "correct")' \
        "$tmp/eval.json" \
        || { cat "$tmp/eval.json" "$tmp/eval.err" >&2; fail "$task: exported kernel is not correct"; }
done

# the kernel after the header is the stored source, byte for byte
id=$(grep "^relu," "$tmp/best/summary.csv" | cut -d, -f8)
"$KEVO" memory export "$tmp/a.jsonl" --db "$tmp/a.db" 2>/dev/null
python3 - "$tmp/a.jsonl" "$id" "$tmp/best/relu.c" <<'EOF' || fail "kernel text differs from the store's"
import json, sys
src = next(r["source"] for r in map(json.loads, open(sys.argv[1]))
           if r.get("type") == "attempt" and str(r["id"]) == sys.argv[2])
out = open(sys.argv[3]).read()
start = out.index("// ---- kevo best:")
end = out.index("\n", out.index("// ---- the kernel follows")) + 1
assert out[:start] + out[end:] == src, "differs"
EOF

# --min-speedup: nothing written, exit 1, a line per task saying why
expect_status 1 "$KEVO" best --db "$tmp/a.db" --out "$tmp/none" --min-speedup 1000
[ ! -e "$tmp/none" ] || fail "--min-speedup 1000 wrote something"
[ "$(grep -c "below --min-speedup 1000, skipped" "$tmp/out")" = 2 ] || fail "skip lines"

# bad usage: exit 2 with one line pointing at --help
expect_status 2 "$KEVO" best --db "$tmp/a.db" --out "$tmp/x" --min-speedup abc
grep -q "min-speedup.*abc.*kevo best --help" "$tmp/err" || fail "bad --min-speedup message"
expect_status 2 "$KEVO" best --db "$tmp/a.db" --out "$tmp/x" --min-speedup 1.5x
expect_status 2 "$KEVO" best --db "$tmp/a.db" --out "$tmp/x" --frobnicate
expect_status 2 "$KEVO" best --db "$tmp/a.db"
grep -q -- "--out DIR is required" "$tmp/err" || fail "missing --out message"
expect_status 2 "$KEVO" best --db "$tmp/a.db" --out "$tmp/x" --run 99
[ ! -e "$tmp/x" ] || fail "bad usage wrote something"

# a missing store: exit 3 (the store cannot be opened), and no file created
expect_status 3 "$KEVO" best --db "$tmp/missing.db" --out "$tmp/x"
grep -q "cannot open the store" "$tmp/err" || fail "missing store message"
[ ! -e "$tmp/missing.db" ] || fail "kevo best created a store"

after=$(sha256sum "$tmp/a.db" | cut -d' ' -f1)
[ "$before" = "$after" ] || fail "kevo best changed the store"
echo "ok: kevo best"
