#!/usr/bin/env bash
# tests/integration/test_opencl_candidates.sh - runs `kevo eval --backend
# opencl --quick --json` on every example candidate
# tests/candidates_opencl/<task_folder>/candidate.cl (the task is
# suites/c/level1/<task_folder> or suites/c/level2/<task_folder>) and
# expects `correct`; then on the hostile or broken ones in
# tests/candidates_opencl/_negative/<verdict>__<what>.cl (task 001_relu)
# and expects the verdict in the file name.
#
# Skipped (exit 77, with the reason) when the machine has no OpenCL
# platform with a device.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root), ONLY (extended
# regex on the case name), PYTHON (python3).
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
ONLY=${ONLY:-}
PY=${PYTHON:-python3}
CAND=$KEVO_SRC/tests/candidates_opencl

die() { echo "test_opencl_candidates: $*" >&2; exit 2; }
[ -x "$KEVO" ] || die "KEVO=$KEVO is not an executable"
[ -d "$CAND" ] || die "$CAND missing"

# field FILE KEY: one top-level field of a `kevo eval --json` answer
field() { "$PY" -c 'import json,sys
try: d = json.load(open(sys.argv[1]))
except Exception: print(""); sys.exit()
v = d.get(sys.argv[2])
if sys.argv[2] == "speedup": v = (d.get("latency") or {}).get("speedup")
print("" if v is None else v)' "$1" "$2"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Is there a platform? Judge the first candidate and look at the reason.
probe_task=$KEVO_SRC/suites/c/level1/001_relu
"$KEVO" eval --backend opencl --json --no-latency "$probe_task" "$CAND/001_relu/candidate.cl" \
    >"$tmp/probe.json" 2>"$tmp/probe.err"
if [ "$(field "$tmp/probe.json" verdict)" = infra_error ]; then
    reason=$(field "$tmp/probe.json" feedback)
    case "$reason" in
    *"no OpenCL"*|*"OpenCL harness"*|*"ocl-icd"*)
        echo "SKIP: no usable OpenCL platform here: $reason"
        exit 77 ;;
    esac
fi

pass=0 fail=0
check() { # name expected task candidate extra-flags...
    local name=$1 want=$2 task=$3 cand=$4
    shift 4
    [ -n "$ONLY" ] && ! grep -Eq -- "$ONLY" <<<"$name" && return
    local out=$tmp/$(tr '/' '_' <<<"$name").json
    "$KEVO" eval --backend opencl --json "$@" "$task" "$cand" >"$out" 2>"$tmp/err"
    local got speed
    got=$(field "$out" verdict)
    speed=$(field "$out" speedup)
    if [ "$got" = "$want" ]; then
        pass=$((pass + 1))
        echo "ok   $name: $got${speed:+ (speedup $(printf '%.2f' "$speed")x)}"
    else
        fail=$((fail + 1))
        echo "FAIL $name: expected $want, got ${got:-nothing}"
        "$PY" -c 'import json,sys; print("     " + json.load(open(sys.argv[1]))["feedback"][:600])' \
            "$out" 2>/dev/null || sed 's/^/     /' "$tmp/err" | head -5
    fi
}

for dir in "$CAND"/*/; do
    name=$(basename "$dir")
    [ "$name" = _negative ] && continue
    task=""
    for lvl in level1 level2; do
        [ -f "$KEVO_SRC/suites/c/$lvl/$name/task.json" ] && task=$KEVO_SRC/suites/c/$lvl/$name
    done
    [ -n "$task" ] || { fail=$((fail + 1)); echo "FAIL $name: no task suites/c/level*/$name"; continue; }
    check "$name" correct "$task" "$dir/candidate.cl" --quick
done
for f in "$CAND"/_negative/*.cl; do
    base=$(basename "$f" .cl)
    check "_negative/$base" "${base%%__*}" "$probe_task" "$f" --no-latency
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
