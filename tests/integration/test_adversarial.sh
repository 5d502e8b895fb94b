#!/usr/bin/env bash
# tests/integration/test_adversarial.sh - runs `kevo eval --json` on every
# adversarial candidate (tests/adversarial/<folder>/*.c, expected verdicts in
# tests/adversarial/expected.txt; a second expected verdict means "also run
# with --unsafe-skip-antihack") and on every tests/candidates/<task>/
# {correct,incorrect}.c, and compares the verdicts.
#
# Environment:
#   KEVO       the kevo binary (default: build/kevo under KEVO_SRC)
#   KEVO_SRC   the source root (default: two folders above this script)
#   JOBS       evaluations run at once (default 2; cases judged on their
#              speedup always run alone)
#   ONLY       extended regex: run only cases whose name matches
#   CASE_TIMEOUT  seconds before one `kevo eval` is abandoned (default 900)
#   PYTHON     python3 used to read the JSON (default python3)
#   QUIET=1    no progress lines on stderr
#
# Leak check: every `kevo eval` runs with KEVO_API_KEY set to a canary
# ($CANARY below). A case fails, in any mode, when kevo's stdout or stderr
# contains the canary or /etc/shadow-style lines ("$6$" hashes, ":!:",
# name:hash:days:...:::), or "root:x:0:0" (/etc/passwd), also without the
# anti-hack gate (the compilers' minimal root has no /etc/passwd). In the normal mode
# stdout must not contain "nologin" or "/bin/bash" either. A leaking case's
# feedback and stderr are not printed.
#
# Cost: every evaluation builds and runs the reference, so expect 5-15 s per
# case (about 115 cases: 10-20 minutes on a 2-core machine; ctest allows
# integration tests 1200 s).
#
# Prints one line per case, `ok|FAIL <case> expected X got Y`, then
# `N passed, M failed`; exits 1 on any failure, 2 when it cannot run at all.
# Never run the adversarial candidates any other way: they are hostile
# (fork bombs, CPU hogs, file and network probes).
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
JOBS=${JOBS:-2}
ONLY=${ONLY:-}
CASE_TIMEOUT=${CASE_TIMEOUT:-900}
PY=${PYTHON:-python3}
CANARY=kevo-adv-canary-5e1d
ADV=$KEVO_SRC/tests/adversarial
CAND=$KEVO_SRC/tests/candidates
EXPECTED=$ADV/expected.txt

die() { echo "test_adversarial: $*" >&2; exit 2; }
[ -x "$KEVO" ] || die "KEVO=$KEVO is not an executable"
[ -f "$EXPECTED" ] || die "$EXPECTED missing (KEVO_SRC=$KEVO_SRC)"
"$PY" -c 'import json' 2>/dev/null || die "$PY cannot import json"

help=$("$KEVO" eval --help 2>&1) || die "\`$KEVO eval --help\` failed: is eval implemented? $(echo "$help" | head -3)"
EVAL_FLAGS=(--json)
if grep -q -- '--quick' <<<"$help"; then
    EVAL_FLAGS+=(--quick)
fi
grep -q -- '--unsafe-skip-antihack' <<<"$help" ||
    echo "note: \`kevo eval --help\` does not mention --unsafe-skip-antihack; those cases will likely fail"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kevo-adv.XXXXXX") || die "mktemp failed"
