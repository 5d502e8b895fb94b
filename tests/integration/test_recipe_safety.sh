#!/usr/bin/env bash
# tests/integration/test_recipe_safety.sh - no recipe breaks a source it
# declared applicable (issue 20): tests/helpers/recipe_sweep.c runs every C
# recipe with every parameter value the built-in generator may choose on
# every suite reference (suites/c/level1 and level2), every recipe on a
# deterministic sample of what those produce, six-step random chains, and
# the generator's parameter mutations; each result a recipe declared
# applicable must parse (the recipes' guard) and compile with the C
# backend's compile line (-fsyntax-only), and each mutated parameter set must
# still apply. On failure it lists every (task, recipe, parameters) with
# gcc's first error line.
# Then it checks that the sweep can fail: a reference that does not compile
# is reported, and so is each result broken on purpose (--break).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO_BUILD=${KEVO_BUILD:-$KEVO_SRC/build}
SWEEP=$KEVO_BUILD/tests/recipe_sweep
[ -x "$SWEEP" ] || SWEEP=$KEVO_BUILD/recipe_sweep
[ -x "$SWEEP" ] || { echo "recipe_sweep helper not built" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# the sweep fails on a reference that does not compile (what it would say of
# a recipe's broken output): a copy of relu with a typo in the body
mkdir -p "$tmp/suite/001_relu"
cp "$KEVO_SRC/suites/c/level1/001_relu/task.json" "$tmp/suite/001_relu/"
sed 's/0.0f;/0.0f/' "$KEVO_SRC/suites/c/level1/001_relu/reference.c" >"$tmp/suite/001_relu/reference.c"
"$SWEEP" --level2 none --walks 0 --mutations 0 "$tmp/suite" >"$tmp/broken.txt" 2>&1
rc=$?
if [ "$rc" != 1 ] || ! grep -q "REFERENCE relu does not compile: .*error" "$tmp/broken.txt"; then
    echo "FAIL: a kernel that does not compile was not reported (exit $rc):"
    cat "$tmp/broken.txt"
    fail=1
fi

# every result that does not compile is reported, also where the sweep
# compiles many in one translation unit: --break 5 puts an undeclared name
# in every 5th result's kernel (two tasks of Level 1 and one of Level 2)
mkdir -p "$tmp/few"
for d in level1/015_matmul_square level1/001_relu level2/001_conv2d_relu_biasadd; do
    cp -r "$KEVO_SRC/suites/c/$d" "$tmp/few/"
done
"$SWEEP" --level2 none --walks 0 --mutations 0 --break 5 "$tmp/few" >"$tmp/break.txt" 2>&1
rc=$?
broken=$(sed -n 's/^  \([0-9]*\) results broken on purpose.*/\1/p' "$tmp/break.txt")
listed=$(grep -c "^FAIL .*sweep_break" "$tmp/break.txt")
units=$(sed -n 's/^  gcc runs: \([0-9]*\) combined units.*/\1/p' "$tmp/break.txt")
if [ "$rc" != 1 ] || [ -z "$broken" ] || [ "$broken" -lt 5 ] || [ "$listed" != "$broken" ] ||
    [ "$(grep -c '^FAIL' "$tmp/break.txt")" != "$broken" ] || [ "${units:-0}" -lt 1 ]; then
    echo "FAIL: $broken results broken on purpose, $listed of them listed (exit $rc, ${units:-0} combined units):"
    grep -v '^    ' "$tmp/break.txt" | head -40
    fail=1
fi

# the sweep's work folders in the build tree, away from /tmp (a CI run once
# lost one of them mid-sweep, under /tmp, with other tests running)
mkdir -p "$KEVO_BUILD/recipe-sweep-tmp"
TMPDIR="$KEVO_BUILD/recipe-sweep-tmp" "$SWEEP" --jobs "${JOBS:-2}" "$KEVO_SRC/suites/c/level1" \
    "$KEVO_SRC/suites/c/level2" >"$tmp/sweep.txt" 2>&1
rc=$?
grep -v '^    ' "$tmp/sweep.txt" | tail -8
if [ "$rc" != 0 ]; then
    echo "FAIL: the recipe sweep found results that do not compile (exit $rc):"
    grep -E '^(FAIL|DECLINED|REFERENCE|    )' "$tmp/sweep.txt" | head -200
    fail=1
fi
n=$(find "$KEVO_SRC/suites/c/level1" "$KEVO_SRC/suites/c/level2" -name task.json | wc -l)
if ! grep -q "($n tasks found)" "$tmp/sweep.txt"; then
    echo "FAIL: the sweep did not cover the $n suite tasks"
    fail=1
fi
[ "$fail" = 0 ] && echo "recipe safety: ok"
exit "$fail"
