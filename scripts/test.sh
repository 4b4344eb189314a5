#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: installs dependencies, builds, runs every ctest label (unit, e2e, slow) with -j2.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
# The PyTorch tests' .venv (torch from PyPI, reused when present) downloads while the build compiles. If it
# cannot be made, the torch tests fail with the reason and the rest of the suite runs as usual.
mkdir -p "$build"
"$here/scripts/setup-venv.sh" > "$build/setup-venv.log" 2>&1 &
venv_pid=$!
"$here/scripts/build.sh"
if ! wait "$venv_pid"; then
  cat "$build/setup-venv.log" >&2
  echo "genie: the .venv for the PyTorch tests could not be made: the torch tests (ctest -L torch) will fail" >&2
fi
(cd "$build" && ctest -j "${GENIE_JOBS:-2}" --output-on-failure --timeout 600 ${GENIE_CTEST_ARGS:-})

# Then the unit and e2e suites again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan) and under
# ThreadSanitizer (build-tsan), and every fuzz target for GENIE_FUZZ_SECONDS (scripts/fuzz.sh, build-fuzz).
# GENIE_SANITIZERS=0 skips the sanitizer suites, GENIE_FUZZ_SECONDS=0 the fuzzing (docs/testing.md).
status=0
if [ "${GENIE_SANITIZERS:-1}" != "0" ]; then
  # The TSan build compiles in groups (GENIE_UNITY_BUILD: 4 min 14 s instead of 6 min 56 s from scratch on the 2-core
  # VM); the ASan build did not gain from it (10 min 18 s against ~9 min), so it compiles file by file.
  for triple in address:asan:OFF thread:tsan:ON; do
    san=${triple%%:*}; rest=${triple#*:}; dir="$here/build-${rest%%:*}"; unity=${rest#*:}
    echo "genie: the unit and e2e suites under GENIE_SANITIZE=$san ($dir)" >&2
    GENIE_BUILD_DIR="$dir" GENIE_CMAKE_ARGS="-DGENIE_SANITIZE=$san -DGENIE_BUILD_BENCH=OFF -DGENIE_UNITY_BUILD=$unity" \
      "$here/scripts/build.sh"
    (cd "$dir" && ctest -j "${GENIE_JOBS:-2}" -L "unit|e2e" -LE "torch|slow" --output-on-failure --timeout 600) || status=1
  done
fi
if [ "${GENIE_FUZZ_SECONDS:-20}" != "0" ]; then
  GENIE_FUZZ_SECONDS=${GENIE_FUZZ_SECONDS:-20} "$here/scripts/fuzz.sh" || status=1
fi
exit $status
