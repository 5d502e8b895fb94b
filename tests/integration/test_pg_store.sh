#!/usr/bin/env bash
# test_pg_store.sh - kevo's commands against a PostgreSQL store, end to end:
# bad input (a closed port, a wrong password, a store written by a newer
# kevo) exits non-zero with one line naming the database and never the
# password; a password given in the URL or in PGPASSWORD works and is never
# printed; `kevo run` of one small task into PostgreSQL, then `kevo report`
# and `kevo memory stats` from it; `kevo memory export` from PostgreSQL and
# `import` into SQLite and back, both directions giving the same JSON lines;
# `kevo best` and `kevo memory filter` on PostgreSQL; `kevo submit` of two
# tasks worked by two `kevo worker` processes at once, each task once.
#
# The server: the ctest fixture's (KEVO_TEST_PG_URL_FILE, tests/helpers/
# pg_server.sh), else one started here. Exit 77 (skipped, the reason
# printed) when no PostgreSQL server binaries are installed.
# Needs KEVO (the binary) and KEVO_SRC (the source tree).
set -euo pipefail

: "${KEVO:?set KEVO to the kevo binary}"
: "${KEVO_SRC:?set KEVO_SRC to the source tree}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-pgstore.XXXXXX")
own_server=""
cleanup() {
    [ -n "$own_server" ] && bash "$KEVO_SRC/tests/helpers/pg_server.sh" stop "$own_server"
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

url=""
if [ -n "${KEVO_TEST_PG_URL_FILE:-}" ] && [ -s "$KEVO_TEST_PG_URL_FILE" ]; then
    url=$(head -1 "$KEVO_TEST_PG_URL_FILE")
else
    own_server=$(mktemp -d /tmp/kevo-pg.XXXXXX)
    set +e
    url=$(bash "$KEVO_SRC/tests/helpers/pg_server.sh" start "$own_server" 2>"$tmp/server.err")
    rc=$?
    set -e
    if [ $rc -eq 77 ]; then
        echo "test_pg_store: skipped: $(tail -1 "$tmp/server.err")"
        exit 77
    fi
    [ $rc -eq 0 ] || { cat "$tmp/server.err" >&2; fail "cannot start a test server"; }
fi
case "$url" in
skip:*) echo "test_pg_store: skipped: no PostgreSQL test server:${url#skip:}"; exit 77 ;;
esac
# the socket folder of the test server
host=${url#*host=}
host=${host%%&*}
psql_bin=$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | tail -1)
[ -n "$psql_bin" ] || psql_bin=psql
admin() { "$psql_bin" -X -q -v ON_ERROR_STOP=1 "$url" -c "SET client_min_messages = warning" -c "$1" >/dev/null; }

# a fresh schema (owned by the password role, so both logins can use it):
# its name into $schema, the URL whose connections work in it into $surl
n_schema=0
new_schema() {
    n_schema=$((n_schema + 1))
    schema="kevo_it_$$_$n_schema"
    admin "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema AUTHORIZATION kevo_pw"
    surl="$url&options=-csearch_path%3D$schema"
}

# run CMD, expecting a non-zero exit and exactly one line on stderr that
# holds every PATTERN; nothing on stdout
expect_one_line() { # expect_one_line 'PATTERN|PATTERN' CMD...
    local want=$1; shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    set -e
    [ "$got" -ne 0 ] || fail "'$*' exited 0"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err" >&2; fail "'$*' printed $(wc -l <"$tmp/err") lines, want 1"; }
    IFS='|' read -ra pats <<<"$want"
    for p in "${pats[@]}"; do
        grep -q -- "$p" "$tmp/err" || { cat "$tmp/err" >&2; fail "'$*': no '$p' in its message"; }
    done
    [ ! -s "$tmp/out" ] || { cat "$tmp/out" >&2; fail "'$*' printed on stdout"; }
    echo "  $(cat "$tmp/err")"
}
no_secret() { # no_secret SECRET FILE...
    local s=$1; shift
    if grep -q -- "$s" "$@"; then fail "the password '$s' was printed: $(grep -h -- "$s" "$@")"; fi
}

echo "bad input:"
# a closed port: the host and port are named, the password is not
expect_one_line "127.0.0.1:1|cannot connect" \
    "$KEVO" memory stats --db "postgresql://kevo:ClosedPortPw1@127.0.0.1:1/kevo?connect_timeout=5"
