#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs Genie's build and test dependencies from Debian packages; does nothing when all are present.
# `install-deps.sh clang` adds clang and its sanitizer and libFuzzer runtimes (the asan build of scripts/build.sh).
set -euo pipefail
extra=()
for arg in "$@"; do
  case "$arg" in
    clang) extra+=(clang libclang-rt-dev) ;;
    *) echo "genie: install-deps.sh: unknown argument '$arg' (expected: clang)" >&2; exit 2 ;;
  esac
done
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libibverbs-dev rdma-core libfabric-dev libhwloc-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 chromium chromium-driver
  openmpi-bin libopenmpi-dev iproute2
  ${extra[@]+"${extra[@]}"}
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "genie: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cuda_root=${GENIE_CUDA_ROOT:-/usr/local/cuda}
if [ ! -f "$cuda_root/include/cuda_runtime_api.h" ]; then
  echo "genie: the CUDA 13 toolkit headers are needed at $cuda_root (set GENIE_CUDA_ROOT): Genie builds its" \
       "runtime against them so the ABI matches; no GPU or driver is needed" >&2
  exit 1
fi
