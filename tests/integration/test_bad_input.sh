#!/usr/bin/env bash
# Bad input to the CLI: one clear line naming the file, field and problem,
# exit status 2, and nothing recorded is lost.
set -uo pipefail
KEVO=${KEVO:-build/kevo}
SRC=${KEVO_SRC:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
relu="$SRC/suites/c/level1/001_relu"
printf '#include <stdint.h>\nvoid relu(const float *x, float *y, int64_t N) { for (int64_t i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0; }\n' > "$tmp/ok.c"
: > "$tmp/empty.c"
mk() { cp -r "$relu" "$tmp/$1"; python3 - "$tmp/$1/task.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[1], "w"))
PY
}
mk missing_field 'del d["flops"]'
mk wrong_type 'd["level"] = "one"'
mk bad_dtype 'd["params"][0]["type"] = "f16"'
mk unknown_field 'd["tolerence"] = {"atol": 1}'
mk bad_expr 'd["params"][0]["shape"] = ["N +"]'
expect() { # name, expected substring, command...
  local name=$1 want=$2; shift 2
  out=$("$@" 2>&1 >/dev/null); rc=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && printf '%s' "$out" | grep -qF -- "$want"; then
    echo "ok   $name: $out"; pass=$((pass+1))
  else
    echo "FAIL $name (exit $rc, $lines lines): $out"; fail=$((fail+1))
  fi
}
expect "missing field" "task.json: field 'flops': missing" "$KEVO" eval "$tmp/missing_field" "$tmp/ok.c"
expect "wrong type" "field 'level': must be an integer" "$KEVO" eval "$tmp/wrong_type" "$tmp/ok.c"
expect "unknown dtype" "unknown type 'f16'" "$KEVO" eval "$tmp/bad_dtype" "$tmp/ok.c"
expect "unknown field" "field 'tolerence': unknown field" "$KEVO" eval "$tmp/unknown_field" "$tmp/ok.c"
expect "bad expression" "params[0].shape" "$KEVO" eval "$tmp/bad_expr" "$tmp/ok.c"
expect "candidate missing" "$tmp/nope.c: cannot open" "$KEVO" eval "$relu" "$tmp/nope.c"
expect "empty candidate" "the candidate file is empty" "$KEVO" eval "$relu" "$tmp/empty.c"
# numbers with trailing junk are refused, not read up to the junk
expect "--min-time 1x" "--min-time must be a positive number" "$KEVO" eval "$relu" "$tmp/ok.c" --min-time 1x
expect "--jobs 2x" "--jobs takes 1..64" "$KEVO" tasks check "$relu" --jobs 2x
expect "--level 2x" "--level takes 1, 2 or 3" "$KEVO" tasks import torch "$tmp/ok.c" --out "$tmp/imp" --level 2x
expect "--refine-with builtin:0.5x" "not '0.5x'" "$KEVO" run "$relu" --generator openai --refine-with builtin:0.5x --db "$tmp/rw.db"
if [ "$(id -u)" = 0 ]; then # as root, sandboxed runners run as other uids
  mkdir -p "$tmp/private/tmp"; chmod 700 "$tmp/private"
  expect "TMPDIR others cannot reach" "is not searchable by other users" env TMPDIR="$tmp/private/tmp" "$KEVO" eval "$relu" "$tmp/ok.c"
fi
expect "no task folder" "no such task folder" "$KEVO" eval "$tmp/none" "$tmp/ok.c"
expect "unknown option" "unknown option '--fast'" "$KEVO" eval "$relu" "$tmp/ok.c" --fast
expect "run: bad task in the list" "task.json: field 'flops': missing" "$KEVO" run "$tmp/missing_field" --db "$tmp/r.db"
expect "run: bad --iterations" "--iterations needs an integer from 0 to 1000000, got 'x'" "$KEVO" run "$relu" --iterations x
expect "run: --q-init out of range" "q_init (--q-init) must be in [-1, 1]" "$KEVO" run "$relu" --q-init 2 --db "$tmp/h.db"
expect "run: --alpha not a number" "--alpha needs a number, got 'fast'" "$KEVO" run "$relu" --alpha fast --db "$tmp/h.db"
expect "run: --alpha 0" "alpha (--alpha) must be in (0, 1]" "$KEVO" run "$relu" --alpha 0 --db "$tmp/h.db"
expect "run: --lambda 0" "lambda (--lambda) must be an integer in [1, 100]" "$KEVO" run "$relu" --lambda 0 --db "$tmp/h.db"
expect "run: --epsilon out of range" "epsilon (--epsilon) must be in [0, 1]" "$KEVO" run "$relu" --epsilon 1.5 --db "$tmp/h.db"
expect "run: passk with the built-in generator" "--strategy passk needs an LLM generator" "$KEVO" run "$relu" --strategy passk --db "$tmp/h.db"
expect "run: no task lists the backend" "lists backend 'opencl' in its task.json field 'backends'" "$KEVO" run "$SRC/suites/c/level1/030_frobenius_norm" --backend opencl --db "$tmp/b.db"
expect "run: built-in generator on cuda" "the built-in generator writes c and opencl candidates, not cuda" "$KEVO" run "$SRC/suites/c/level1/001_relu" --backend cuda --db "$tmp/c.db"
# flags the way C tools read them: a typo names the closest flag, a switch
# refuses a value, a missing value is named; --flag=value works like --flag value
expect "typo suggests the flag" "unknown option '--iteratons'; did you mean --iterations?" "$KEVO" run "$relu" --iteratons 3
expect "typo in eval" "did you mean --min-time?" "$KEVO" eval "$relu" "$tmp/ok.c" --min-tme 1
expect "switch with a value" "--quick takes no value (got '1')" "$KEVO" run "$relu" --quick=1
expect "value missing at the end" "--db needs a value" "$KEVO" report --db
expect "ambiguous prefix" "option '--max' is ambiguous" "$KEVO" run "$relu" --max 3
expect "command typo" "unknown command 'rnu'; did you mean run?" "$KEVO" rnu
expect "subcommand typo" "unknown subcommand 'chek'; did you mean check?" "$KEVO" tasks chek "$relu"
expect "memory subcommand typo" "unknown command 'stast'; did you mean stats?" "$KEVO" memory stast
expect "report --run junk" "--run needs an integer from 1 to" "$KEVO" report --run 3x --db "$tmp/none.db"
expect "--temperature abc" "--temperature needs a number from 0 to 100, got 'abc'" "$KEVO" run "$relu" --temperature abc
if "$KEVO" tasks check --jobs=1 "$relu" >/dev/null 2>&1 && "$KEVO" eval "$relu" "$tmp/ok.c" --no-latency --backend=c >/dev/null 2>&1; then
  echo "ok   --flag=value and options before operands"; pass=$((pass+1))
else
  echo "FAIL --flag=value"; fail=$((fail+1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