no_secret ClosedPortPw1 "$tmp/out" "$tmp/err"
# a wrong password (the role must give one: pg_hba.conf scram for kevo_pw)
new_schema; u=$surl
bad="postgresql://kevo_pw:WrongPw2@/kevo?host=$host&options=-csearch_path%3D$schema"
expect_one_line "kevo_pw@|/kevo|password authentication failed" "$KEVO" memory stats --db "$bad"
no_secret WrongPw2 "$tmp/out" "$tmp/err"
expect_one_line "password authentication failed" env PGPASSWORD=WrongPw3 "$KEVO" memory stats \
    --db "postgresql://kevo_pw@/kevo?host=$host"
no_secret WrongPw3 "$tmp/out" "$tmp/err"
# a key=value string with a wrong password
expect_one_line "password authentication failed" \
    "$KEVO" memory stats --db "pg:host=$host dbname=kevo user=kevo_pw password=WrongPw4"
no_secret WrongPw4 "$tmp/out" "$tmp/err"
# a missing database
expect_one_line "nosuchdb|does not exist" "$KEVO" memory stats --db "postgresql:///nosuchdb?host=$host&user=postgres"

# the right password, in the URL and in PGPASSWORD: it works, and is never
# printed (the store is shown as user@host/db)
good="postgresql://kevo_pw:kevo-test-secret@/kevo?host=$host&options=-csearch_path%3D$schema"
# (import opens, creating the store, before it reads: /dev/null then fails)
"$KEVO" memory import /dev/null --db "$good" >"$tmp/out" 2>"$tmp/err" || true
no_secret kevo-test-secret "$tmp/out" "$tmp/err"
"$KEVO" memory stats --db "$good" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "stats with the right password"; }
grep -q "^memory      postgresql://kevo_pw@/kevo" "$tmp/out" || { cat "$tmp/out"; fail "stats does not name the store"; }
no_secret kevo-test-secret "$tmp/out" "$tmp/err"
PGPASSWORD=kevo-test-secret "$KEVO" memory stats --json \
    --db "postgresql://kevo_pw@/kevo?host=$host&options=-csearch_path%3D$schema" >"$tmp/out" 2>"$tmp/err" \
    || { cat "$tmp/err" >&2; fail "stats with PGPASSWORD"; }
grep -q '"attempts":0' "$tmp/out" || fail "stats --json"
no_secret kevo-test-secret "$tmp/out" "$tmp/err"

# a run submitted with the password in the URL: not in what it prints, not
# in the run's stored configuration, not in an export
"$KEVO" submit "$KEVO_SRC/suites/c/level1/001_relu" --iterations 1 --quick --db "$good" \
    >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "submit with the right password"; }
no_secret kevo-test-secret "$tmp/out" "$tmp/err"
"$psql_bin" -X -At "$url" -c "SELECT config FROM $schema.runs" >"$tmp/config.txt"
grep -q . "$tmp/config.txt" || fail "no run stored"
no_secret kevo-test-secret "$tmp/config.txt"
"$KEVO" memory export "$tmp/pw.jsonl" --db "$good" 2>"$tmp/err"
no_secret kevo-test-secret "$tmp/pw.jsonl" "$tmp/err"

# a store written by a newer kevo: one line naming both versions
admin "UPDATE $schema.kevo_meta SET value = '99' WHERE key = 'schema_version'"
expect_one_line "newer kevo|schema version 99|knows up to" "$KEVO" memory stats --db "$u"
admin "DROP SCHEMA $schema CASCADE"
# an empty schema is no store (read commands do not create one)
new_schema; u=$surl
expect_one_line "no such memory store" "$KEVO" memory stats --db "$u"

echo "kevo run into PostgreSQL:"
new_schema; db=$surl
cd "$tmp"
"$KEVO" run "$KEVO_SRC/suites/c/level1/001_relu" --iterations 2 --quick --db "$db" \
    >"$tmp/run.out" 2>"$tmp/run.err" || { tail -20 "$tmp/run.err" "$tmp/run.out" >&2; fail "kevo run"; }
