#!/usr/bin/env bash
# bench/cuda_device_check.sh - the CUDA backend's check on a GPU machine.
# Installs kevo's packages and builds it (scripts/setup.sh), then judges the
# example CUDA candidates (tests/candidates_cuda/<task>/candidate.cu) with
# `kevo eval --backend cuda` and prints one line per task: verdict, candidate
# and reference medians, speedup; the feedback when the verdict is not
# `correct`. Needs nothing but the repository, a CUDA driver and the toolkit
# at /usr/local/cuda.
#
# Environment: KEVO_CUDA_ARCH (default: from nvidia-smi's compute capability,
# else sm_90), QUICK=1 (shorter latency measurement), SKIP_SETUP=1 (use an
# existing build/kevo).
# Exit status: 0 every example correct, 1 otherwise, 2 cannot run at all.
set -uo pipefail
cd "$(dirname "$0")/.."

die() { echo "cuda_device_check: $*" >&2; exit 2; }
[ -x /usr/local/cuda/bin/nvcc ] || die "no nvcc at /usr/local/cuda/bin/nvcc (install the CUDA toolkit)"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
    if [ -z "${KEVO_CUDA_ARCH:-}" ]; then
        cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
        [ -n "$cap" ] && export KEVO_CUDA_ARCH=sm_$cap
    fi
else
    echo "cuda_device_check: nvidia-smi not found; kevo will say whether a device exists"
fi
export KEVO_CUDA_ARCH=${KEVO_CUDA_ARCH:-sm_90}
/usr/local/cuda/bin/nvcc --version | tail -1
echo "arch: $KEVO_CUDA_ARCH"

if [ "${SKIP_SETUP:-0}" != 1 ]; then
    bash scripts/setup.sh || die "scripts/setup.sh failed"
fi
KEVO=${KEVO:-build/kevo}
[ -x "$KEVO" ] || die "$KEVO was not built"
command -v python3 >/dev/null || die "python3 is needed to read kevo's JSON"

flags=(--backend cuda --json)
[ "${QUICK:-0}" = 1 ] && flags+=(--quick)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok=0 bad=0
for cand in tests/candidates_cuda/*/candidate.cu; do
    task=$(basename "$(dirname "$cand")")
    dir=suites/c/level1/$task
    [ -d "$dir" ] || dir=suites/c/level2/$task
    start=$(date +%s)
    "$KEVO" eval "${flags[@]}" "$dir" "$cand" >"$tmp/out.json" 2>"$tmp/err"
    rc=$?
    python3 - "$tmp/out.json" "$task" "$(( $(date +%s) - start ))" "$rc" "$tmp/err" <<'PY'
import json, sys
path, task, secs, rc, err = sys.argv[1:6]
try:
    d = json.load(open(path))
except Exception:
    print(f"{task:22s} no JSON from kevo (exit {rc}): {open(err).read().strip()[:400]}")
    sys.exit(1)
lat = d.get("latency") or {}
line = f"{task:22s} {d['verdict']:13s}"
if lat:
    line += (f" candidate {lat['candidate_us']:10.1f} us  reference {lat['reference_us']:10.1f} us"
             f"  speedup {lat['speedup']:7.2f}x")
line += f"  ({secs} s)"
print(line)
if d["verdict"] != "correct":
    for g in d.get("gates", []):
        for m in g.get("messages", []):
            print(f"    {g['name']}: {m[:300]}")
    print("    feedback: " + d.get("feedback", "")[:800].replace("\n", "\n    "))
    sys.exit(1)
PY
    if [ $? -eq 0 ]; then ok=$((ok + 1)); else bad=$((bad + 1)); fi
done
echo "$ok correct, $bad not"
[ "$bad" -eq 0 ]
