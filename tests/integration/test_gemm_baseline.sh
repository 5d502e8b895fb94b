#!/usr/bin/env bash
# test_gemm_baseline.sh - bench/gemm_baseline.c at tiny sizes: every GEMM
# task of its table, timed with its own reference as the kernel, agrees
# with OpenBLAS (so each cblas_sgemm mapping - transposes, batch loop,
# BATCH*M rows - is the task's), prints its table line and the thread
# count; a kevo-style kernel with a `// kevo: cflags -fopenmp` hint runs
# with 2 threads; a kernel that leaves part of C unwritten, and one that
# accumulates into C, fail the cross-check (exit 1, "FAILED"; in --json
# cross_check FAILED and a null error for the unwritten one); a task
# outside the table (relu) and a size the task does not have are refused
# (exit 2, by name), a file without the task's function too (exit 3);
# --json is one JSON object. Hostile kernels, which the bench runs in
# kevo's sandbox: a connect to 127.0.0.1, fork and system() are killed and
# reported (exit 1, a line naming the kernel file, no row); files written
# into $HOME, $TMPDIR and /tmp (from a constructor and from the call) are
# not written; KEVO_TEST_SECRET, exported here, is seen neither through
# getenv nor through the parent's /proc/PID/environ; an endless loop ends
# at --timeout 2, reported as timed out. Skipped (77) without
# libopenblas.so.0 (apt-get install -y libopenblas0-pthread).
# Needs KEVO_SRC (the source tree) and KEVO_BUILD (the build folder).
set -euo pipefail

: "${KEVO_SRC:?set KEVO_SRC to the source tree}"
: "${KEVO_BUILD:?set KEVO_BUILD to the build folder}"
BENCH=$KEVO_BUILD/bench_gemm_baseline
[ -x "$BENCH" ] || { echo "FAIL: no $BENCH (build the bench targets)" >&2; exit 1; }
if ! python3 -c "import ctypes; ctypes.CDLL('libopenblas.so.0')" 2>/dev/null; then
    echo "skipped: libopenblas.so.0 is not installed (apt-get install -y libopenblas0-pthread)"
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kevo-gemm-baseline.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
L1=$KEVO_SRC/suites/c/level1

. "$KEVO_SRC/tests/helpers/expect.sh" # fail, expect_status

# every task of the table, odd tiny sizes, the reference standing in for the kernel
for spec in "015_matmul_square matmul_square N=37" \
    "016_matmul_rect matmul_rect M=13 N=17 K=29" \
    "017_matmul_tall_skinny matmul_tall_skinny M=101 N=9 K=3" \
    "018_matmul_batched matmul_batched BATCH=3 M=5 N=11 K=7" \
    "020_matmul_trans_a matmul_trans_a M=13 N=17 K=29" \
    "021_matmul_trans_b matmul_trans_b M=13 N=17 K=29" \
    "023_matmul_3d_tensor matmul_3d_tensor BATCH=3 M=5 N=11 K=7"; do
    read -r -a words <<<"$spec"
    set -- "${words[@]}"
    dir=$1 name=$2
    shift 2
    args=()
    for s in "$@"; do args+=(--size "$s"); done
    expect_status 0 "$BENCH" "$L1/$dir" "$L1/$dir/reference.c" "${args[@]}" --threads 2 \
        --rounds 3 --warmup 1
    row=$(grep "^$name " "$tmp/out") || fail "$name: no table line"
    sizes=$(IFS=,; echo "$*")
    echo "$row" | grep -q " $sizes " || fail "$name: the line does not show the sizes $sizes: $row"
    echo "$row" | grep -q " ok$" || fail "$name: cross-check not ok: $row"
    grep -q "^# OpenBLAS: .*(2 threads)" "$tmp/out" || fail "$name: thread count not stated"
    grep -q "^# kernel: .*(1 thread, no -fopenmp)" "$tmp/out" || fail "$name: kernel threads"
done

# a kevo-style kernel: a cflags hint with -fopenmp, two threads
cat >"$tmp/omp.c" <<'EOF'
// kevo: cflags -fopenmp -ffast-math
#include <stdint.h>
void matmul_rect(const float *A, const float *B, float *C, int64_t M, int64_t N, int64_t K)
{
    #pragma omp parallel for
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++)
            C[i * N + j] = 0.0f;
        for (int64_t k = 0; k < K; k++)
            for (int64_t j = 0; j < N; j++)
                C[i * N + j] += A[i * K + k] * B[k * N + j];
    }
}
EOF
expect_status 0 "$BENCH" "$L1/016_matmul_rect" "$tmp/omp.c" --size M=33 --size N=17 --size K=67 \
    --threads 2 --rounds 3 --json
