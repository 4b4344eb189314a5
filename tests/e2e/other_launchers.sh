#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ranks started by another launcher than genie run, on Genie's coordinator (docs/coordinator.md "Ranks started
# by another launcher"):
#   other_launchers.sh mpirun   BUILD REPORT_DIR   genie coordinator -n 2 started by hand, its two export lines
#                                                  sourced, Open MPI's mpirun -np 2 running examples/collectives
#   other_launchers.sh torchrun BUILD REPORT_DIR PYTHON_BIN_DIR
#                                                  GENIE_COORDINATOR=auto: torchrun --no-python starts 2 ranks, and
#                                                  rank 0 hosts the coordinator on MASTER_PORT + 1
# Both: every rank's data checks pass, and the coordinator's report holds the job (2 ranks, the collectives
# example's calls). Prints "other_launchers: N failed".
set -uo pipefail
mode=$1 build=$2 report=$3
here=$(cd "$(dirname "$0")" && pwd)
example=$build/examples/collectives
failed=0
rm -rf "$report" && mkdir -p "$report"
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -n "${coord_pid:-}" ] && kill "$coord_pid" 2>/dev/null' EXIT
eval "$("$build/bin/genie" env)"
# The preload goes to the launchers that start ranks, not to this script's own commands (in a sanitizer build it
# holds the sanitizer runtime, whose leak check would report every shell and tool).
preload=$LD_PRELOAD
unset LD_PRELOAD
case $mode in
  mpirun)
    "$build/bin/genie" coordinator -n 2 --report "$report" > "$work/coord.env" 2> "$work/coord.log" &
    coord_pid=$!
    for _ in $(seq 100); do grep -q GENIE_JOB_SECRET "$work/coord.env" 2>/dev/null && break; sleep 0.1; done
    # shellcheck disable=SC1091
    . "$work/coord.env"
    export NCCL_EXAMPLE_JOB="mpirun-$$" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # -x NAME=VALUE: the ranks get the preload, mpirun itself is not a rank.
    mpirun --oversubscribe -np 2 --bind-to none -x LD_PRELOAD="$preload" -x LD_LIBRARY_PATH -x GENIE_COORDINATOR \
      -x GENIE_JOB_SECRET -x NCCL_EXAMPLE_JOB "$example" env > "$work/out.log" 2>&1
    rc=$?
    wait "$coord_pid"
    crc=$?
    coord_pid=
    cat "$work/out.log" "$work/coord.log"
    [ "$crc" = 0 ] || { echo "FAIL genie coordinator exit code: Expectation 0 / Actual $crc"; failed=$((failed + 1)); }
    ;;
  torchrun)
    pybin=$4
    export GENIE_COORDINATOR=auto GENIE_JOB_SECRET=$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n')
    export GENIE_REPORT_DIR=$report
    port=$((20000 + RANDOM % 20000))
    # python -m torch.distributed.run is torchrun (its console script's shebang names the venv's first path)
    LD_PRELOAD=$preload "$pybin/python" -m torch.distributed.run --nproc-per-node 2 --master-port "$port" --no-python "$example" env > "$work/out.log" 2>&1
    rc=$?
    cat "$work/out.log"
    ;;
  *) echo "usage: other_launchers.sh mpirun|torchrun BUILD REPORT_DIR [PYTHON_BIN_DIR]"; exit 2 ;;
esac
[ "$rc" = 0 ] || { echo "FAIL launcher exit code: Expectation 0 / Actual $rc"; failed=$((failed + 1)); }
n=$(grep -c "collectives: 0 failed" "$work/out.log")
[ "$n" = 2 ] || { echo "FAIL ranks whose checks passed: Expectation 2 / Actual $n"; failed=$((failed + 1)); }
if [ -f "$report/genie-report.json" ]; then
  python3 "$here/report_tool.py" check "$report" --ranks 2 || failed=$((failed + 1))
  python3 "$here/report_tool.py" expect "$report" \
    "r['job']['nranks'] == 2 and len(r['collectives']) > 100 and r['coordinator']['processes'] == 2" ||
    failed=$((failed + 1))
else
  echo "FAIL the coordinator's report: Expectation $report/genie-report.json / Actual missing"
  failed=$((failed + 1))
fi
echo "other_launchers: $failed failed"
[ "$failed" = 0 ]
