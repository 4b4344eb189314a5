#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hygiene.sh <case> <build dir> <examples dir>: what a job leaves behind on the host (docs/SECURITY.md).
#   shm_*: a rank is killed (SIGKILL) or exits in the middle of a collective; while the job runs every shared-memory
#     file of it is sampled (name, mode, owner), and afterwards none may be left in /dev/shm. The job's files are
#     told apart from other jobs' on this shared machine by the job tag this script gives it (GENIE_JOB_TAG).
#   testbed_*: `genie testbed` must not remove namespaces, links or bridges it did not create (needs root and
#     network namespaces; exits 77, skipped, without them).
set -u
case_name=$1; build=$2; examples=$3
genie=$build/bin/genie
lib=$build/lib
fail() { echo "FAIL $case_name: $*"; exit 1; }
ok() { echo "ok   $case_name: $*"; }
tag=$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
export GENIE_JOB_TAG=$tag
preload=${GENIE_SANITIZER_PRELOAD:-}$lib/libcudart.so.13:$lib/libnccl.so.2
uid=$(id -u)
seen=$(mktemp)
trap 'rm -f "$seen" "$seen.out"; [ -n "${rep:-}" ] && rm -rf "$rep"' EXIT

# sample_while PID: records "mode owner name" of the job's /dev/shm files until PID exits.
sample_while() {
  while kill -0 "$1" 2>/dev/null; do
    find /dev/shm -maxdepth 1 -name "genie-$tag-*" -printf '%M %U %f\n' 2>/dev/null >>"$seen"
    sleep 0.01
  done
}
# left: the job's files still in /dev/shm.
left() { find /dev/shm -maxdepth 1 -name "genie-$tag-*" -printf '%f\n' 2>/dev/null; }
# check_seen MIN: at least MIN distinct files were seen, every one named genie-<tag>-<16 hex>:<uid>:<n>, mode
# -rw-------, owned by this user. The shm provider's files exist only while communicators are being set up (each
# rank removes its own once every peer has mapped them), so the sampler sees them for a fraction of a second.
check_seen() {
  local n
  n=$(awk '{print $3}' "$seen" | sort -u | wc -l)
  [ "$n" -ge "$1" ] || fail "Expectation at least $1 shared-memory files of the job while it ran / Actual $n"
  ok "Expectation at least $1 shared-memory files seen while the job ran / Actual $n"
  local bad
  bad=$(sort -u "$seen" | grep -Ev "^-rw------- $uid genie-$tag-[0-9a-f]{16}:$uid:[0-9]+\$" || true)
  [ -z "$bad" ] || fail "files not named genie-$tag-<16 hex>:$uid:<n> with mode 0600 owned by uid $uid: $bad"
  ok "Expectation every file named genie-<tag>-<16 hex>:<uid>:<n>, mode 0600, owner $uid / Actual as expected"
}
check_none_left() {
  local l
  l=$(left)
  [ -z "$l" ] || fail "Expectation no shared-memory file of the job left in /dev/shm / Actual: $l"
  ok "Expectation no shared-memory file of the job left in /dev/shm / Actual none"
}
# run_job WANT_RC REGEX -- command...: runs the job in the background, samples its files, checks exit and output.
run_job() {
  local want_rc=$1 want_re=$2; shift 3
  "$@" >"$seen.out" 2>&1 &
  local pid=$!
  sample_while "$pid"
  wait "$pid"; local rc=$?
  cat "$seen.out"
  [ "$rc" = "$want_rc" ] || fail "Expectation exit $want_rc / Actual exit $rc: $*"
  grep -Eq -- "$want_re" "$seen.out" || fail "output lacks /$want_re/: $*"
  ok "Expectation exit $want_rc and /$want_re/ / Actual as expected"
}

need_netns() {
  if [ "$uid" != 0 ]; then echo "skipped: needs root"; exit 77; fi
  local probe=ghprobe$$
  if ! ip netns add "$probe" 2>/dev/null; then echo "skipped: no network namespaces"; exit 77; fi
  ip netns del "$probe"
}