python3 - "$tmp/out" <<'PY' || fail "--json: $(cat "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["task"] == "matmul_rect" and r["sizes"] == {"M": 33, "N": 17, "K": 67}, r
assert r["threads"] == 2 and r["kernel_threads"] == 2, r
assert "-fopenmp" in r["kernel_build"] and "-fopenmp" not in r["reference_build"], r
assert r["cross_check"] == "ok", r
for c in ("kernel", "openblas", "reference"):
    assert r["contenders"][c]["calls"] == 3 and r["contenders"][c]["gflops"] > 0, r
PY

# wrong kernels fail the cross-check: half of C never written; C accumulated
cat >"$tmp/half.c" <<'EOF'
#include <stdint.h>
void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    for (int64_t i = 0; i < N / 2; i++)
        for (int64_t j = 0; j < N; j++) {
            float s = 0.0f;
            for (int64_t k = 0; k < N; k++)
                s += A[i * N + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
EOF
sed -e 's/c\[j\] = 0.0f;/;/' "$L1/015_matmul_square/reference.c" >"$tmp/accumulate.c"
grep -q 'c\[j\] = 0.0f' "$tmp/accumulate.c" && fail "the accumulate kernel still zeroes C"
for k in half accumulate; do
    expect_status 1 "$BENCH" "$L1/015_matmul_square" "$tmp/$k.c" --size N=19 --rounds 2
    grep -q "^matmul_square .* FAILED$" "$tmp/out" || fail "$k: no FAILED line"
    grep -q "outputs disagree with OpenBLAS" "$tmp/err" || fail "$k: no message"
done
expect_status 1 "$BENCH" "$L1/015_matmul_square" "$tmp/half.c" --size N=19 --rounds 2 --json
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["cross_check"] == "FAILED" and r["contenders"]["kernel"]["max_rel_err"] is None, r
assert r["contenders"]["reference"]["max_rel_err"] < 1e-3, r
' "$tmp/out" || fail "--json of a failed cross-check: $(cat "$tmp/out")"

# Hostile kernels (the attack before the defence): each must be a reported
# failure (exit 1, one line naming the kernel file, no table row) or
# harmless (the cross-check ok, nothing written, no secret seen).
# hostile NAME PRELUDE BODY: a correct matmul_square that first runs BODY
# (C statements) in the call; PRELUDE is file-scope C.
hostile() {
    cat >"$tmp/$1.c" <<EOF
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
$2
void matmul_square(const float *A, const float *B, float *C, int64_t N)
{
    $3
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            float s = 0.0f;
            for (int64_t k = 0; k < N; k++)
                s += A[i * N + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
EOF
}
# killed_as NAME WHY [OPTION...]: exit 1, one line naming the kernel file
# and WHY, no table row
killed_as() {
    local name=$1 why=$2
    shift 2
    expect_status 1 "$BENCH" "$L1/015_matmul_square" "$tmp/$name.c" --size N=16 --rounds 2 \
        --warmup 1 "$@"
    grep -q "^bench_gemm_baseline: $tmp/$name.c: no measurement: .*$why" "$tmp/err" ||
        fail "$name: no failure line naming the kernel and '$why': $(cat "$tmp/err")"
    if grep -q "^matmul_square " "$tmp/out"; then
        fail "$name: a killed run printed a row: $(cat "$tmp/out")"
    fi
}
# a socket to 127.0.0.1, with a listener there in case the call got through
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(15)
try:
    c, _ = s.accept(); open(sys.argv[2], "w").write("connected")
except OSError:
    pass
' "$port" "$tmp/connected" &
listener=$!
sleep 0.3
hostile socket "" "int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons($port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0) C[0] = NAN;"
killed_as socket "SIGSYS"
sleep 0.2
[ ! -e "$tmp/connected" ] || fail "socket: the kernel reached 127.0.0.1:$port"
kill "$listener" 2>/dev/null || true
wait "$listener" 2>/dev/null || true
# fork, and system() (fork + exec of a shell)
hostile fork "" "pid_t p = fork(); if (p == 0) _exit(0); if (p > 0) waitpid(p, NULL, 0);"
killed_as fork "SIGSYS"
hostile system "" "if (system(\"touch $tmp/system-ran\") == 0) C[0] = NAN;"
killed_as system "SIGSYS"
[ ! -e "$tmp/system-ran" ] || fail "system: the kernel ran a shell command"
# files outside the work folder ($HOME, $tmp under TMPDIR, /tmp), from a
# constructor (it runs when the child loads the kernel) and from the call
esc_home=$HOME/.kevo-gemm-baseline-escape-$$
esc_tmp=$tmp/escape
esc_slash=/tmp/kevo-gemm-baseline-escape-$$
write_all='static void write_all(const char *tag)
{
    const char *paths[] = {"'"$esc_home"'", "'"$esc_tmp"'", "'"$esc_slash"'"};
    for (int i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s-%s", paths[i], tag);
        FILE *f = fopen(p, "w");
        if (f) { fputs("escaped", f); fclose(f); }
        snprintf(p, sizeof(p), "%s-%s-open", paths[i], tag);
        int fd = open(p, O_WRONLY | O_CREAT, 0644);
        if (fd >= 0) close(fd);
    }
}
__attribute__((constructor)) static void at_load(void) { write_all("ctor"); }'
hostile files "$write_all" 'write_all("call");'
set +e
"$BENCH" "$L1/015_matmul_square" "$tmp/files.c" --size N=16 --rounds 2 --warmup 1 >"$tmp/out" 2>"$tmp/err"
got=$?
set -e
[ "$got" = 0 ] || [ "$got" = 1 ] || { cat "$tmp/err" >&2; fail "files: exit $got, expected 0 or 1"; }
for f in "$esc_home" "$esc_tmp" "$esc_slash"; do
    for tag in ctor call ctor-open call-open; do
        if [ -e "$f-$tag" ]; then
            rm -f "$esc_home"-* "$esc_slash"-*
            fail "files: the kernel wrote $f-$tag"
        fi
    done
done
# the parent's environment: KEVO_TEST_SECRET must not reach the kernel,
# neither through getenv nor through the parent's /proc/PID/environ
export KEVO_TEST_SECRET="h11-secret-$$-$RANDOM"
hostile secret "" 'const char *s = getenv("KEVO_TEST_SECRET");
    char path[64], env[65536] = {0};
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)getppid());
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, env, sizeof(env) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++)
            if (!env[i])
                env[i] = 10;
    }
    const char *p = strstr(env, "KEVO_TEST_SECRET=");
    if (p)
        s = p + 17;
    if (s) {
        fprintf(stderr, "leaked %.60s\n", s);
        printf("leaked %.60s\n", s);
        C[0] = NAN;
        return;
    }'
