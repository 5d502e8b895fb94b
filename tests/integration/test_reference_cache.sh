#!/usr/bin/env bash
# tests/integration/test_reference_cache.sh - the reference cache makes an
# evaluation faster and never changes its verdict: an entry serves only the
# task content, machine and inputs it was computed from; a damaged entry,
# a changed reference, a folder others can write, KEVO_CACHE=off and a
# cache too small for the entry all end in the reference being built and
# run again, with the right verdict.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces, uids)"; exit 77; }

work=$(mktemp -d)
chmod 755 "$work" # runners (other uids) reach their build folders beneath it
trap 'rm -rf "$work"' EXIT
export KEVO_CACHE_DIR=$work/cache
unset KEVO_CACHE KEVO_CACHE_MAX_MB
fails=0 passes=0
check() { # cond description
    if eval "$1"; then echo "ok   $2"; passes=$((passes + 1)); else echo "FAIL $2"; fails=$((fails + 1)); fi
}

task=$work/relu
cp -r "$KEVO_SRC/suites/c/level1/001_relu" "$task"
good=$KEVO_SRC/tests/candidates/001_relu/correct.c
bad=$KEVO_SRC/tests/candidates/001_relu/incorrect.c

ev() { # candidate [task]: "verdict|reference line"
    local out
    out=$("$KEVO" eval --no-latency "${2:-$task}" "$1" 2>"$work/stderr")
    echo "$(sed -n 's/^verdict *//p' <<<"$out")|$(sed -n 's/^reference *//p' <<<"$out")"
}
entries() { find "$KEVO_CACHE_DIR/reference" -mindepth 1 -maxdepth 1 -not -name '.tmp-*' 2>/dev/null | wc -l; }

r=$(ev "$good")
check '[ "$r" = "correct|built and run for this evaluation" ]' "cold: built and run ($r)"
check '[ "$(entries)" = 1 ]' "cold: one entry stored"
mode=$(stat -c %a "$KEVO_CACHE_DIR/reference")
check '[ "$mode" = 700 ]' "the cache folder is private (mode $mode)"
r=$(ev "$good")
check '[ "$r" = "correct|outputs from the reference cache" ]' "warm: from the cache ($r)"
r=$(ev "$bad")
check '[ "$r" = "incorrect|outputs from the reference cache" ]' "warm: a wrong kernel is still wrong ($r)"

# The task's reference changes (same prototype, another function): the
# reference's old outputs must not be used.
cat >"$task/reference.c" <<'C'
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.01f * x[i];
}
C
r=$(ev "$good")
check '[ "$r" = "incorrect|built and run for this evaluation" ]' "changed reference: rebuilt, verdict follows it ($r)"
cp "$KEVO_SRC/suites/c/level1/001_relu/reference.c" "$task/reference.c"
r=$(ev "$good")
check '[ "$r" = "correct|outputs from the reference cache" ]' "original reference again: its entry serves ($r)"

# A damaged entry (one output byte flipped, one truncated) is a miss and is replaced.
for damage in flip truncate; do
    for f in "$KEVO_CACHE_DIR"/reference/*/results; do
        size=$(stat -c %s "$f")
        if [ $damage = flip ]; then
            printf '\x42' | dd of="$f" bs=1 seek=$((size - 4096)) conv=notrunc status=none
        else
            truncate -s $((size - 64)) "$f"
        fi
    done
    r=$(ev "$bad")
    check '[ "$r" = "incorrect|built and run for this evaluation" ]' "$damage: damaged entry not used ($r)"
    r=$(ev "$good")
    check '[ "$r" = "correct|outputs from the reference cache" ]' "$damage: entry replaced ($r)"
done

# Off, by environment and by flag.
r=$(KEVO_CACHE=off ev "$good")
check '[ "$r" = "correct|built and run for this evaluation" ]' "KEVO_CACHE=off ($r)"
out=$("$KEVO" eval --no-latency --no-cache "$task" "$good" | sed -n 's/^reference *//p')
check '[ "$out" = "built and run for this evaluation" ]' "--no-cache ($out)"

# A folder others can write is not trusted: warning, no cache, right verdict.
chmod 777 "$KEVO_CACHE_DIR/reference"
r=$(ev "$good")
check '[ "$r" = "correct|built and run for this evaluation" ]' "shared folder: not used ($r)"
check 'grep -q "not a folder private to this user" "$work/stderr"' "shared folder: a warning says why"
chmod 700 "$KEVO_CACHE_DIR/reference"

# Too small a cache: nothing stored; stale temporary folders of killed
# processes (over an hour old) are cleared on the next store.
rm -rf "$KEVO_CACHE_DIR/reference"/*
mkdir -p "$KEVO_CACHE_DIR/reference/.tmp-killed-1"
touch -d '2 hours ago' "$KEVO_CACHE_DIR/reference/.tmp-killed-1"
r=$(KEVO_CACHE_MAX_MB=1 ev "$good")
check '[ "$r" = "correct|built and run for this evaluation" ] && [ "$(entries)" = 0 ]' "1 MB cache: the entry is not stored ($r)"
r=$(ev "$good")
check '[ ! -e "$KEVO_CACHE_DIR/reference/.tmp-killed-1" ]' "a killed store's leftovers are cleared"
check '[ "$(entries)" = 1 ]' "and the entry is stored"

echo "$passes passed, $fails failed"
[ $fails = 0 ]
