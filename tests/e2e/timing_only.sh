#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Timing-only runs (GENIE_DATA=none, genie run --data none, docs/timing-only.md). GENIE_HOST_CPU_SCALE=0: host time is
# the modelled API costs only, so the durations compared below are exact, not sampled.
#
# timing_only.sh cuda <genie> <LD_PRELOAD> <timing_only example> <max peak RSS MiB, 0: unchecked>
#   On an emulated H100 (79.6 GiB):
#   1. 4 chunks of 256 MiB with and without GENIE_DATA=none: every op's event-timed duration ("op ...") is the same;
#   2. 280 chunks (70 GiB) under `genie run --data none`, each cleared and copied across: the rank's peak resident set
#      stays under the bound, the ops' durations are those of step 1, and what is left of the 79.6 GiB plus 64 MiB
#      fails with cudaErrorMemoryAllocation (the example checks both);
#   3. --data none with the real fabric is refused (exit 2, with the reason).
# timing_only.sh nccl <genie> <timing_only_nccl example> <max peak RSS MiB, 0: unchecked>
#   Two ranks under genie run: every NCCL transfer (all-reduce, all-gather, reduce-scatter, broadcast, all-to-all,
#   send/recv, put with signal) of 64 MiB takes the same modelled time with and without --data none; control data
#   (16 KiB) still arrives with --data none (the example checks its values); 4 GiB buffers keep each rank under the
#   bound.
set -uo pipefail
mode=$1 genie=$2
fail=0
check() {  # check <what> <expected> <actual>
  if [ "$2" = "$3" ]; then echo "ok   $1: Expectation $2 / Actual $3"; else echo "FAIL $1: Expectation $2 / Actual $3"; fail=1; fi
}
lines() { printf '%s\n' "$1" | grep -c "$2"; }
report=$(mktemp -d)
trap 'rm -rf "$report"' EXIT

if [ "$mode" = nccl ]; then
  example=$3 rss=$4
  nccl_run() {  # nccl_run <copy|none> <args...>
    local data=$1; shift
    GENIE_HOST_CPU_SCALE=0 "$genie" run -n 2 --data "$data" --report "$report" --no-prefix -- "$example" "$@" 2>&1
  }
  copy_out=$(nccl_run copy 64); copy_rc=$?
  none_out=$(nccl_run none 64); none_rc=$?
  big_out=$(nccl_run none 4096 "$rss"); big_rc=$?
  printf '%s\n' "--- copy, 64 MiB" "$copy_out" "--- none, 64 MiB" "$none_out" "--- none, 4 GiB" "$big_out"
  check "exit codes (copy, none, none 4 GiB)" "0 0 0" "$copy_rc $none_rc $big_rc"
  copy_ops=$(printf '%s\n' "$copy_out" | grep 'op ' | sort)
  check "op lines (7 transfers x 2 ranks)" 14 "$(lines "$copy_ops" .)"
  check "op durations the same with --data none" "$copy_ops" "$(printf '%s\n' "$none_out" | grep 'op ' | sort)"
  check "ranks whose checks passed (control data arrived) with --data none" 2 "$(lines "$none_out" 'timing_only_nccl: 0 failed')"
  check "ranks whose checks passed at 4 GiB" 2 "$(lines "$big_out" 'timing_only_nccl: 0 failed')"
  [ "$rss" = 0 ] || check "ranks whose peak RSS was checked at 4 GiB" 2 "$(lines "$big_out" 'ok .*peak RSS within the bound')"
  exit $fail
fi

preload=$3 example=$4 rss=$5
run() {  # run <GENIE_DATA> <args...>: the example under LD_PRELOAD on an H100
  local data=$1; shift
  GENIE_DATA=$data GENIE_DEVICE=h100-sxm GENIE_HOST_CPU_SCALE=0 LD_PRELOAD=$preload "$example" "$@" 2>&1
}

copy_out=$(run copy 4 256); copy_rc=$?
none_out=$(run none 4 256); none_rc=$?
printf '%s\n' "--- GENIE_DATA=copy, 1 GiB" "$copy_out" "--- GENIE_DATA=none, 1 GiB" "$none_out"
check "exit codes (copy, none)" "0 0" "$copy_rc $none_rc"
copy_ops=$(printf '%s\n' "$copy_out" | grep '^op ')
none_ops=$(printf '%s\n' "$none_out" | grep '^op ')
check "op lines (memset, d2d, d2h, h2d, memcpy2d, peer, graph)" 7 "$(printf '%s\n' "$copy_ops" | grep -c .)"
check "op durations the same with GENIE_DATA=none" "$copy_ops" "$none_ops"
check "GENIE_DATA=none warns once" 1 "$(printf '%s\n' "$none_out" | grep -c 'GENIE_DATA=none: timing-only run')"

big_out=$(GENIE_HOST_CPU_SCALE=0 "$genie" run -n 1 --device h100-sxm --data none --report "$report" --no-prefix -- \
  "$example" 280 256 "$rss" 2>&1); big_rc=$?
printf '%s\n' "--- genie run --data none, 70 GiB" "$big_out"
check "exit code of the 70 GiB run" 0 "$big_rc"
check "op durations at 70 GiB the same as at 1 GiB" "$none_ops" "$(printf '%s\n' "$big_out" | grep '^op ')"
check "the 70 GiB run's own checks (peak RSS, OOM)" 1 "$(printf '%s\n' "$big_out" | grep -c '^timing_only: 0 failed')"
[ "$rss" = 0 ] || check "its peak RSS was checked" 1 "$(lines "$big_out" '^ok   peak RSS')"

real_out=$("$genie" run -n 1 --data none --fabric real -- true 2>&1); real_rc=$?
printf '%s\n' "--- genie run --data none --fabric real" "$real_out"
check "--data none with the real fabric: exit code" 2 "$real_rc"
check "--data none with the real fabric: reason given" 1 "$(printf '%s\n' "$real_out" | grep -c 'does not apply to the real fabric')"
exit $fail
