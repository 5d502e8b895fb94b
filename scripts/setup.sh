#!/usr/bin/env bash
# Installs kevo's system packages (Debian 12) and builds it into build/.
# Idempotent: packages already present are not reinstalled.
#   --with-torch  also make the PyTorch venv for PyTorch-defined tasks
#                 (docs/torch-tasks.md): $KEVO_TORCH_VENV, default
#                 /var/cache/kevo/torch-venv (~/.cache/kevo/torch-venv when
#                 not root); torch from PyPI, about 5.4 GB, made once and
#                 reused. C tasks never need it.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_TORCH=0
for a in "$@"; do
  case "$a" in
    --with-torch) WITH_TORCH=1 ;;
    *) echo "setup: unknown option '$a' (known: --with-torch)" >&2; exit 2 ;;
  esac
done
PKGS="build-essential cmake pkg-config binutils libsqlite3-dev libcjson-dev
      libcurl4-openssl-dev libseccomp-dev libclang-14-dev clang-14 libclang-rt-14-dev
      libcmocka-dev python3 python3-numpy ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
      chromium python3-venv libpq-dev postgresql tmux libopenblas0-pthread"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "setup: built build/kevo"
if [ "$WITH_TORCH" = 1 ]; then
  if [ "$(id -u)" -eq 0 ]; then def=/var/cache/kevo/torch-venv; else def="$HOME/.cache/kevo/torch-venv"; fi
  VENV=${KEVO_TORCH_VENV:-$def}
  if "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    echo "setup: torch venv $VENV ready (torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)'))"
  else
    echo "setup: making the torch venv $VENV (torch from PyPI, about 5.4 GB; once)"
    # a venv that does not import torch (a killed setup) is made again
    rm -rf "$VENV"; mkdir -p "$(dirname "$VENV")"
    /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check torch numpy
    # sandboxed torch runners run as other uids: the tree must be readable
    chmod -R a+rX "$VENV"
    echo "setup: torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') in $VENV"
  fi
fi
