#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: installs dependencies, builds, then runs unmodified programs (compiled with the stock nvcc,
# -cudart shared, against the toolkit's CUDA and NCCL headers) on emulated H200s: a CUDA program, and an NCCL job
# of 4 processes launched by `genie run` whose all-reduces are data-checked and timed on an HGX H200 model.
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
echo "== genie run -n 4 -- examples/nccl/collectives.cu (every collective x datatype x op, 4 processes)"
"$build/bin/genie" run -n 4 -- "$build/examples/collectives" env | grep -E "collectives: [0-9]+ failed"
echo
echo "== examples/nccl/collective_timing.cu: all-reduce on 8 emulated H200s of one HGX node (GPU clock)"
LD_PRELOAD="$build/lib/libcudart.so.13:$build/lib/libnccl.so.2" "$build/examples/collective_timing" 8
echo
echo "Kernels do not run under Genie: copies and collectives move real bytes; kernel times come from the cost"
echo "model and collective times from the network simulator (docs/shim.md)."
