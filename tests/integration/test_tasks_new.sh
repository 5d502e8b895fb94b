#!/usr/bin/env bash
# tests/integration/test_tasks_new.sh - `kevo tasks new`: a user's own C
# function becomes a task that `kevo tasks check` accepts. The elementwise
# scale_add needs no --shape (one size); rmsnorm (two sizes and an eps) and
# matmul (three size_t sizes, so its reference wraps it) exit 2 naming
# exactly the --shape/--size/--value flags that are missing and write
# nothing, then succeed with them; a static function is wrapped too.
# kevo eval judges the reference and an OpenMP variant correct on the new
# task, and a kernel that skips the scale incorrect. Functions kevo cannot take (a struct parameter, a
# variadic function), a missing --function, a function not in the file, a
# file that does not parse and an existing non-empty folder each exit 2
# with one line naming the problem.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
data=$KEVO_SRC/tests/data/tasks_new
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
total=0
check() { # cond description
    total=$((total + 1))
    if eval "$1"; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
new() { "$KEVO" tasks new "$@" >"$tmp/out" 2>"$tmp/err"; }
json() { # file python-expression-over-d
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
verdict() { # task kernel
    "$KEVO" eval --quick --json "$1" "$2" 2>/dev/null |
        python3 -c 'import json,sys
try: print(json.load(sys.stdin)["verdict"])
except Exception: print("no-json")'
}

# --- elementwise: one size, shapes inferred ---------------------------------
new scale_add --from "$data/scale_add.c" --function scale_add --size n=1048576 \
    --out "$tmp/scale_add"
rc=$?
check '[ $rc = 0 ]' "scale_add: written without --shape (exit $rc: $(cat "$tmp/err"))"
check '[ "$(json "$tmp/scale_add/task.json" "[p.get(\"shape\") for p in d[\"params\"]]")" = "[['"'"'n'"'"'], ['"'"'n'"'"'], ['"'"'n'"'"'], None]" ]' \
    "scale_add: every buffer is [n], n a scalar"
check '[ "$(json "$tmp/scale_add/task.json" "[p[\"role\"] for p in d[\"params\"]]")" = "['"'"'in'"'"', '"'"'in'"'"', '"'"'out'"'"', '"'"'scalar'"'"']" ]' \
    "scale_add: const float * -> in, float * -> out, int -> scalar"
check 'grep -q "next: kevo tasks check $tmp/scale_add" "$tmp/out" && grep -q "inout" "$tmp/out"' \
    "scale_add: prints the next command and the in-out caveat"
check 'grep -q "static float scale" "$tmp/scale_add/reference.c"' \
    "scale_add: reference.c keeps the file's helper"
out=$("$KEVO" tasks check "$tmp/scale_add" 2>&1); rc=$?
check '[ $rc = 0 ]' "scale_add: kevo tasks check passes (exit $rc) ${out:0:300}"

v=$(verdict "$tmp/scale_add" "$tmp/scale_add/reference.c")
check '[ "$v" = correct ]' "scale_add: kevo eval of the reference is correct (got $v)"
cat >"$tmp/omp.c" <<'EOF'
// kevo: cflags -O3 -march=native -fopenmp
#include <stdint.h>
void scale_add(const float *x, const float *y, float *out, int32_t n)
{
#pragma omp parallel for simd
    for (int32_t i = 0; i < n; i++)
        out[i] = 2.0f * x[i] + y[i];
}
EOF
v=$(verdict "$tmp/scale_add" "$tmp/omp.c")
check '[ "$v" = correct ]' "scale_add: an OpenMP variant is correct (got $v)"
sed 's/2.0f \* x\[i\]/x[i]/' "$tmp/omp.c" >"$tmp/wrong.c"
v=$(verdict "$tmp/scale_add" "$tmp/wrong.c")
check '[ "$v" = incorrect ]' "scale_add: a kernel that skips the scale is incorrect (got $v)"

# another task name: the function is renamed in reference.c
new axpb --from "$data/scale_add.c" --function scale_add --size n=4096 --out "$tmp/axpb"
rc=$?
check '[ $rc = 0 ] && grep -q "^void axpb(const float \*x" "$tmp/axpb/reference.c" &&
       ! grep -q "scale_add(" "$tmp/axpb/reference.c"' "axpb: F renamed to the task's name"
out=$("$KEVO" tasks check "$tmp/axpb" 2>&1); rc=$?
check '[ $rc = 0 ]' "axpb: kevo tasks check passes (exit $rc) ${out:0:300}"

# --- rmsnorm: two sizes and an eps -------------------------------------------
new rmsnorm --from "$data/rmsnorm.c" --function rmsnorm --out "$tmp/rmsnorm"
rc=$?
err=$(cat "$tmp/err")
check '[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ]' "rmsnorm: exit 2, one line (exit $rc)"
check 'grep -q -- "add --shape x=... --shape y=... (" <<<"$err"' \
    "rmsnorm: asks for exactly --shape x and --shape y: $err"
check 'grep -q -- "add --size rows=... --size cols=... (" <<<"$err" &&
       grep -q -- "add --value eps=... (" <<<"$err"' "rmsnorm: asks for the sizes and eps"
check '! grep -q -- "--shape rows\|--shape eps\|--size eps" <<<"$err"' \
    "rmsnorm: asks for nothing else"
check '[ ! -e "$tmp/rmsnorm" ]' "rmsnorm: nothing written"
new rmsnorm --from "$data/rmsnorm.c" --function rmsnorm --out "$tmp/rmsnorm" \
    --size rows=512 --size cols=1024 --shape x=rows,cols --shape y=rows,cols \
    --value eps=1e-5 --category norm --tolerance 1e-3 --description "RMS norm of each row"
rc=$?
check '[ $rc = 0 ]' "rmsnorm: written with the flags (exit $rc: $(cat "$tmp/err"))"
check '[ "$(json "$tmp/rmsnorm/task.json" "d[\"params\"][4]")" = "{'"'"'name'"'"': '"'"'eps'"'"', '"'"'role'"'"': '"'"'scalar'"'"', '"'"'type'"'"': '"'"'f32'"'"', '"'"'value'"'"': 1e-05}" ]' \
    "rmsnorm: eps is a scalar f32 with value 1e-05"
check '[ "$(json "$tmp/rmsnorm/task.json" "(d[\"tolerance\"], d[\"category\"], len(d[\"check_sizes\"]))")" = "({'"'"'atol'"'"': 0.001, '"'"'rtol'"'"': 0.001}, '"'"'norm'"'"', 3)" ]' \
    "rmsnorm: tolerance, category, three derived check sets"
out=$("$KEVO" tasks check "$tmp/rmsnorm" 2>&1); rc=$?
check '[ $rc = 0 ]' "rmsnorm: kevo tasks check passes (exit $rc) ${out:0:300}"

# --- matmul: three size_t sizes ----------------------------------------------
new matmul --from "$data/matmul.c" --function matmul --out "$tmp/matmul" --size M=128
rc=$?
err=$(cat "$tmp/err")
check '[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -e "$tmp/matmul" ]' \
    "matmul: exit 2, one line, nothing written (exit $rc)"
check 'grep -q -- "add --shape A=... --shape B=... --shape C=... (.*M, N, K)" <<<"$err" &&
       grep -q -- "add --size N=... --size K=... (" <<<"$err" && ! grep -q -- "--size M" <<<"$err"' \
    "matmul: asks for exactly the shapes of A, B, C and the sizes N, K: $err"
new matmul --from "$data/matmul.c" --function matmul --out "$tmp/matmul" --size M=128 \
    --size N=96 --size K=64 --shape A=M,K --shape B=K,N --shape C=M,N --flops "2*M*N*K" \
    --check-size M=3,N=5,K=7 --check-size M=1,N=1,K=1
rc=$?
check '[ $rc = 0 ]' "matmul: written with the flags (exit $rc: $(cat "$tmp/err"))"
check '[ "$(json "$tmp/matmul/task.json" "(d[\"bytes\"], d[\"flops\"], d[\"check_sizes\"])")" = "('"'"'4*M*K + 4*K*N + 4*M*N'"'"', '"'"'2*M*N*K'"'"', [{'"'"'M'"'"': 3, '"'"'N'"'"': 5, '"'"'K'"'"': 7}, {'"'"'M'"'"': 1, '"'"'N'"'"': 1, '"'"'K'"'"': 1}])" ]' \
    "matmul: bytes = every buffer once, --flops and --check-size kept"
check 'grep -q "^void matmul(const float \*A, const float \*B, float \*C, int64_t M, int64_t N, int64_t K)" "$tmp/matmul/reference.c" &&
       grep -q "matmul_impl(A, B, C, (size_t)M, (size_t)N, (size_t)K);" "$tmp/matmul/reference.c"' \
    "matmul: size_t sizes: an int64_t entry point casts to the user's types"
out=$("$KEVO" tasks check "$tmp/matmul" 2>&1); rc=$?
check '[ $rc = 0 ]' "matmul: kevo tasks check passes (exit $rc) ${out:0:300}"
v=$(verdict "$tmp/matmul" "$tmp/matmul/reference.c")
check '[ "$v" = correct ]' "matmul: kevo eval of the reference is correct (got $v)"

# --- a static function: wrapped, since the runner cannot link to it ----------
new relu --from "$data/static_relu.c" --function relu --size n=100000 --out "$tmp/relu"
rc=$?
check '[ $rc = 0 ] && grep -q "^static void relu_impl(" "$tmp/relu/reference.c" &&
       grep -q "^void relu(const float \*x, float \*y, int64_t n)" "$tmp/relu/reference.c"' \
    "static relu: renamed relu_impl, an entry point relu calls it (exit $rc)"
out=$("$KEVO" tasks check "$tmp/relu" 2>&1); rc=$?
check '[ $rc = 0 ]' "static relu: kevo tasks check passes (exit $rc) ${out:0:300}"

# --- what kevo cannot take, and bad input ------------------------------------
fail_case() { # description expected-message-regex args...
    local what=$1 re=$2
    shift 2
    new "$@" --out "$tmp/never"
    local rc=$?
    check '[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "$re" "$tmp/err" &&
           [ ! -e "$tmp/never" ] && [ ! -s "$tmp/out" ]' \
        "$what: exit 2 with one line ($rc: $(cat "$tmp/err"))"
}
fail_case "a struct parameter" "parameter 'cfg' of 'axpy_cfg' (struct params) is not supported" \
    axpy_cfg --from "$data/struct_param.c" --function axpy_cfg
fail_case "a variadic function" "sum_all is variadic" \
    sum_all --from "$data/variadic.c" --function sum_all --size n=4
fail_case "no --function" "--function F is required" \
    scale_add --from "$data/scale_add.c" --size n=4
fail_case "a function not in the file" "function 'nope' is not defined there" \
    nope --from "$data/scale_add.c" --function nope
fail_case "a file that does not parse" "broken.c: source does not parse: line 5:" \
    relu --from "$data/broken.c" --function relu --size n=4
fail_case "an unknown shape name" "--shape A: dimension 2 ('Q')" \
    matmul --from "$data/matmul.c" --function matmul --size M=4 --size N=4 --size K=4 \
    --shape A=M,Q --shape B=K,N --shape C=M,N

mkdir "$tmp/busy" && echo keep >"$tmp/busy/notes.txt"
"$KEVO" tasks new scale_add --from "$data/scale_add.c" --function scale_add --size n=4 \
    --out "$tmp/busy" >"$tmp/out" 2>"$tmp/err"
rc=$?
check '[ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "busy exists and is not empty" "$tmp/err" &&
       [ "$(ls "$tmp/busy")" = notes.txt ]' "an existing non-empty folder: exit 2, untouched ($rc)"

echo "$((total - fails)) passed, $fails failed"
[ $fails = 0 ]
