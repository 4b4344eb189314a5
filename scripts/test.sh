#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: installs dependencies, builds, runs every ctest label (unit, e2e, slow) with -j2.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
# The PyTorch tests' venvs (.venv: torch 2.11.0; .venv-newest: the newest torch; from PyPI, reused when present)
# download while the build compiles. If one cannot be made, its torch tests fail with the reason and the rest of the
# suite runs as usual.
mkdir -p "$build"
("$here/scripts/setup-venv.sh" && "$here/scripts/setup-venv.sh" --newest) > "$build/setup-venv.log" 2>&1 &
venv_pid=$!
"$here/scripts/build.sh"
if ! wait "$venv_pid"; then
  cat "$build/setup-venv.log" >&2
  echo "genie: a venv for the PyTorch tests could not be made: its torch tests (ctest -L torch) will fail" >&2
fi
(cd "$build" && ctest -j "${GENIE_JOBS:-2}" --output-on-failure --timeout 600 ${GENIE_CTEST_ARGS:-})

# Then the unit and e2e suites again under AddressSanitizer + UndefinedBehaviorSanitizer (clang, build-asan) and
# under ThreadSanitizer (gcc, build-tsan), and every fuzz target for GENIE_FUZZ_SECONDS (scripts/fuzz.sh, whose
# targets the asan build already holds). GENIE_SANITIZERS=0 skips the sanitizer suites, GENIE_FUZZ_SECONDS=0 the
# fuzzing (docs/testing.md).
status=0
if [ "${GENIE_SANITIZERS:-1}" != "0" ]; then
  for variant in asan tsan; do
    echo "genie: the unit and e2e suites in the $variant build ($here/build-$variant)" >&2
    GENIE_VARIANT=$variant GENIE_BUILD_DIR="$here/build-$variant" "$here/scripts/build.sh"
    # LeakSanitizer: third-party leaks Genie cannot free, each listed with its reason in tests/lsan.supp.
    (cd "$here/build-$variant" &&
      LSAN_OPTIONS="suppressions=$here/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
        ctest -j "${GENIE_JOBS:-2}" -L "unit|e2e" -LE "torch|slow" --output-on-failure --timeout 600) || status=1
  done
fi
if [ "${GENIE_FUZZ_SECONDS:-20}" != "0" ]; then
  GENIE_FUZZ_SECONDS=${GENIE_FUZZ_SECONDS:-20} "$here/scripts/fuzz.sh" || status=1
fi
exit $status
