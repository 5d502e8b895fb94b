#!/usr/bin/env bash
# test_memory_cli.sh - `kevo memory` end to end: stats, list, show, graph
# (text and DOT), export -> import round trip, idempotent import, filter
# leaving no trace, and bad usage / bad input exiting 2 with one clear line.
# Needs KEVO (the binary) and KEVO_BUILD (for tests/memory_seed).
set -euo pipefail

: "${KEVO:?set KEVO to the kevo binary}"
: "${KEVO_BUILD:?set KEVO_BUILD to the build directory}"
SEED="$KEVO_BUILD/tests/memory_seed"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-memcli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }
expect_status() { # expect_status CODE CMD...
    local want=$1; shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    set -e
    [ "$got" = "$want" ] || { cat "$tmp/err" >&2; fail "'$*' exited $got, expected $want"; }
    if [ "$want" != 0 ]; then
        [ "$(wc -l <"$tmp/err")" -ge 1 ] || fail "'$*' printed no error line"
    fi
}

"$SEED" a.db

# stats / list / show
"$KEVO" memory stats --db a.db | grep -q "attempts    10 (6 correct)" || fail "stats"
"$KEVO" memory --db a.db stats --json | grep -q '"attempts":10' || fail "stats --json"
"$KEVO" memory list tasks --db a.db | grep -q "^seed_relu" || fail "list tasks"
"$KEVO" memory list attempts --db a.db --task seed_softmax --limit 0 | grep -c "seed_softmax" \
    | grep -qx 5 || fail "list attempts"
"$KEVO" memory list items --db a.db --kind experience --limit 3 | tail -n +2 | wc -l | grep -qx 3 \
    || fail "list items --limit"
"$KEVO" memory list runs --db a.db | grep -q "done" || fail "list runs"
first_item=$("$KEVO" memory list --db a.db --kind api_doc --limit 0 | tail -1 | cut -f1)
"$KEVO" memory show "$first_item" --db a.db | grep -q "^item $first_item (api_doc)" || fail "show item"
"$KEVO" memory show attempt:2 --db a.db | grep -q "^attempt 2 of task seed_relu" || fail "show attempt"
"$KEVO" memory show run:1 --db a.db | grep -q "^run 1: running" || fail "show run"
"$KEVO" memory show task:seed_relu --db a.db | grep -q "Elementwise ReLU" || fail "show task"

# graph
"$KEVO" memory graph --task seed_relu --db a.db >graph.txt
grep -q "^task seed_relu: 5 attempts, 3 correct, best #" graph.txt || fail "graph header"
grep -q "^#2 draft it1 correct 1.25x" graph.txt || fail "graph root"
grep -q "^├── #3 refine it2 correct 2.50x" graph.txt || fail "graph child"
grep -q "^│   └── #5 refine it4 correct 3.33x" graph.txt || fail "graph grandchild"
grep -q "^└── #4 refine it3 compile_error" graph.txt || fail "graph last child"
"$KEVO" memory graph --task seed_relu --dot --db a.db >graph.dot
head -1 graph.dot | grep -q '^digraph "seed_relu" {' || fail "dot header"
grep -q "a2 -> a3;" graph.dot || fail "dot edge"
grep -q "a3 -> a5;" graph.dot || fail "dot edge 2"
tail -1 graph.dot | grep -qx "}" || fail "dot end"
if command -v dot >/dev/null; then dot -Tsvg graph.dot >/dev/null || fail "dot does not parse"; fi

# export -> import -> export is exact; importing again adds nothing
"$KEVO" memory export a.jsonl --db a.db
"$KEVO" memory import a.jsonl --db b.db 2>import.log
grep -q "imported 3 runs, 2 tasks" import.log || fail "import summary"
"$KEVO" memory export b.jsonl --db b.db
cmp a.jsonl b.jsonl || fail "round trip differs"
"$KEVO" memory import a.jsonl --db b.db 2>import2.log
grep -q "imported 0 runs, 0 tasks, 0 items, 0 attempts" import2.log || fail "second import added"
"$KEVO" memory export - --db b.db >b2.jsonl
cmp a.jsonl b2.jsonl || fail "export to stdout differs"
"$KEVO" memory --db c.db import - <a.jsonl 2>/dev/null
"$KEVO" memory export c.jsonl --db c.db
cmp a.jsonl c.jsonl || fail "import from stdin differs"

# filter leaves no trace of the excluded task
"$KEVO" memory filter --exclude-tasks seed_softmax --db b.db 2>filter.log
grep -q "removed 1 tasks, 5 attempts" filter.log || fail "filter summary"
"$KEVO" memory export f.jsonl --db b.db
! grep -q "seed_softmax" f.jsonl || fail "export still names seed_softmax"
! grep -aq "seed_softmax" b.db || fail "store file still holds seed_softmax"
grep -q "seed_relu" f.jsonl || fail "filter removed too much"
"$KEVO" memory stats --db b.db | grep -q "attempts    5 (3 correct)" || fail "stats after filter"
expect_status 2 "$KEVO" memory graph --task seed_softmax --db b.db
grep -q "seed_softmax" "$tmp/err" || fail "graph of a removed task: message"

# bad usage and bad input: exit 2, one clear line
expect_status 2 "$KEVO" memory
expect_status 2 "$KEVO" memory frobnicate --db a.db
expect_status 2 "$KEVO" memory stats --db missing.db
grep -q "missing.db: no such memory store" "$tmp/err" || fail "missing store message"
[ ! -e missing.db ] || fail "stats created a store"
expect_status 2 "$KEVO" memory show --db a.db
expect_status 2 "$KEVO" memory show item:999 --db a.db
expect_status 2 "$KEVO" memory show widget:3 --db a.db
expect_status 2 "$KEVO" memory list --kind wisdom --db a.db
expect_status 2 "$KEVO" memory list --limit -3 --db a.db
expect_status 2 "$KEVO" memory filter --db a.db
expect_status 2 "$KEVO" memory graph --db a.db
expect_status 2 "$KEVO" memory export --db a.db
expect_status 2 "$KEVO" memory --db a.db --bogus stats
printf '{"type":"header","format":"kevo-memory","version":1}\n{"type":"item","id":1}\n' >bad.jsonl
expect_status 2 "$KEVO" memory import bad.jsonl --db d.db
grep -q "bad.jsonl:2: missing field 'uid'" "$tmp/err" || fail "bad import message"
echo "not a database at all, just text that is long enough to not be empty......" >notes.db
expect_status 2 "$KEVO" memory stats --db notes.db
expect_status 0 "$KEVO" memory --help
grep -q "usage: kevo memory" "$tmp/out" || fail "help"
"$KEVO" --help | grep -q "memory" || fail "kevo --help lists memory"

echo "test_memory_cli: ok"
