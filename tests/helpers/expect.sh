# tests/helpers/expect.sh - sourced by the integration tests that check a
# command's exit status: fail MESSAGE, and expect_status CODE CMD... (runs
# CMD with its stdout in $tmp/out and stderr in $tmp/err, both shown when
# the status is not CODE). The sourcing script sets tmp (a scratch folder)
# and runs under `set -e`.
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_status() { # expect_status CODE CMD...
    local want=$1; shift
    set +e
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    set -e
    [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, expected $want"; }
}
