#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cublas_timing.sh <genie> <LD_PRELOAD> <cublas_gemm_timing> <device> <dtype> <m> <n> <k>
# Asks `genie cost gemm` for the predicted time of the GEMM (and of its batch-4 version), then runs the example on
# that device under Genie's libraries: its CUDA events must measure exactly those predictions.
# GENIE_HOST_CPU_SCALE=0: the host's own CPU time (a first call's set-up, a slow shared CI core) between recording
# the start event and launching the GEMM would be counted as it is on a GPU, and the check is on the GEMM alone.
set -euo pipefail
genie=$1 preload=$2 example=$3 device=$4 dtype=$5 m=$6 n=$7 k=$8
expected=$("$genie" cost gemm --device "$device" --dtype "$dtype" --m "$m" --n "$n" --k "$k" | tail -1)
expected4=$("$genie" cost gemm --device "$device" --dtype "$dtype" --m "$m" --n "$n" --k "$k" --batch 4 | tail -1)
echo "genie cost gemm: ${expected} us (batch 4: ${expected4} us)"
GENIE_HOST_CPU_SCALE=0 GENIE_DEVICE=$device LD_PRELOAD=$preload "$example" "$dtype" "$m" "$n" "$k" "$expected" "$expected4"
