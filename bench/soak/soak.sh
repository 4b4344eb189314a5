#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Timed commands: memory flatness of long runs (docs/BENCHMARKS.md, "Soak"). Each program prints its resident set at
# every tenth of its calls ("soak ... sample N% ... rss_mib R"); this script prints those samples with the wall
# time and the peak RSS of the largest process (GNU time %M over the command and its children) for:
#   1. 10^6 kernel launches, one process, virtual clock (LD_PRELOAD, no trace);
#   2. the same under genie run with the report (the trace records every kernel);
#   3. 10^6 all-reduces of 4 floats, one process with 2 devices (ncclCommInitAll);
#   4. the same as 2 processes (the example forks them; no coordinator);
#   5. the same under genie run -n 2 with the report: the coordinator times every call and keeps 10^6 in detail,
#      rank 0 samples it (its parent); the report files' sizes are printed.
# Reference measured in the same run: the per-call time of 1. is compared with fakecuda_api_bench's launch cost.
# Usage: bench/soak/soak.sh [BUILD_DIR] [CALLS]   (default: build 1000000)
set -u
build=${1:-build}
calls=${2:-1000000}
lib=$build/lib
ex=$build/examples
genie=$build/bin/genie
for f in "$ex/soak_launches" "$ex/soak_collectives" "$genie"; do
  [ -x "$f" ] || { echo "soak: $f not built" >&2; exit 1; }
done
rep=$(mktemp -d)
trap 'rm -rf "$rep"' EXIT
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
run() {  # run TITLE -- command...
  local title=$1; shift 2
  echo "== $title"
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "peak_rss_mib %M" -o "$rep/time" "$@" >"$rep/out" 2>&1
  local rc=$?
  t1=$(date +%s.%N)
  grep -E "soak .* sample|rss_growth|failed|\[genie\]   (AllReduce|report)|removed" "$rep/out" | sed 's/^/  /'
  printf '  exit %d, wall %.1f s, %s\n' "$rc" "$(echo "$t1 - $t0" | bc)" \
    "$(awk '{printf "peak_rss_mib %.1f (largest process)", $2/1024}' "$rep/time")"
}
run "1. $calls kernel launches (LD_PRELOAD, virtual)" -- env LD_PRELOAD="$lib/libcudart.so.13" \
  "$ex/soak_launches" "$calls" 1024
run "2. $calls kernel launches under genie run -n 1 (report)" -- "$genie" run -n 1 --report "$rep/r1" -- \
  "$ex/soak_launches" "$calls" 1024
run "3. $calls all-reduces, 1 process x 2 devices" -- env LD_PRELOAD="$lib/libcudart.so.13:$lib/libnccl.so.2" \
  "$ex/soak_collectives" devices 2 "$calls" 1024
run "4. $calls all-reduces, 2 processes" -- env LD_PRELOAD="$lib/libcudart.so.13:$lib/libnccl.so.2" \
  "$ex/soak_collectives" proc 2 "$calls" 1024
run "5. $calls all-reduces under genie run -n 2 (report)" -- "$genie" run -n 2 --report "$rep/r5" -- \
  "$ex/soak_collectives" env 2 "$calls" 1024
ls -l "$rep/r5" | awk 'NR > 1 {printf "  %s %.1f MiB\n", $9, $5 / 1048576}'
if [ -x "$build/bench/fakecuda_api_bench" ]; then
  echo "== reference: fakecuda_api_bench cudaLaunchKernel (same machine, same run)"
  "$build/bench/fakecuda_api_bench" --benchmark_filter=Launch --benchmark_min_time=0.2 2>/dev/null | grep -i launch | sed 's/^/  /'
fi