grep -q "store postgresql:///kevo" "$tmp/run.out" "$tmp/run.err" || { cat "$tmp/run.out"; fail "the run does not name its store"; }
"$KEVO" report --db "$db" >"$tmp/report.txt" 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "kevo report"; }
grep -q "relu" "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "the report does not show the task"; }
"$KEVO" report --db "$db" --format json >"$tmp/report.json"
python3 - "$tmp/report.json" <<'EOF' || fail "report json"
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"] if isinstance(r, dict) and "runs" in r else [r]
assert any(x.get("tasks") == 1 for x in runs), runs
EOF
"$KEVO" memory stats --db "$db" | grep -q "attempts    2 " || { "$KEVO" memory stats --db "$db"; fail "two attempts stored"; }

echo "export / import both ways:"
"$KEVO" memory export "$tmp/pg.jsonl" --db "$db" 2>/dev/null
"$KEVO" memory import "$tmp/pg.jsonl" --db "$tmp/copy.db" 2>/dev/null
"$KEVO" memory export "$tmp/sqlite.jsonl" --db "$tmp/copy.db" 2>/dev/null
cmp <(sort "$tmp/pg.jsonl") <(sort "$tmp/sqlite.jsonl") || fail "PostgreSQL -> SQLite export differs"
new_schema; back=$surl
"$KEVO" memory import "$tmp/sqlite.jsonl" --db "$back" 2>/dev/null
"$KEVO" memory export "$tmp/back.jsonl" --db "$back" 2>/dev/null
cmp <(sort "$tmp/sqlite.jsonl") <(sort "$tmp/back.jsonl") || fail "SQLite -> PostgreSQL export differs"
# importing again adds nothing
"$KEVO" memory import "$tmp/sqlite.jsonl" --db "$back" 2>"$tmp/import2.log"
grep -q "imported 0 runs, 0 tasks, 0 items, 0 attempts" "$tmp/import2.log" || { cat "$tmp/import2.log"; fail "second import added"; }
grep -c . "$tmp/pg.jsonl" | grep -qv '^[0-5]$' || fail "the export is nearly empty"

echo "best kernels and filter from PostgreSQL:"
"$KEVO" best --db "$db" --out "$tmp/best" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; fail "kevo best"; }
ls "$tmp/best" | grep -q "relu" || { ls -R "$tmp/best"; fail "kevo best wrote no relu kernel"; }
"$KEVO" memory filter --exclude-tasks relu --db "$back" 2>"$tmp/filter.log" || { cat "$tmp/filter.log" >&2; fail "filter"; }
grep -q "removed 1 tasks, 2 attempts" "$tmp/filter.log" || { cat "$tmp/filter.log"; fail "filter summary"; }
"$KEVO" memory export "$tmp/filtered.jsonl" --db "$back" 2>/dev/null
! grep -q '"relu"' "$tmp/filtered.jsonl" || fail "the export still names relu after filter"

echo "kevo submit + two kevo worker processes on one PostgreSQL store:"
new_schema; shared=$surl
t1="$KEVO_SRC/suites/c/level1/001_relu"
t2="$KEVO_SRC/suites/c/level1/002_leaky_relu"
"$KEVO" submit "$t1" "$t2" --iterations 2 --quick --db "$shared" >"$tmp/submit.out" 2>&1 \
    || { cat "$tmp/submit.out" >&2; fail "kevo submit"; }
"$KEVO" worker --db "$shared" --until-idle --quiet >"$tmp/w1.log" 2>&1 &
w1=$!
"$KEVO" worker --db "$shared" --until-idle --quiet >"$tmp/w2.log" 2>&1 \
    || { cat "$tmp/w2.log" >&2; fail "worker 2"; }
wait $w1 || { cat "$tmp/w1.log" >&2; fail "worker 1"; }
"$KEVO" status --db "$shared" >"$tmp/status.out" 2>&1 || { cat "$tmp/status.out" >&2; fail "kevo status"; }
grep -q "2 tasks: 0 queued, 0 running, 2 done, 0 failed; 4 attempts" "$tmp/status.out" \
    || { cat "$tmp/status.out"; fail "the shared run did not finish its 2 tasks x 2 attempts once each"; }
"$psql_bin" -X -At "$url" -c "SELECT count(*) FROM $schema.work WHERE claims = 1" | grep -qx 2 \
    || fail "a task was claimed more than once"

admin "DO \$\$ DECLARE s text; BEGIN FOR s IN SELECT nspname FROM pg_namespace WHERE nspname LIKE 'kevo_it_$$\\_%' LOOP EXECUTE 'DROP SCHEMA ' || s || ' CASCADE'; END LOOP; END \$\$"
echo "test_pg_store: ok"
