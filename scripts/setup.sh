#!/usr/bin/env bash
# Installs kevo's system packages (Debian 12) and builds it into build/.
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS="build-essential cmake pkg-config binutils libsqlite3-dev libcjson-dev
      libcurl4-openssl-dev libseccomp-dev libclang-14-dev clang-14 libclang-rt-14-dev
      libcmocka-dev python3 python3-numpy ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
      chromium"
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
