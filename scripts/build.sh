#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds Genie into ${GENIE_BUILD_DIR:-build} (Ninja, ccache when present).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
"$here/scripts/install-deps.sh"
# ccache keys on paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="$here"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${GENIE_BUILD_TYPE:-RelWithDebInfo} \
  -DGENIE_CUDA_ROOT=${GENIE_CUDA_ROOT:-/usr/local/cuda} ${GENIE_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "${GENIE_JOBS:-2}"