killed_re="peer rank 2 \\(pid [0-9]+\\) exited during AllReduce\\(count=1024, datatype=float, op=sum\\) #2"
case $case_name in
shm_sim_killed)
  # The simulated fabric shares memory through memfds: nothing of the job may ever appear in /dev/shm.
  run_job 0 "$killed_re" -- env LD_PRELOAD="$preload" "$examples/faults" killed 3
  n=$(wc -l <"$seen")
  [ "$n" = 0 ] || fail "Expectation no shared-memory file in /dev/shm during a simulated-fabric job / Actual $n samples"
  ok "Expectation no shared-memory file in /dev/shm during a simulated-fabric job / Actual none"
  check_none_left
  ;;
shm_fabric_killed|shm_fabric_deadpeer)
  # libfabric's shm provider: 2 endpoints (data, control) per rank, each a file in /dev/shm until every peer has
  # mapped it; then its rank removes it, so a rank killed later leaves nothing (survivors and genie run would
  # remove files of a rank killed during set-up).
  scenario=${case_name#shm_fabric_}
  re=$killed_re
  [ "$scenario" = deadpeer ] && re="peer rank 2 \\(pid [0-9]+\\) exited during"
  run_job 0 "$re" -- env LD_PRELOAD="$preload" GENIE_FABRIC=real:shm GENIE_CLOCK=realtime \
    "$examples/faults" "$scenario" 3
  check_seen 1
  check_none_left
  ;;
shm_genie_run_killed)
  # The same under genie run: it names the rank, exits with its status and still writes the report.
  rep=$(mktemp -d)
  run_job 137 "genie run: rank 2 was killed by signal 9" -- \
    "$genie" run -n 3 --fabric real:shm --grace 5 --report "$rep" -- "$examples/faults" killed 3 env
  python3 - "$rep/genie-report.json" <<'EOF' || fail "report of the failed job"
import json, sys
r = json.load(open(sys.argv[1]))
assert r['job']['exit_code'] == 137 and r['job']['first_failed_rank'] == 2, r['job']
print("ok   report: exit_code 137, first_failed_rank 2")
EOF
  check_seen 1
  check_none_left
  ;;
shm_genie_run_leftover)
  # What a rank killed before it could remove its files leaves (here: a file of the job's name, then SIGKILL):
  # genie run removes it once every rank has exited, and says so. A file of another job's tag stays.
  other="genie-00$tag-0123456789abcdef:$uid:0"
  : >"/dev/shm/$other"
  trap 'rm -f "/dev/shm/$other" "$seen" "$seen.out"' EXIT
  run_job 137 "genie run: rank 0 was killed by signal 9" -- "$genie" run -n 1 --no-report -- \
    sh -c ': > "/dev/shm/genie-$GENIE_JOB_TAG-0123456789abcdef:$(id -u):0"; kill -9 $$'
  grep -q "\[genie\] removed 1 shared-memory file(s) the job's ranks left in /dev/shm" "$seen.out" ||
    fail "genie run did not say it removed the file"
  ok "Expectation genie run removed the 1 file the killed rank left / Actual as expected"
  check_none_left
  [ -e "/dev/shm/$other" ] || fail "Expectation another job's file stays / Actual removed"
  ok "Expectation another job's file stays / Actual as expected"
  ;;
listen_loopback)
  # Every socket the job listens on (coordinator, bootstrap roots, the tcp provider's endpoints) is bound to
  # 127.0.0.1 when no address is configured: sampled with ss(8) while a sim job and a real:tcp job run.
  command -v ss >/dev/null || { echo "skipped: no ss"; exit 77; }
  for fabric in sim real:tcp; do
    : >"$seen"
    "$genie" run -n 2 --fabric "$fabric" --no-report -- "$examples/soak_collectives" env 2 2000 1024 4 10 \
      >"$seen.out" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      pids=" $pid $(pgrep -P "$pid" | tr '\n' ' ')"
      ss -ltnpH 2>/dev/null | while read -r _ _ _ local _ users; do
        for p in $(printf '%s\n' "$users" | grep -o 'pid=[0-9]*' | cut -d= -f2); do
          case "$pids" in *" $p "*) echo "$local pid=$p" ;; esac
        done
      done >>"$seen"
      sleep 0.02
    done
    wait "$pid"; rc=$?
    [ "$rc" = 0 ] || { cat "$seen.out"; fail "the $fabric job failed (exit $rc)"; }
    n=$(sort -u "$seen" | wc -l)
    [ "$n" -ge 1 ] || fail "Expectation the $fabric job's listening sockets seen / Actual none"
    bad=$(sort -u "$seen" | grep -v '^127\.0\.0\.1:' || true)
    [ -z "$bad" ] || fail "Expectation every listening socket of the $fabric job on 127.0.0.1 / Actual: $bad"
    ok "Expectation the $fabric job listens on 127.0.0.1 only / Actual $n sockets, all 127.0.0.1: $(sort -u "$seen" | cut -d' ' -f1 | tr '\n' ' ')"
  done
  ;;
