#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: installs dependencies, builds, then runs an unmodified CUDA program (compiled with the stock
# nvcc, -cudart shared) on an emulated H200 and prints what it saw and how long the GPU work took.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_BUILD_DIR:-$here/build}
"$here/scripts/build.sh" >/dev/null
echo "== genie env (how to run any program on Genie by hand)"
"$build/bin/genie" env
echo
echo "== examples/cuda/streams_events.cu on an emulated ${GENIE_DEVICE:-h200} (virtual clock)"
LD_PRELOAD="$build/lib/libcudart.so.13" "$build/examples/streams_events"
echo
echo "Kernels do not run under Genie: copies move real bytes, kernel times come from the cost model."
