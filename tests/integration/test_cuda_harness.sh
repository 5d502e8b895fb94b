#!/usr/bin/env bash
# tests/integration/test_cuda_harness.sh - the CUDA runner's host logic
# without a GPU: harness/runner.c + harness/runner_cuda.cu are built with
# g++ against tests/helpers/fake_cuda/cuda_runtime.h (host memory for device
# memory, a host function for the launcher), and driven over the runner
# protocol (harness/protocol.h: memfds for the buffers, 'X'/'d' on the
# pipes) by a small Python client. Checks: outputs come back, the poisoned output reaches the "device", a write past the end
# of an output is reported as an overrun of that param, a kernel fault ends
# the runner with KEVO_RUNNER_EXIT_DEVICE and CUDA's message on stderr.
# The real CUDA path is checked on a GPU by bench/cuda_device_check.sh.
#
# Environment: KEVO_SRC (the source root), PYTHON (python3).
set -uo pipefail

KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
PY=${PYTHON:-python3}
command -v g++ >/dev/null || { echo "SKIP: g++ not installed"; exit 77; }
"$PY" -c 'import struct, subprocess' || { echo "SKIP: no python3"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
H=$KEVO_SRC/harness
cd "$tmp" || exit 2

cat >call.c <<'C'
#include <stdint.h>
void relu(const float *x, float *y, int64_t N);
void kevo_cuda_call(void *const *b, const double *s)
{
    relu((const float *)b[0], (float *)b[1], (int64_t)s[2]);
}
const unsigned kevo_cuda_nparams = 3;
const unsigned char kevo_cuda_roles[] = {0, 1, 3};
int fake_cuda_fail_next_sync;
C
cat >ok.c <<'C'
#include <stdint.h>
void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}
C
cat >nan.c <<'C'
#include <stdint.h>
/* leaves y[0] as it came: the poison must be there */
void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 1; i < N; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}
C
cat >overrun.c <<'C'
#include <stdint.h>
void relu(const float *x, float *y, int64_t N)
{
    for (int64_t i = 0; i <= N + 8; i++)
        y[i] = 1.0f;
}
C
cat >fault.c <<'C'
#include <stdint.h>
extern int fake_cuda_fail_next_sync;
void relu(const float *x, float *y, int64_t N) { fake_cuda_fail_next_sync = 1; }
C

build() {
    gcc -O2 -std=gnu11 -I"$H" -c "$H/runner.c" -o runner.o &&
        g++ -O2 -x c++ -I"$KEVO_SRC/tests/helpers/fake_cuda" -I"$H" -c "$H/runner_cuda.cu" \
            -o runner_cuda.o &&
        gcc -O2 -c call.c -o call.o &&
        for c in ok nan overrun fault; do
            gcc -O2 -c $c.c -o $c.o && g++ -o runner_$c runner.o runner_cuda.o call.o $c.o || return 1
        done
}
build 2>build.log || { echo "FAIL: cannot build the fake CUDA runner"; cat build.log; exit 1; }

"$PY" - "$tmp" <<'PY'
import fcntl, os, struct, subprocess, sys
tmp = sys.argv[1]
N = 1000
xs = [((i * 37) % 101 - 50) / 7.0 for i in range(N)]

PAGE = 4096
REGION = 8192                      # >= 4096 front canary + 4000 bytes, page multiple
OFF = REGION - ((4 * N + 63) // 64) * 64  # data ends <= 63 bytes before the region end

def start(name):
    cmd_r, cmd_w = os.pipe()
    rep_r, rep_w = os.pipe()
    # the input memfd (descriptor page + x), read-only for the runner; the output memfd (y)
    fin = os.memfd_create("in", 0)
    os.ftruncate(fin, PAGE + REGION)
    fin_ro = os.open("/proc/self/fd/%d" % fin, os.O_RDONLY)
    fout = os.memfd_create("out", 0)
    os.ftruncate(fout, REGION)
    def child():
        fds = [fcntl.fcntl(f, fcntl.F_DUPFD, 20) for f in (cmd_r, rep_w, fin_ro, fout)]
        for target, f in zip((3, 4, 5, 6), fds):
            os.dup2(f, target)
    err = open(os.path.join(tmp, name + ".err"), "wb")
    # close_fds runs after preexec_fn in the child: keep the numbers 3..6
    p = subprocess.Popen([os.path.join(tmp, "runner_" + name)], preexec_fn=child,
                         pass_fds=(3, 4, 5, 6, cmd_r, rep_w, fin_ro, fout), stderr=err)
    os.close(cmd_r)
    os.close(rep_w)
    os.close(fin_ro)
    return p, os.fdopen(cmd_w, "wb", buffering=0), os.fdopen(rep_r, "rb", buffering=0), fin, fout

def read(f, n):
    b = b""
    while len(b) < n:
        c = f.read(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b

def call(name):
    p, w, r, fin, fout = start(name)
    assert read(r, 8) == b"KEVORUN2", "bad greeting"
    # layout: x in the input memfd after the descriptor page, y at 0 in the output memfd
    w.write(struct.pack("<I", 3) + bytes([0, 1, 3]) + bytes([0, 0, 3]) +
            struct.pack("<3Q", PAGE, 0, 0) + struct.pack("<3Q", REGION, REGION, 0))
    assert read(r, 1) == b"r", "regions not mapped"
    desc = struct.pack("<QQ", 0x4b45564f43414c4c, 1)
    desc += struct.pack("<64Q", *([OFF, OFF, 0] + [0] * 61))
    desc += struct.pack("<64Q", *([4 * N, 4 * N, 0] + [0] * 61))
    desc += struct.pack("<64d", *([0.0, 0.0, float(N)] + [0.0] * 61))
    os.pwrite(fin, desc, 0)
    os.pwrite(fin, struct.pack("<%df" % N, *xs), PAGE + OFF)
    os.pwrite(fout, struct.pack("<I", 0x7fc00000) * N, OFF)   # poisoned output
    w.write(b"X")
    try:
        rep = read(r, 5)
    except EOFError:
        p.wait()
        return p.returncode, None, None
    assert rep[:1] == b"d", "bad reply"
    bad = struct.unpack("<I", rep[1:])[0]
    y = struct.unpack("<%df" % N, os.pread(fout, 4 * N, OFF))
    w.write(b"Q")
    p.wait()
    return 0, bad, y

fails = 0
def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += 0 if cond else 1

status, bad, y = call("ok")
check(status == 0 and bad == 0xFFFFFFFF, "ok: a 'd' reply, no overrun")
check(y is not None and all(abs(a - max(b, 0.0)) < 1e-6 for a, b in zip(y, xs)), "ok: outputs")
status, bad, y = call("nan")
check(y is not None and y[0] != y[0] and y[1] == max(xs[1], 0.0), "poisoned output reaches the device")
status, bad, y = call("overrun")
check(bad == 1, "write past the end of y: overrun of param 1 (bad %s)" % (bad,))
code, _, _ = call("fault")
err = open(os.path.join(tmp, "fault.err")).read().strip().splitlines()
check(code == 42 and err and "illegal memory access" in err[-1],
      "kernel fault: exit 42 with CUDA's message (exit %s, %r)" % (code, err[-1:] if err else ""))
sys.exit(1 if fails else 0)
PY
