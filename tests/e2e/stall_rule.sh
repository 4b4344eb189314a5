#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# stall_rule.sh <case> <build dir> <examples dir>: the coordinator's stall rule (docs/coordinator.md) on a 3-rank job
# whose rank 1 keeps the clock waiting while ranks 0 and 2 make an AllReduce of their own, with a 0.3 s stall grace.
#   spin: rank 1 computes for 1.5 s of its CPU time: the coordinator cannot know when it calls again, so once rank 1
#         has used the grace in CPU time it assumes it injects nothing earlier: at least one relaxed step is counted.
#   sleep: rank 1 sleeps 1.5 s: a probe finds the whole job asleep and the clock moves exactly: no relaxed step.
# Both: the job succeeds and the data are right.
set -u
case_name=$1; build=$2; examples=$3
fail() { echo "FAIL $case_name: $*"; exit 1; }
ok() { echo "ok   $case_name: $*"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $case_name in
  spin|sleep) ;;
  *) echo "usage: stall_rule.sh spin|sleep BUILD EXAMPLES"; exit 2 ;;
esac
GENIE_HOST_CPU_SCALE=0 "$build/bin/genie" run -n 3 --stall-grace 0.3 --report "$work/rep" -- \
  "$examples/stall_rule" "$case_name" 1.5 >"$work/out.log" 2>&1
rc=$?
cat "$work/out.log"
[ "$rc" = 0 ] || fail "Expectation genie run exit code 0 / Actual $rc"
ok "Expectation exit 0 / Actual 0"
n=$(grep -c "stall_rule: 0 failed" "$work/out.log")
[ "$n" = 3 ] || fail "Expectation every rank's data right / Actual $n"
ok "Expectation every rank's data right / Actual 3"
read -r relaxed asleep < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["coordinator"]; print(c["relaxed_steps"], c["asleep_steps"])' "$work/rep/genie-report.json") \
  || fail "genie-report.json has no coordinator.relaxed_steps / asleep_steps"
if [ "$case_name" = spin ]; then
  [ "$relaxed" -ge 1 ] || fail "Expectation relaxed steps >= 1 (a rank computing outside Genie past the grace) / Actual $relaxed"
  ok "Expectation relaxed steps >= 1 / Actual $relaxed"
else
  [ "$relaxed" = 0 ] || fail "Expectation relaxed steps 0 (a sleeping rank is found asleep) / Actual $relaxed"
  ok "Expectation relaxed steps 0 / Actual 0"
  [ "$asleep" -ge 1 ] || fail "Expectation asleep steps >= 1 / Actual $asleep"
  ok "Expectation asleep steps >= 1 / Actual $asleep"
fi
echo "stall_rule $case_name: 0 failed"
