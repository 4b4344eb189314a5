#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# genie smi against a running job: a 2-rank genie run of examples/cuda/nvml_query that holds 256 MiB per rank until
# told to finish. While it runs, genie smi must show the job, both ranks' devices with their memory, and both
# processes; once it ended, genie smi must say no job runs and show the local preset.
# Usage: genie_smi.sh <build dir> <examples dir> <cost table>
set -u
build=$1 examples=$2 table=$3
genie=$build/bin/genie
root=$(mktemp -d /tmp/genie-smi-test-XXXXXX)
trap 'touch "$root/release"; wait; rm -rf "$root"' EXIT
export GENIE_STATUS_ROOT=$root/jobs
fail=0
check() {  # check <what> <regex> <text>
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then echo "ok   $1: Expectation /$2/ / Actual found"
  else echo "FAIL $1: Expectation /$2/ / Actual not found"; fail=1; fi
}

out=$("$genie" smi)
echo "$out"
check "no job: the local preset" "No running Genie job .*GENIE_DEVICE=h200 with GENIE_GPUS=8" "$out"
check "no job: eight idle H200s" "^\| +7 +NVIDIA H200 " "$out"

GENIE_FAKECUDA_COST_TABLE=$table "$genie" run -n 2 -- "$examples/nvml_query" hold "$root/release" >"$root/job.log" 2>&1 &
job=$!
# Wait (up to 60 s) until both ranks are holding their memory and genie smi shows both processes.
for _ in $(seq 120); do
  out=$("$genie" smi)
  [ "$(grep -c 'holding 256 MiB' "$root/job.log")" = 2 ] && printf '%s\n' "$out" | grep -q '(rank 1)' &&
    printf '%s\n' "$out" | grep -q '(rank 0)' && break
  sleep 0.5
done
echo "$out"
check "the job" "^Genie job $job \(genie run\): 2 ranks, 8 GPUs per node, virtual clock" "$out"
check "device 0 holds rank 0's 256 MiB" "^\| N/A +35C +P0 .*\| +256MiB / [0-9]+MiB" "$out"
check "rank 0's process on device 0" "^\| +0 +N/A +N/A +[0-9]+ +C +nvml_query \(rank 0\) +256MiB" "$out"
check "rank 1's process on device 1" "^\| +1 +N/A +N/A +[0-9]+ +C +nvml_query \(rank 1\) +256MiB" "$out"
n=$(printf '%s\n' "$out" | grep -c '256MiB / ')
[ "$n" = 2 ] && echo "ok   two devices in use: Expectation 2 / Actual $n" ||
  { echo "FAIL two devices in use: Expectation 2 / Actual $n"; fail=1; }
"$genie" smi --job 1 >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] && echo "ok   --job of no running job: Expectation exit 1 / Actual $rc" ||
  { echo "FAIL --job of no running job: Expectation exit 1 / Actual $rc"; fail=1; }

touch "$root/release"
wait "$job"
rc=$?
cat "$root/job.log"
[ "$rc" = 0 ] && echo "ok   job exit: Expectation 0 / Actual $rc" || { echo "FAIL job exit: Expectation 0 / Actual $rc"; fail=1; }
out=$("$genie" smi)
check "after the job: none runs" "No running Genie job" "$out"
left=$(ls "$GENIE_STATUS_ROOT" 2>/dev/null | wc -l)
[ "$left" = 0 ] && echo "ok   job folder removed: Expectation 0 / Actual $left" ||
  { echo "FAIL job folder removed: Expectation 0 / Actual $left"; fail=1; }
echo "genie_smi: $fail failed"
exit $fail
