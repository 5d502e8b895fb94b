#!/usr/bin/env bash
# tests/integration/test_peaks_chains.sh - `kevo calibrate`'s fp32 peak is
# what the FMA units do: harness/peaks.c, compiled as `kevo calibrate`
# compiles it (gcc -O3 -march=native -fopenmp), keeps ten FMA instructions
# in each timed loop (the ten independent chains it counts). With the ten
# chains started alike, GCC 12 folded them into one (one FMA per iteration
# and ten adds after the loop) and the peak read 576 GFLOP/s on a 2-core
# Zen 4 that does 226: every compute-bound roofline fraction 2.5x too low.
# Then it checks that the check can fail: the chains started alike again
# leave fewer than ten. And the bandwidth curve's streaming ways are what
# they claim. x86-64 only (the mnemonics); skipped elsewhere.
set -uo pipefail
KEVO_SRC=${KEVO_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
case $(uname -m) in
  x86_64) ;;
  *) echo "skip: the FMA count reads x86-64 assembly (vfmadd)"; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# fmas FILE.s FUNC: FMA instructions in FUNC's OpenMP body
fmas() {
  awk -v f="$2._omp_fn.0" '$0 == f":" {on = 1; next} on && /^\t\.size/ {on = 0} on' "$1" \
    | grep -c 'vfmadd'
}

# check SOURCE WANT_OK: every FMA loop has ten FMAs (WANT_OK 1) or one lacks them (0)
check() {
  local src=$1 want=$2 ok=1 n f
  gcc -O3 -march=native -fopenmp -S "$src" -o "$tmp/peaks.s" || { echo "FAIL: $src does not compile"; fail=1; return; }
  for f in fma8 fma16; do
    grep -q "^$f\._omp_fn\.0:" "$tmp/peaks.s" || continue # fma16: AVX-512 machines only
    n=$(fmas "$tmp/peaks.s" "$f")
    echo "  $f: $n FMA instructions in the timed loop"
    [ "$n" -ge 10 ] || ok=0
  done
  if [ "$ok" != "$want" ]; then
    echo "FAIL: $src: expected $([ "$want" = 1 ] && echo 'ten FMAs per loop' || echo 'a folded loop')"
    fail=1
  fi
}

echo "harness/peaks.c as kevo calibrate builds it:"
check "$KEVO_SRC/harness/peaks.c" 1

# the chains started alike (as before the fix): the check must see the fold
python3 - "$KEVO_SRC/harness/peaks.c" "$tmp/alike.c" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s2 = re.sub(r"= k \* \d+", "= k * 0", s)
if s2 == s:
    sys.exit("cannot find the chains' starts (x0 = k * 1, ...) in harness/peaks.c")
open(sys.argv[2], "w").write(s2)
PY
[ -s "$tmp/alike.c" ] || { echo "FAIL: could not build the folded variant"; exit 1; }
echo "the chains started alike (must fold):"
check "$tmp/alike.c" 0

# The bandwidth bound streams three ways (harness/peaks.c): the triad with
# non-temporal stores must keep them (a plain-store loop would make the
# bound the triad's alone, below what `stream` kernels reach: fractions
# above 1), and the read-only way must store nothing in its loop.
gcc -O3 -march=native -fopenmp -S "$KEVO_SRC/harness/peaks.c" -o "$tmp/peaks.s"
nt=$(awk '$0 == "triad_nt._omp_fn.0:" {on = 1; next} on && /^\t\.size/ {on = 0} on' "$tmp/peaks.s" \
  | grep -c 'movntps')
ro=$(awk '$0 == "read_only._omp_fn.0:" {on = 1; next} on && /^\t\.size/ {on = 0} on' "$tmp/peaks.s" \
  | grep -cE 'vmovups\s+%[xyz]mm[0-9]+, |vmovaps\s+%[xyz]mm[0-9]+, [^%]*\(')
echo "  triad_nt: $nt non-temporal stores; read_only: $ro vector stores"
if [ "$nt" -lt 1 ] || [ "$ro" -ne 0 ]; then
  echo "FAIL: the bandwidth ways are not what they claim"
  fail=1
fi

[ "$fail" = 0 ] && echo "1 passed, 0 failed" || echo "failed"
exit "$fail"