expect_status 0 "$BENCH" "$L1/015_matmul_square" "$tmp/secret.c" --size N=16 --rounds 2 --warmup 1
grep -q "^matmul_square .* ok$" "$tmp/out" || fail "secret: no ok row: $(cat "$tmp/out")"
if grep -q "leaked\|$KEVO_TEST_SECRET" "$tmp/out" "$tmp/err"; then
    fail "secret: the kernel read KEVO_TEST_SECRET: $(cat "$tmp/out" "$tmp/err")"
fi
unset KEVO_TEST_SECRET
# a kernel that never returns: the wall-clock limit, reported as such
hostile spin "" 'for (volatile int forever = 1; forever;)
        ;'
killed_as spin "timed out" --timeout 2

# refusals: a task outside the table, a size the task does not have, no kernel function
expect_status 2 "$BENCH" "$L1/001_relu" "$L1/001_relu/reference.c"
grep -q "task \`relu\` .* is not GEMM-shaped" "$tmp/err" || fail "relu: $(cat "$tmp/err")"
expect_status 2 "$BENCH" "$L1/015_matmul_square" "$L1/015_matmul_square/reference.c" --size M=3
grep -q "has no size named M (its sizes: N)" "$tmp/err" || fail "--size M: $(cat "$tmp/err")"
expect_status 3 "$BENCH" "$L1/016_matmul_rect" "$L1/015_matmul_square/reference.c" --size M=3
grep -q "defines no function \`matmul_rect\`" "$tmp/err" || fail "no function: $(cat "$tmp/err")"
# the child's hidden mode, typed by hand (outside the sandbox), loads nothing
expect_status 2 "$BENCH" --measure "$tmp" a b c d e f "$L1/015_matmul_square" "$tmp/secret.c"
grep -q "runs only inside kevo's sandbox" "$tmp/err" || fail "--measure by hand: $(cat "$tmp/err")"
echo "ok"
