#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nccl_debug_file.sh <LD_PRELOAD> <collectives example>
# NCCL_DEBUG=INFO with NCCL_DEBUG_FILE=<dir>/nccl.%h.%p: each rank process writes its NCCL lines to its own file
# (host and pid expanded) and none to stderr.
set -euo pipefail
preload=$1 example=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$dir/nccl.%h.%p" LD_PRELOAD="$preload" "$example" proc 2 > "$dir/out" 2> "$dir/err"
files=$(ls "$dir" | grep -c "^nccl\.$(hostname)\.[0-9][0-9]*$" || true)
init=$(cat "$dir"/nccl.* 2>/dev/null | grep -c "NCCL INFO comm 0x[0-9a-f]* rank [01] nRanks 2 .*Init COMPLETE" || true)
on_stderr=$(grep -c "NCCL INFO" "$dir/err" || true)
echo "debug files: $files, Init COMPLETE lines in them: $init, NCCL INFO lines on stderr: $on_stderr"
if [ "$files" -ne 2 ] || [ "$init" -ne 2 ] || [ "$on_stderr" -ne 0 ]; then
  echo "FAIL expected 2 files (one per rank process), 2 Init COMPLETE lines, none on stderr"
  exit 1
fi
grep -q "collectives: 0 failed" "$dir/out" || { echo "FAIL the collectives themselves failed"; cat "$dir/out" | tail -5; exit 1; }
echo "nccl_debug_file: ok"
