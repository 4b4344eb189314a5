#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# coordinator_faults.sh <case> <build dir> <examples dir>: two rank processes of soak_collectives on a coordinator
# started by hand (`genie coordinator -n 2`, as under another launcher), and the coordinator misbehaving:
#   killed: SIGKILL to the coordinator while the ranks are in the middle of their all-reduces. Both ranks must fail
#     (exit non-zero) within 60 s, each naming the lost coordinator connection; nothing hangs.
#   secret: rank 1 holds a wrong job secret. The coordinator closes its connection: rank 1's ncclCommInitRank fails,
#     naming GENIE_COORDINATOR and the secret, instead of running alone; rank 0 fails (its peer exited, or at the
#     latest after GENIE_HANG_TIMEOUT = 3 s) instead of waiting for it. The coordinator logs it.
#   unreachable: GENIE_COORDINATOR names a port nobody listens on: both ranks fail within the connect timeout
#     (GENIE_COORDINATOR_TIMEOUT=2) naming the address, ncclCommInitRank naming the coordinator (a rank whose
#     peer failed first may fail on that peer's exit instead).
# Prints "ok   <case>: ..." per check, "FAIL <case>: ..." and exits 1 on the first that does not hold.
set -u
case_name=$1; build=$2; examples=$3
genie=$build/bin/genie
fail() { echo "FAIL $case_name: $*"; exit 1; }
ok() { echo "ok   $case_name: $*"; }
work=$(mktemp -d)
pids=()
# The example's rank 0 removes its unique-id file only once its communicator exists: here it may never.
trap 'for p in "${pids[@]}" ${coord_pid:-}; do kill -9 "$p" 2>/dev/null; done; rm -rf "$work"
  rm -f "${TMPDIR:-/tmp}/nccl-example-id-coordfault-$$"' EXIT
eval "$("$genie" env)"
preload=$LD_PRELOAD
unset LD_PRELOAD

start_coordinator() {
  "$genie" coordinator -n 2 --report "$work/report" >"$work/coord.env" 2>"$work/coord.log" &
  coord_pid=$!
  for _ in $(seq 200); do grep -q GENIE_JOB_SECRET "$work/coord.env" 2>/dev/null && break; sleep 0.05; done
  grep -q GENIE_JOB_SECRET "$work/coord.env" || { cat "$work/coord.log"; fail "genie coordinator printed no job secret"; }
  # shellcheck disable=SC1091
  . "$work/coord.env"
}
# start_rank RANK [VAR=VALUE...]: one rank of a 2-rank soak_collectives job (10^6 all-reduces: it runs until stopped).
start_rank() {
  local r=$1; shift
  env LD_PRELOAD="$preload" RANK="$r" WORLD_SIZE=2 LOCAL_RANK="$r" NCCL_EXAMPLE_JOB="coordfault-$$" "$@" \
    "$examples/soak_collectives" env 2 1000000 1024 >"$work/rank$r.log" 2>&1 &
  pids[$r]=$!
}
# wait_ranks LIMIT_S: waits until both ranks exit; fails if one still runs after LIMIT_S. Sets rc0, rc1.
wait_ranks() {
  local t0=$SECONDS
  while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
    if [ $((SECONDS - t0)) -gt "$1" ]; then
      cat "$work/rank0.log" "$work/rank1.log"
      fail "Expectation both ranks exit within $1 s / Actual still running"
    fi
    sleep 0.1
  done
  wait "${pids[0]}"; rc0=$?
  wait "${pids[1]}"; rc1=$?
  pids=()
  cat "$work/rank0.log" "$work/rank1.log"
  ok "Expectation both ranks exit within $1 s / Actual $((SECONDS - t0)) s (exit $rc0, $rc1)"
}
expect_failed() {  # RANK RC REGEX
  [ "$2" != 0 ] || fail "Expectation rank $1 exits non-zero / Actual 0"
  grep -Eq -- "$3" "$work/rank$1.log" || fail "rank $1's output lacks /$3/"
  ok "Expectation rank $1 exits non-zero naming /$3/ / Actual exit $2, as expected"
}

case $case_name in
  killed)
    start_coordinator
    start_rank 0 GENIE_LOG_LEVEL=info
    start_rank 1 GENIE_LOG_LEVEL=info
    # Both ranks joined (their first NCCL call), then 2 s of all-reduces through the coordinator.
    for _ in $(seq 300); do
      [ "$(cat "$work"/rank*.log 2>/dev/null | grep -c "joined the coordinator")" -ge 2 ] && break
      sleep 0.1
    done
    sleep 2
    kill -0 "${pids[0]}" 2>/dev/null && kill -0 "${pids[1]}" 2>/dev/null || { cat "$work"/rank*.log; fail "a rank ended before the coordinator was killed"; }
    kill -9 "$coord_pid"
    wait "$coord_pid" 2>/dev/null
    coord_pid=
    wait_ranks 60
    expect_failed 0 "$rc0" "coordinator connection lost"
    expect_failed 1 "$rc1" "coordinator connection lost"
    ;;
  secret)
    start_coordinator
    start_rank 0 GENIE_HANG_TIMEOUT=3
    start_rank 1 GENIE_HANG_TIMEOUT=3 GENIE_JOB_SECRET=00112233445566778899aabbccddeeff
    wait_ranks 60
    expect_failed 1 "$rc1" "ncclCommInitRank: rank 1: cannot join the job's coordinator: GENIE_COORDINATOR=[^ ]+: handshake: .*GENIE_JOB_SECRET"
    # Rank 0 sees its peer exit (or waits GENIE_HANG_TIMEOUT for it): ncclRemoteError; ncclSystemError when the
    # peer is gone before rank 0 has mapped its control segment.
    expect_failed 0 "$rc0" "nccl(Remote|System)Error"
    grep -Eiq "refused|secret" "$work/coord.log" || { cat "$work/coord.log"; fail "the coordinator's log does not mention the refused connection"; }
    ok "Expectation the coordinator logs the refused connection / Actual as expected"
    ;;
  unreachable)
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    secret=$(head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n')
    for r in 0 1; do
      start_rank "$r" GENIE_COORDINATOR="127.0.0.1:$port" GENIE_JOB_SECRET="$secret" GENIE_COORDINATOR_TIMEOUT=2
    done
    wait_ranks 60
    # Each process says at start-up that it is not part of the job; the first rank to reach its communicator's
    # join fails naming the coordinator, and its peer may fail first on that rank's exit instead.
    expect_failed 0 "$rc0" "GENIE_COORDINATOR=127.0.0.1:$port: cannot reach the coordinator"
    expect_failed 1 "$rc1" "GENIE_COORDINATOR=127.0.0.1:$port: cannot reach the coordinator"
    cat "$work/rank0.log" "$work/rank1.log" | grep -q "ncclCommInitRank: rank [01]: cannot join the job's coordinator: GENIE_COORDINATOR=127.0.0.1:$port" ||
      fail "no rank's ncclCommInitRank failed naming the coordinator"
    ok "Expectation an ncclCommInitRank fails naming the coordinator / Actual as expected"
    ;;
  *) echo "usage: coordinator_faults.sh killed|secret|unreachable BUILD EXAMPLES"; exit 2 ;;
esac
echo "coordinator_faults $case_name: 0 failed"
