#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# report_faults.sh <case> <build dir> <examples dir>: genie run of a 2-rank collectives job whose report cannot be
# written. The job's result is not lost: genie run exits with the job's code (0), both ranks' checks are printed,
# and one clear line names the report path and why; nothing half-written is left.
#   nodir: the report directory cannot be created (under /proc).
#   full: the report directory is on a full file system (an 8 KiB tmpfs; needs root to mount it, else exit 77: skipped).
set -u
case_name=$1; build=$2; examples=$3
fail() { echo "FAIL $case_name: $*"; exit 1; }
ok() { echo "ok   $case_name: $*"; }
work=$(mktemp -d)
trap 'mountpoint -q "$work/tiny" 2>/dev/null && umount "$work/tiny"; rm -rf "$work"' EXIT
case $case_name in
  nodir) report=/proc/genie-report-$$; want="cannot create the report directory $report" ;;
  full)
    mkdir -p "$work/tiny"
    mount -t tmpfs -o size=8k tmpfs "$work/tiny" 2>/dev/null || { echo "skip: cannot mount a tmpfs (needs root)"; exit 77; }
    report=$work/tiny/rep; want="cannot write $report/genie-report.json.tmp \\(disk full\\?\\)" ;;
  *) echo "usage: report_faults.sh nodir|full BUILD EXAMPLES"; exit 2 ;;
esac
"$build/bin/genie" run -n 2 --report "$report" -- "$examples/collectives" env >"$work/out.log" 2>&1
rc=$?
cat "$work/out.log"
[ "$rc" = 0 ] || fail "Expectation genie run exits with the job's code 0 / Actual $rc"
ok "Expectation exit 0 (the job's) / Actual 0"
n=$(grep -c "collectives: 0 failed" "$work/out.log")
[ "$n" = 2 ] || fail "Expectation both ranks' results printed / Actual $n"
ok "Expectation both ranks' results printed / Actual 2"
grep -Eq "genie run: the report could not be written: $want" "$work/out.log" || fail "no line naming the report path and the cause"
ok "Expectation one line naming the report path and the cause / Actual as expected"
if [ "$case_name" = full ]; then
  left=$(ls -A "$report" 2>/dev/null)
  [ -z "$left" ] || fail "Expectation nothing half-written left in $report / Actual: $left"
  ok "Expectation nothing half-written left / Actual none"
fi
echo "report_faults $case_name: 0 failed"
