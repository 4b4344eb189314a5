#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fabric_testbed.sh <case> <build dir> <examples dir>: real-fabric tests on a network-namespace testbed.
# Needs root and network namespaces (CI runs as root); exits 77 (skipped) without them. Each case builds its
# own testbed (own name and subnet) and removes it on exit, whatever happens.
set -u
case_name=$1; build=$2; examples=$3
genie=$build/bin/genie
fail() { echo "FAIL $case_name: $*"; exit 1; }
if [ "$(id -u)" != 0 ]; then echo "skipped: needs root"; exit 77; fi
probe=gprobe$$
if ! ip netns add "$probe" 2>/dev/null; then echo "skipped: no network namespaces"; exit 77; fi
ip netns del "$probe"
case $case_name in
linkdown|compare)
  if [ ! -x "$build/bench/fabric_allreduce" ]; then echo "skipped: bench/fabric_allreduce not built"; exit 77; fi ;;
esac

declare -A names=([lifecycle]=gtlife [collectives]=gtcoll [p2p]=gtp2p [linkdown]=gtdown [compare]=gtcmp)
declare -A nets=([lifecycle]=11 [collectives]=12 [p2p]=13 [linkdown]=14 [compare]=15)
tb=${names[$case_name]}
subnet=10.213.${nets[$case_name]}
trap '"$genie" testbed down --name "$tb" >/dev/null 2>&1' EXIT
"$genie" testbed down --name "$tb" >/dev/null 2>&1

up() { "$genie" testbed up --name "$tb" --subnet "$subnet" "$@" || fail "testbed up $*"; }
run_expect() {  # run_expect <exit code> <regex> -- command...
  local want_rc=$1 want_re=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  printf '%s\n' "$out"
  [ "$rc" = "$want_rc" ] || fail "Expectation exit $want_rc / Actual exit $rc: $*"
  printf '%s\n' "$out" | grep -Eq -- "$want_re" || fail "output lacks /$want_re/: $*"
  echo "Expectation exit $want_rc and /$want_re/ / Actual as expected"
}

case $case_name in
lifecycle)
  out=$(up --hosts 3 --link 2gbit --latency-us 100)
  printf '%s\n' "$out"
  printf '%s\n' "$out" | grep -q "testbed $tb: 3 hosts on bridge $tb-br, links 2 Gbit/s (TBF burst 250000 bytes" ||
    fail "up did not describe the testbed"
  printf '%s\n' "$out" | grep -Eq "latency: (--latency-us 100.* cannot be honoured: this kernel has no netem|netem adds)" ||
    fail "up did not say what became of --latency-us"
  for i in 0 1 2; do
    ip netns list | grep -q "^$tb-h$i" || fail "namespace $tb-h$i missing"
    tc -n "$tb-h$i" qdisc show dev eth0 | grep -q "tbf" || fail "no TBF on host $i's egress"
    tc qdisc show dev "$tb-p$i" | grep -q "tbf" || fail "no TBF on the bridge port toward host $i"
  done
  ip netns exec "$tb-h0" ip -4 addr show dev eth0 | grep -q "$subnet.1/24" || fail "host 0 lacks $subnet.1"
  topo=/run/genie/testbed-$tb.topology.json
  grep -q '"bw_gbytes_per_s"' "$topo" || fail "no topology file"
  run_expect 0 "testbed $tb is already up; nothing changed" -- "$genie" testbed up --name "$tb" --hosts 3
  run_expect 0 "link of host 2: up" -- "$genie" testbed status --name "$tb"
  # A netsim run on the testbed's own topology (the same network --fabric real runs on).
  run_expect 0 "1048576" -- "$genie" sim --topology "$topo" --collective all_reduce -b 1M -e 1M
  if command -v setpriv >/dev/null; then
    run_expect 1 "genie testbed needs root" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
      "$genie" testbed up --name gtnoroot --hosts 2
  fi
  run_expect 0 "testbed $tb removed" -- "$genie" testbed down --name "$tb"
  for i in 0 1 2; do ip netns list | grep -q "^$tb-h$i" && fail "namespace $tb-h$i left behind"; done
  ip link show "$tb-br" >/dev/null 2>&1 && fail "bridge left behind"
  [ -e "$topo" ] && fail "topology file left behind"
  run_expect 0 "no testbed $tb is up; nothing to remove" -- "$genie" testbed down --name "$tb"
  ;;
collectives)
  up --hosts 2 --link 2gbit >/dev/null
  run_expect 0 "\[rank3\]: collectives: 0 failed" -- env NCCL_DEBUG=INFO "$genie" run --testbed "$tb" -n 4 -- \
    "$examples/collectives" env
  ;;
p2p)
  up --hosts 3 --link 2gbit >/dev/null
  run_expect 0 "\[rank2\]: p2p: 0 failed" -- "$genie" run --testbed "$tb" -n 3 -- "$examples/p2p" env
  ;;
linkdown)
  up --hosts 2 --link 1gbit >/dev/null
  log=$(mktemp)
  start=$(date +%s)
  GENIE_HANG_TIMEOUT=3 "$genie" run --testbed "$tb" -n 2 --grace 2 -- "$build/bench/fabric_allreduce" -b 4 -i 1 -t 60 \
    >"$log" 2>&1 &
  pid=$!
  sleep 4
  ip -n "$tb-h1" link set eth0 down
  wait $pid; rc=$?
  took=$(( $(date +%s) - start ))
  cat "$log"
  [ "$rc" != 0 ] || fail "the job succeeded although a link went down"
  [ "$took" -lt 40 ] || fail "the job took $took s to fail (hang?)"
  grep -Eq "ncclRemoteError|ncclSystemError|remote process exited or there was a network error" "$log" ||
    fail "no rank failed its collective with ncclRemoteError/ncclSystemError"
  grep -Eq "no progress on the fabric for [0-9.]+ s \(GENIE_HANG_TIMEOUT\) waiting for rank [01] \(host $tb-h[01]\)" "$log" ||
    fail "the failing rank did not name its peer and host"
  grep -q "genie run: testbed link of host 1 ($tb-h1 eth0 <-> bridge port $tb-p1) is down; ranks on that host: 1" "$log" ||
    fail "genie run did not report the link and its ranks"
  echo "Expectation: failure within the timeout naming link and ranks / Actual: exit $rc after $took s"
  rm -f "$log"
  ;;
compare)
  up --hosts 4 --link 1gbit >/dev/null
  dir=$(mktemp -d)
  run_expect 0 "all_reduce +4194304 +2 +[0-9.]+ +[0-9.]+ +[0-9.]+" -- env GENIE_REPORT_DIR="$dir" "$genie" run \
    --testbed "$tb" -n 4 --compare sim -- "$build/bench/fabric_allreduce" -b 4 -i 1
  for r in 0 1 2 3; do
    grep -q '"op":"all_reduce".*"bytes":4194304.*"algorithm":"Ring".*"real_us":[0-9.]*,"sim_us":[0-9.]' \
      "$dir/fabric-rank$r.jsonl" || fail "rank $r's record lacks fields"
  done
  rm -rf "$dir"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS $case_name"
