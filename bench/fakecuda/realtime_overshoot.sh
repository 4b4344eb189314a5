#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Timed command: how much later than modelled the wall clock sees realtime work end (GENIE_CLOCK=realtime).
# Runs examples/timing (four 20 ms kernels from tests/e2e/data/spin_table.json, 80 ms modelled) R times and prints
# the wall time from the first launch until cudaEventSynchronize returns, and its overshoot over 80 ms: min, median
# and max. The e2e test e2e_timing_realtime checks only lower bounds (a loaded machine must not fail it); this is
# the absolute number, to be read on an idle machine (docs/BENCHMARKS.md "fakecuda: realtime overshoot").
# Usage: bench/fakecuda/realtime_overshoot.sh [BUILD_DIR] [RUNS]   (default: build 20)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
runs=${2:-20}
ex=$build/examples/timing
[ -x "$ex" ] || { echo "realtime_overshoot: $ex not built" >&2; exit 1; }
walls=()
for _ in $(seq "$runs"); do
  out=$(env LD_PRELOAD="$build/lib/libcudart.so.13" GENIE_CLOCK=realtime \
    GENIE_FAKECUDA_COST_TABLE="$here/tests/e2e/data/spin_table.json" "$ex" 3 realtime)
  grep -q "timing: 0 failed" <<<"$out" || { printf '%s\n' "$out" >&2; exit 1; }
  walls+=("$(awk '/^wall_ms/ {print $2}' <<<"$out")")
done
printf '%s\n' "${walls[@]}" | sort -g | awk -v runs="$runs" '
  { w[NR] = $1 }
  END {
    med = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2
    printf "runs %d, modelled 80.000 ms\n", runs
    printf "%-8s %10s %12s\n", "", "wall_ms", "overshoot_ms"
    printf "%-8s %10.3f %12.3f\n", "min", w[1], w[1] - 80
    printf "%-8s %10.3f %12.3f\n", "median", med, med - 80
    printf "%-8s %10.3f %12.3f\n", "max", w[NR], w[NR] - 80
  }'
