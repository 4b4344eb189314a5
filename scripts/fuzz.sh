#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with clang (ASan + UBSan, every library instrumented for coverage) into
# ${GENIE_FUZZ_BUILD_DIR:-build-fuzz} and runs each for ${GENIE_FUZZ_SECONDS:-30} s on a copy of its seed
# corpus (tests/fuzz/corpus/<target>). A crash leaves its input in build-fuzz/fuzz/crash-*: add it to the
# corpus, and it stays a regression test through fuzz_replay_<target>.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_FUZZ_BUILD_DIR:-$here/build-fuzz}
secs=${GENIE_FUZZ_SECONDS:-30}
export CCACHE_BASEDIR="$here"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DGENIE_FUZZ=ON -DGENIE_BUILD_BENCH=OFF -DGENIE_BUILD_CUDA_EXAMPLES=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
targets=(coord_frame)
cmake --build "$build" -j "${GENIE_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
status=0
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  cp "$here/tests/fuzz/corpus/$t/"* "$work/"
  echo "fuzz_$t: ${secs} s" >&2
  (cd "$build/fuzz" && ./"fuzz_$t" -max_total_time="$secs" -print_final_stats=1 "$work") || status=1
  rm -rf "$work"
done
exit $status