testbed_foreign_bridge)
  # A bridge of the name the testbed wants exists already: up fails and the bridge survives.
  need_netns
  tb=ghbr
  trap 'ip link del $tb-br 2>/dev/null; "$genie" testbed down --name $tb >/dev/null 2>&1; rm -f "$seen" "$seen.out"' EXIT
  "$genie" testbed down --name $tb >/dev/null 2>&1
  ip link add $tb-br type bridge || fail "cannot create the foreign bridge"
  out=$("$genie" testbed up --name $tb --hosts 2 --subnet 10.213.21 2>&1); rc=$?
  printf '%s\n' "$out"
  [ "$rc" != 0 ] || fail "Expectation up fails / Actual exit 0"
  ip link show $tb-br >/dev/null 2>&1 || fail "Expectation the foreign bridge $tb-br survives / Actual removed"
  ok "Expectation up fails and leaves the foreign bridge $tb-br / Actual as expected"
  ip netns list | grep -q "^$tb-h" && fail "namespaces of the failed up left behind"
  ok "Expectation nothing of the failed up left / Actual as expected"
  ;;
testbed_foreign_namespace)
  # Host 1's namespace exists already: up fails, removes what it made (bridge, host 0) and keeps the foreign one.
  need_netns
  tb=ghns
  trap 'ip netns del $tb-h1 2>/dev/null; "$genie" testbed down --name $tb >/dev/null 2>&1; rm -f "$seen" "$seen.out"' EXIT
  "$genie" testbed down --name $tb >/dev/null 2>&1
  ip netns add $tb-h1 || fail "cannot create the foreign namespace"
  out=$("$genie" testbed up --name $tb --hosts 2 --subnet 10.213.22 2>&1); rc=$?
  printf '%s\n' "$out"
  [ "$rc" != 0 ] || fail "Expectation up fails / Actual exit 0"
  ip netns list | grep -q "^$tb-h1" || fail "Expectation the foreign namespace $tb-h1 survives / Actual removed"
  ip netns list | grep -q "^$tb-h0" && fail "Expectation host 0 (made by up) removed / Actual left"
  ip link show $tb-br >/dev/null 2>&1 && fail "Expectation the bridge (made by up) removed / Actual left"
  ok "Expectation up removes only what it made and keeps $tb-h1 / Actual as expected"
  ;;
testbed_forged_state)
  # A state file that lists things the testbed would never have made: down refuses and touches nothing.
  need_netns
  tb=ghfg
  state=/run/genie/testbed-$tb.json
  trap 'ip netns del ghforeign 2>/dev/null; rm -f "$state" "$seen" "$seen.out"' EXIT
  ip netns add ghforeign || fail "cannot create the foreign namespace"
  mkdir -p /run/genie
  cat >"$state" <<EOF
{"name": "$tb", "hosts": 1, "link_bits_per_s": 1e9, "burst_bytes": 125000, "bridge": "lo",
 "namespaces": ["ghforeign"], "addresses": ["10.213.23.1"], "bridge_ports": ["lo"], "latency_note": "",
 "measured_latency_us": 0, "measured_goodput_bits_per_s": 0, "topology_file": "/run/genie/testbed-$tb.topology.json"}
EOF
  out=$("$genie" testbed down --name $tb 2>&1); rc=$?
  printf '%s\n' "$out"
  [ "$rc" != 0 ] || fail "Expectation down refuses the forged state / Actual exit 0"
  printf '%s\n' "$out" | grep -q "not a name testbed $tb creates" || fail "down did not say why it refused"
  ip netns list | grep -q "^ghforeign" || fail "Expectation the foreign namespace survives / Actual removed"
  ip link show lo | grep -q "UP" || fail "loopback was touched"
  ok "Expectation down refuses and leaves ghforeign and lo / Actual as expected"
  ;;
*)
  fail "unknown case"
  ;;
esac
echo "hygiene $case_name: 0 failed"
