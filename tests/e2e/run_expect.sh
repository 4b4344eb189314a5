#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_expect.sh <expected exit code> <regex the output must contain> -- command...
# Runs the command, prints its output, and fails unless both the exit code and the output match.
set -u
want_rc=$1; want_re=$2; shift 2
[ "$1" = "--" ] && shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" != "$want_rc" ]; then echo "run_expect: Expectation exit $want_rc / Actual exit $rc"; exit 1; fi
if ! printf '%s\n' "$out" | grep -Eq -- "$want_re"; then echo "run_expect: output lacks /$want_re/"; exit 1; fi
echo "run_expect: Expectation exit $want_rc and /$want_re/ / Actual as expected"
