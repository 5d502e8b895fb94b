#!/usr/bin/env bash
# tests/integration/test_sandbox_root.sh - the sandboxed children's minimal
# root (src/sandbox/root.c) covers /tmp with a tmpfs of its own, so every
# folder it binds from the host must be held before that: a checkout (and so
# kevo's harness) and TMPDIR both under /tmp, as in a CI clone, must still
# build and judge a candidate.
#
# Environment: KEVO (the binary), KEVO_SRC (the source root).
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
KEVO=${KEVO:-$KEVO_SRC/build/kevo}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the minimal root is for root only)"; exit 77; }
work=$(mktemp -d /tmp/kevo-root-test.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp -r "$KEVO_SRC/harness" "$work/harness"
mkdir -p "$work/tmp"
v=$(KEVO_HARNESS_DIR=$work/harness TMPDIR=$work/tmp "$KEVO" eval --quick --json --no-latency \
    "$KEVO_SRC/suites/c/level1/001_relu" "$KEVO_SRC/tests/candidates/001_relu/correct.c" 2>&1 |
    python3 -c 'import json,sys
try: print(json.load(sys.stdin)["verdict"])
except Exception: print("no-json")')
if [ "$v" = correct ]; then
    echo "ok   harness and TMPDIR under /tmp: correct"
else
    echo "FAIL harness and TMPDIR under /tmp: got $v"
    exit 1
fi
