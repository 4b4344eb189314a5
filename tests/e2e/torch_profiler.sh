#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# torch.profiler on Genie's CUPTI: runs examples/pytorch/profiler_timeline.py under `genie run -n RANKS`, then checks
# each rank's Chrome trace against the job's report (kernels at the report's starts and durations).
# Usage: torch_profiler.sh GENIE PYTHON SCRIPT WORKDIR RANKS [script args...]
set -euo pipefail
genie=$1 py=$2 script=$3 work=$4 ranks=$5
shift 5
rm -rf "$work" && mkdir -p "$work"
"$genie" run -n "$ranks" --device h200 --report "$work/report" -- "$py" "$script" --out "$work/traces" "$@"
"$py" "$script" --check "$work/traces" "$work/report"