cleanup() {
    local p
    for p in $(jobs -p); do kill "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- collect the cases --------------------------------------------------
# Parallel arrays, one entry per evaluation.
NAMES=() TASKS=() FILES=() MODES=() EXPECTS=()
add_case() { # name task file mode expected
    if [ -n "$ONLY" ] && ! [[ $1 =~ $ONLY ]]; then
        return
    fi
    NAMES+=("$1") TASKS+=("$2") FILES+=("$3") MODES+=("$4") EXPECTS+=("$5")
}

SETUP_ERRORS=()
while read -r rel normal skip rest; do
    case $rel in '' | '#'*) continue ;; esac
    folder=${rel%%/*}
    file=$ADV/$rel
    taskfile=$ADV/$folder/TASK
    if [ ! -f "$file" ] || [ ! -f "$taskfile" ] || [ -z "$normal" ] || [ -n "${rest:-}" ]; then
        SETUP_ERRORS+=("expected.txt line for '$rel': missing file, missing $folder/TASK or bad fields")
        continue
    fi
    task=$KEVO_SRC/$(head -1 "$taskfile")
    add_case "$rel" "$task" "$file" normal "$normal"
    if [ -n "${skip:-}" ]; then
        add_case "$rel [no-antihack]" "$task" "$file" skip "$skip"
    fi
done <"$EXPECTED"

# every candidate file must have an expected line
for f in "$ADV"/*/*.c; do
    rel=${f#"$ADV"/}
    grep -qE "^${rel//./\\.}[[:space:]]" "$EXPECTED" || SETUP_ERRORS+=("$rel has no line in expected.txt")
done

for d in "$CAND"/*/; do
    [ -d "$d" ] || continue
    t=$(basename "$d")
    task=$KEVO_SRC/suites/c/level1/$t
    for kind in correct incorrect; do
        if [ -f "$d/$kind.c" ]; then
            add_case "candidates/$t/$kind.c" "$task" "$d/$kind.c" normal "$kind"
        else
            SETUP_ERRORS+=("candidates/$t/$kind.c missing")
        fi
    done
done

# ---- run ------------------------------------------------------------------
run_case() { # index
    local i=$1 start end rc
    local -a flags=("${EVAL_FLAGS[@]}")
    [ "${MODES[$i]}" = skip ] && flags+=(--unsafe-skip-antihack)
    start=$(date +%s.%N)
    KEVO_API_KEY=$CANARY timeout -k 10 "$CASE_TIMEOUT" "$KEVO" eval "${flags[@]}" "${TASKS[$i]}" "${FILES[$i]}" \
        >"$WORK/$i.out" 2>"$WORK/$i.err" </dev/null
    rc=$?
    end=$(date +%s.%N)
    echo "$rc" >"$WORK/$i.rc"
    echo "$start $end" | awk '{printf "%.1f\n", $2 - $1}' >"$WORK/$i.secs"
    [ "${QUIET:-0}" = 1 ] || echo "  ... [$((i + 1))/$n] ${NAMES[$i]} (exit $rc, $(cat "$WORK/$i.secs")s)" >&2
}

n=${#NAMES[@]}
echo "kevo: $KEVO; flags: ${EVAL_FLAGS[*]}; $n evaluations, $JOBS at a time"
# Cases judged on their speedup (`!correct-fast`) run alone, so that a
# concurrent evaluation neither disturbs their timing nor gets caught in
# their attack on timing (renice_hog, cpu_hog).
for ((i = 0; i < n; i++)); do
    if [[ ${EXPECTS[$i]} == *'!correct-fast'* ]]; then
        wait
        run_case "$i"
        continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
        wait -n 2>/dev/null || true
    done
    run_case "$i" &
done
wait

# ---- judge ----------------------------------------------------------------
# parse OUT ERR MODE EXPECTED -> verdict, speedup, problems, feedback, leaked
# (1 when kevo's output leaks a secret), separated by \x1f
parse() {
    "$PY" - "$1" "$2" "$3" "$4" "$CANARY" <<'PYEOF'
import json, re, sys
path, err_path, mode, expected, canary = sys.argv[1:6]
raw = open(path, encoding="utf-8", errors="replace").read()
try:
    err = open(err_path, encoding="utf-8", errors="replace").read()
except OSError:
    err = ""
problems = []
verdict, speedup, feedback = "no-json", "none", ""
try:
    obj = json.loads(raw)
except Exception as e:
    obj = None
    feedback = "stdout is not one JSON object: " + raw.strip().replace("\n", " ")[:300]
if isinstance(obj, dict):
    verdict = str(obj.get("verdict", "no-verdict"))
    fb = obj.get("feedback")
    if not isinstance(fb, str):
        problems.append("no feedback string")
        fb = ""
    feedback = " ".join(fb.split())[:400]
    gates = obj.get("gates")
    if not isinstance(gates, list) or not gates:
        problems.append("no gates array")
    else:
        for g in gates:
            if not isinstance(g, dict) or "name" not in g or "ok" not in g:
                problems.append("gate entry without name/ok")
                break
    lat = obj.get("latency")
    if isinstance(lat, dict):
        s = lat.get("speedup")
        if isinstance(s, (int, float)):
            speedup = repr(float(s))
    if verdict == "correct":
        if not isinstance(lat, dict):
            problems.append("correct but no latency object")
        elif speedup == "none" or not float(speedup) > 0:
            problems.append("correct but latency.speedup is not > 0 (%s)" % speedup)
        else:
            for k in ("candidate_us", "reference_us"):
                if not isinstance(lat.get(k), (int, float)) or not lat.get(k) > 0:
                    problems.append("correct but latency.%s is not > 0" % k)
# Candidates try to make the compiler or assembler quote /etc/passwd.
old_passwd = mode == "normal" and any(m in raw for m in ("root:x:0:0", "nologin", "/bin/bash"))
if old_passwd:
    problems.append("output leaks the contents of /etc/passwd")
# ... or make kevo (root) read its environment or /etc/shadow for them.
leaks = []
both = raw + "\n" + err
if canary in both:
    leaks.append("kevo's environment (the KEVO_API_KEY canary)")
if ("$6$" in both or ":!:" in both or
        re.search(r"[a-z_][a-z0-9_.-]*\$?:[^:\s\"]*:[0-9]*:[0-9]*:[0-9]*:[0-9]*:[0-9]*:[0-9]*:", both)):
    leaks.append("/etc/shadow-style lines")
if "root:x:0:0" in both:
    leaks.append("/etc/passwd")
if leaks:
    problems.append("output leaks " + ", ".join(leaks))
print("\x1f".join([verdict, speedup, "; ".join(problems), feedback,
                    "1" if leaks or old_passwd else "0"]))
PYEOF
}

# matches EXPECTED VERDICT SPEEDUP -> 0 when one alternative matches
matches() {
    local alt verdict=$2 speedup=$3
    local IFS='|'
    for alt in $1; do
        case $alt in
        '!correct-fast')
            if [ "$verdict" = correct ] && [ "$speedup" != none ] &&
                awk -v s="$speedup" 'BEGIN { exit !(s + 0 < 3) }'; then
                return 0
            fi
            ;;
        usage-error)
            # bad input: one line on stderr, no JSON, exit status 2
            [ "$verdict" = no-json ] && [ "${rc:-}" = 2 ] && return 0
            ;;
        '!correct')
            case $verdict in
            correct | infra_error | no-json | no-verdict) ;;
            *) return 0 ;;
            esac
            ;;
        *)
            [ "$verdict" = "$alt" ] && return 0
            ;;
        esac
    done
    return 1
}

expected_rc() {
    case $1 in
    correct) echo 0 ;;
    infra_error) echo 3 ;;
    *) echo 1 ;;
    esac
}

pass=0 fail=0
FAILED=()
for e in "${SETUP_ERRORS[@]+"${SETUP_ERRORS[@]}"}"; do
    echo "FAIL setup: $e"
    fail=$((fail + 1))
    FAILED+=("setup: $e")
done
for ((i = 0; i < n; i++)); do
    rc=$(cat "$WORK/$i.rc" 2>/dev/null || echo '?')
    secs=$(cat "$WORK/$i.secs" 2>/dev/null || echo '?')
    IFS=$'\x1f' read -r verdict speedup problems feedback leaked < <(parse "$WORK/$i.out" \
        "$WORK/$i.err" "${MODES[$i]}" "${EXPECTS[$i]}")
    # kevo refuses some inputs outright (exit status 2, a message, no JSON)
    if [ "$verdict" = no-json ] && [ "$rc" = 2 ]; then
        verdict=bad-input
        feedback="exit status 2: $(head -c 300 "$WORK/$i.err" | tr '\n' ' ')"
    fi
    got=$verdict
    [ "$verdict" = correct ] && got="correct (speedup $(printf '%.2f' "$speedup" 2>/dev/null || echo "$speedup"))"
    notes=()
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        notes+=("kevo eval itself did not finish within ${CASE_TIMEOUT}s")
    fi
    ok=1
    matches "${EXPECTS[$i]}" "$verdict" "$speedup" || ok=0
    [ -n "$problems" ] && { ok=0; notes+=("$problems"); }
    if [ "$verdict" != no-json ] && [ "$verdict" != no-verdict ] && [ "$verdict" != bad-input ] &&
        [ "$rc" != "$(expected_rc "$verdict")" ]; then
        ok=0
        notes+=("exit status $rc, expected $(expected_rc "$verdict") for $verdict")
    fi
    line="${NAMES[$i]} expected ${EXPECTS[$i]} got $got (${secs}s)"
    if [ $ok = 1 ]; then
        echo "ok   $line"
        pass=$((pass + 1))
    else
        echo "FAIL $line"
        for note in "${notes[@]+"${notes[@]}"}"; do echo "       $note"; done
        if [ "${leaked:-0}" = 1 ]; then
            echo "       (feedback and stderr not shown: they leak secrets)"
        else
            [ -n "$feedback" ] && echo "       feedback: $feedback"
            if [ -s "$WORK/$i.err" ]; then
                echo "       stderr: $(head -c 300 "$WORK/$i.err" | tr '\n' ' ')"
            fi
        fi
        fail=$((fail + 1))
        FAILED+=("$line")
    fi
done

echo "$pass passed, $fail failed"
if [ "$fail" -gt 0 ]; then
    printf '  failed: %s\n' "${FAILED[@]}"
    exit 1
fi
exit 0
