#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with clang (ASan + UBSan, every library instrumented for coverage) into
# ${GENIE_FUZZ_BUILD_DIR:-build-asan} and runs each for ${GENIE_FUZZ_SECONDS:-30} s on a copy of its seed
# corpus (tests/fuzz/corpus/<target>). GENIE_FUZZ_TARGETS="a b" runs only those targets.
# Exits non-zero when any target finds something: a crash, a sanitizer report (UB included: UBSan aborts),
# a leak, an input slower than ${GENIE_FUZZ_TIMEOUT:-10} s, an uncaught exception or a failed invariant. The
# input that did it is kept in build-asan/findings/<target>/: add it to the corpus as regress-<what> (docs/
# testing.md), so fuzz_replay_<target> keeps it as a regression test. A one-line summary per target (execs,
# exec/s, coverage edges, corpus growth) is printed at the end and written to build-asan/fuzz-summary.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${GENIE_FUZZ_BUILD_DIR:-$here/build-asan}
secs=${GENIE_FUZZ_SECONDS:-30}
timeout=${GENIE_FUZZ_TIMEOUT:-10}
all_targets=(coord_frame topology_json astra_yaml device_spec config kernel_table cost_params calibration
  kineto_trace bootstrap report_html fabric_records)
read -r -a targets <<<"${GENIE_FUZZ_TARGETS:-${all_targets[*]}}"

# The targets come from the asan build (scripts/build.sh GENIE_VARIANT=asan: clang, ASan + UBSan, coverage in
# every library), which the test command's ASan suite has already built; only missing targets are compiled here.
GENIE_VARIANT=asan GENIE_BUILD_DIR="$build" GENIE_BUILD_TARGETS="${targets[*]/#/fuzz_}" "$here/scripts/build.sh"

# UBSan reports abort (a finding, not a line in the log); leaks are checked after every input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
status=0
summary="$build/fuzz-summary.txt"
printf '%-15s %6s %10s %8s %6s %13s %s\n' target seconds execs exec/s edges corpus result >"$summary"
for t in "${targets[@]}"; do
  work=$(mktemp -d)
  findings="$build/findings/$t"
  rm -rf "$findings"  # this run's findings only
  mkdir -p "$findings"
  cp "$here/tests/fuzz/corpus/$t/"* "$work/"
  seeds=$(find "$work" -type f | wc -l)
  log="$build/fuzz-$t.log"
  echo "fuzz_$t: ${secs} s" >&2
  result=ok
  (cd "$build/fuzz" && ./"fuzz_$t" -max_total_time="$secs" -timeout="$timeout" -print_final_stats=1 \
    -artifact_prefix="$findings/" "$work") >"$log" 2>&1 || { result="FINDING (see $log, $findings)"; status=1; }
  tail -n 25 "$log" >&2
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  edges=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2 || true)
  corpus=$(find "$work" -type f | wc -l)
  printf '%-15s %6s %10s %8s %6s %13s %s\n' "$t" "$secs" "${execs:-?}" "${rate:-?}" "${edges:-?}" \
    "$seeds->$corpus" "$result" >>"$summary"
  rm -rf "$work"
done
cat "$summary" >&2
exit $status
