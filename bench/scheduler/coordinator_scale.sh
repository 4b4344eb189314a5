#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Timed command: how the coordinator scales with the number of rank processes on this machine.
# For each N, `genie run -n N --nodes N/8` runs examples/collectives (one device per rank process, every
# collective of the example through the coordinator) with GENIE_HOST_CPU_SCALE=0 and prints N, the wall
# seconds of the whole job, the largest peak RSS of any process of the job (GNU time's %M over genie run and
# its children), the collective calls in the report and whether every rank passed its data checks.
# Usage: bench/scheduler/coordinator_scale.sh [BUILD_DIR] [N...]   (default: build 8 32 64 128 256)
set -euo pipefail
build=${1:-build}
shift || true
sizes=${*:-8 32 64 128 256}
ex=$build/examples/collectives
[ -x "$ex" ] || { echo "coordinator_scale: $ex not built" >&2; exit 1; }
printf "%6s %10s %16s %12s %s\n" ranks wall_s max_rss_MiB calls result
for n in $sizes; do
  nodes=$(( n >= 8 ? n / 8 : 1 ))
  rep=$(mktemp -d)
  log=$(mktemp)
  start=$(date +%s.%N)
  set +e
  GENIE_HOST_CPU_SCALE=0 /usr/bin/time -f "%M" -o "$log.time" \
    "$build/bin/genie" run -n "$n" --nodes "$nodes" --report "$rep" -- "$ex" env >"$log" 2>&1
  rc=$?
  set -e
  end=$(date +%s.%N)
  max_kib=$(tail -1 "$log.time")
  calls=$(python3 -c "import json;d=json.load(open('$rep/genie-report.json'));print(len(d['collectives']))" 2>/dev/null || echo -)
  ok=$(grep -c "collectives: 0 failed" "$log" || true)
  printf "%6d %10.1f %16.1f %12s rc=%d ranks_ok=%d\n" "$n" "$(echo "$end - $start" | bc)" \
    "$(echo "$max_kib / 1024" | bc -l)" "$calls" "$rc" "$ok"
  rm -rf "$rep" "$log" "$log.time"
done
