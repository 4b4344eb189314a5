#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite: installs dependencies, builds, runs every ctest label (unit, e2e, slow) with -j2.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
"$here/scripts/build.sh"
cd "$build"
ctest -j "${GENIE_JOBS:-2}" --output-on-failure --timeout 600 ${GENIE_CTEST_ARGS:-}
