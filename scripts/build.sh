#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds Genie (Ninja, ccache when present). GENIE_VARIANT picks the build:
#   (unset)  the normal RelWithDebInfo build (-O2 -g1), into build/
#   asan     clang, AddressSanitizer + UndefinedBehaviorSanitizer, and libFuzzer coverage in every library
#            (GENIE_FUZZ=ON): the ASan suite and scripts/fuzz.sh share it, into build-asan/
#   tsan     gcc, ThreadSanitizer, compiled in groups (GENIE_UNITY_BUILD), into build-tsan/
# GENIE_BUILD_DIR overrides the folder, GENIE_CMAKE_ARGS adds cache entries, GENIE_BUILD_TARGETS="a b" builds only
# those targets.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
variant=${GENIE_VARIANT:-}
variant_args=()
deps=()
case "$variant" in
  "") ;;
  asan)
    variant_args=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DGENIE_SANITIZE=address -DGENIE_FUZZ=ON
      -DGENIE_BUILD_BENCH=OFF)
    deps=(clang) ;;
  tsan) variant_args=(-DGENIE_SANITIZE=thread -DGENIE_BUILD_BENCH=OFF -DGENIE_UNITY_BUILD=ON) ;;
  *) echo "genie: GENIE_VARIANT='$variant': expected unset, 'asan' or 'tsan'" >&2; exit 2 ;;
esac
build=${GENIE_BUILD_DIR:-$here/build${variant:+-$variant}}
"$here/scripts/install-deps.sh" "${deps[@]}"
# ccache keys on paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="$here"
# shellcheck disable=SC2086 # GENIE_CMAKE_ARGS is a list of words
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${GENIE_BUILD_TYPE:-RelWithDebInfo} \
  -DGENIE_CUDA_ROOT=${GENIE_CUDA_ROOT:-/usr/local/cuda} "${variant_args[@]}" ${GENIE_CMAKE_ARGS:-} >/dev/null
read -r -a targets <<<"${GENIE_BUILD_TARGETS:-}"
cmake --build "$build" -j "${GENIE_JOBS:-2}" ${targets[@]/#/--target=}
