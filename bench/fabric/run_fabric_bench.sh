#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real-fabric benchmarks, each with its reference measured in the same run (docs/BENCHMARKS.md):
#  1. all-reduce busbw on one host (libfabric shm) against OpenMPI's MPI_Allreduce, 2 and 4 ranks,
#     1/16/64/256 MiB fp32, ratio side by side; Genie as it runs by default (peers read transfers in place) and
#     with the bytes in libfabric shm's messages (GENIE_SHIM_FABRIC_SHM_DIRECT=0);
#     1b. the CPU that ranks waiting for a straggler use, with and without doorbells (GENIE_SHIM_FABRIC_DOORBELLS);
#     1c. the peak shared memory of 4 ranks running six 64 MiB sizes (peers let go of freed buffers);
#  2. (root) on a 4-host testbed at --link (default 1gbit): busbw against the link rate for >= 16 MiB;
#  3. (root) the same testbed with --compare sim: ring all-reduce and all-gather 1..64 MiB, sim/real.
# 2 and 3 run once per provider of GENIE_BENCH_PROVIDERS (default "tcp tcp;ofi_rxm": the default, libfabric 1.17's
# native RDM provider net, and rxm over the tcp msg provider, the default before; docs/fabric.md).
# GENIE_BENCH_TESTBED_ONLY=1 skips 1; GENIE_BENCH_HOST_ONLY=1 runs only 1. GENIE_BENCH_ITERS: calls per size (3; in
# section 1 sizes under 16 MiB make 16 MiB worth);
# GENIE_BENCH_ROUNDS: alternating rounds of section 1 (3).
#   bench/fabric/run_fabric_bench.sh [build dir] [link rate]
set -u
build=${1:-build}
link=${2:-1gbit}
genie=$build/bin/genie
bench=$build/bench/fabric_allreduce
mpi=$build/bench/mpi_allreduce
sizes=1,16,64,256
iters=${GENIE_BENCH_ITERS:-3}
rounds=${GENIE_BENCH_ROUNDS:-3}
col() { awk '$1 ~ /^[0-9]+$/ {print $1, $4}'; }  # size busbw

providers=${GENIE_BENCH_PROVIDERS:-tcp tcp;ofi_rxm}
if [ "${GENIE_BENCH_TESTBED_ONLY:-0}" != 1 ]; then
  # The VM's CPUs move under us (a 1 MiB call's time changes 3x from one minute to the next, for OpenMPI too): Genie
  # and MPI alternate, round after round, and the table shows medians with every round's ratio.
  # Sizes under 16 MiB run 16 MiB worth of calls (20 iterations: 320 at 1 MiB), so that a round's time is not a
  # handful of sub-millisecond calls; each size is its own run of each program, in the same order every round.
  echo "== 1. all-reduce on one host: Genie real fabric (shm) vs OpenMPI MPI_Allreduce, $iters iterations per size" \
    "(16 MiB worth below 16 MiB), $rounds alternating rounds: medians (GB/s busbw), ratio of the medians and [each" \
    "round's ratio]"
  if ! [ -x "$mpi" ] || ! command -v mpirun >/dev/null; then
    echo "(no OpenMPI: install openmpi-bin libopenmpi-dev and rebuild for the reference)"
  fi
  for p in 2 4; do
    rows=""
    for ((k = 1; k <= rounds; ++k)); do
      for s in ${sizes//,/ }; do
        n=$((s < 16 ? iters * 16 / s : iters))
        rows+=$("$genie" run -n "$p" --fabric real:shm --no-prefix --no-report -- "$bench" -b "$s" -i "$n" |
          col | sed "s/^/g $k /")$'\n'
        if [ -x "$mpi" ] && command -v mpirun >/dev/null; then
          rows+=$(mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np "$p" "$mpi" -b "$s" \
            -i "$n" | col | sed "s/^/m $k /")$'\n'
        fi
        rows+=$(GENIE_SHIM_FABRIC_SHM_DIRECT=0 "$genie" run -n "$p" --fabric real:shm --no-prefix --no-report -- \
          "$bench" -b "$s" -i "$n" | col | sed "s/^/d $k /")$'\n'
      done
    done
    printf '%s' "$rows" | awk -v p="$p" -v sizes="$sizes" -v rounds="$rounds" '
      function key(kind, i, b) { return kind SUBSEP i SUBSEP b }
      function median(kind, b,   a, m, i, j, t) {
        m = 0
        for (i = 1; i <= rounds; ++i) if (key(kind, i, b) in v) a[++m] = v[key(kind, i, b)]
        for (i = 2; i <= m; ++i) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
        return m == 0 ? 0 : (m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2)
      }
      NF == 4 { v[key($1, $2, $3)] = $4 }
      END {
        printf "%d ranks\n%12s %11s %9s %7s %-22s %14s %7s\n", p, "bytes", "genie", "MPI", "ratio", " [per round]",
          "messages", "ratio"
        n = split(sizes, S, ",")
        for (s = 1; s <= n; ++s) {
          b = S[s] * 1048576; g = median("g", b); m = median("m", b); d = median("d", b); per = ""
          for (i = 1; i <= rounds; ++i)
            if ((key("g", i, b) in v) && (key("m", i, b) in v) && v[key("m", i, b)] > 0)
              per = per sprintf("%s%.2f", per == "" ? "" : " ", v[key("g", i, b)] / v[key("m", i, b)])
          printf "%12d %11.3f %9.3f %7.2f %-22s %14.3f %7.2f\n", b, g, m, (m > 0 ? g / m : 0), " [" per "]", d,
            (m > 0 ? d / m : 0)
        }
      }'
  done
  # Waiting: rank 0 computes 20 ms of CPU time before each call while the others wait in it, with doorbells (idle shm ranks
  # sleep after 1 ms of yielding) and without (they yield until the straggler arrives), alternating.
  echo "== 1b. a straggler: 1 MiB all-reduce after rank 0 computes 20 ms of CPU time, per call: wall time and the CPU the waiting" \
    "ranks used (ms), with and without doorbells, $rounds alternating rounds"
  for p in 4 8; do
    for ((k = 1; k <= rounds; ++k)); do
      for bells in 1 0; do
        GENIE_SHIM_FABRIC_DOORBELLS=$bells "$genie" run -n "$p" --fabric real:shm --no-prefix --no-report -- \
          "$bench" -b 1 -i "$iters" -s 20 | awk -v p="$p" -v b="$bells" -v k="$k" '
            /CPU per call/ && $3 != "0:" { cpu += $4 }
            $1 ~ /^[0-9]+$/ { t = $2 }
            END { printf "%d ranks, round %d, doorbells %s: %.0f us per call, waiting ranks %.2f ms of CPU per call\n",
                  p, k, (b ? "on " : "off"), t, cpu }'
      done
    done
  done
  # Memory: 4 ranks run six sizes of 64 MiB, each with buffers of its own, freed before the next; peers' mappings of
  # freed buffers must not keep them alive. The peak of the machine's Shmem above its start (MiB): at most two sizes'
  # buffers (4 ranks x 2 x 64 MiB each; the old ones go when peers map the new) and staging when freed memory is let
  # go, all six sizes' when it is not.
  echo "== 1c. peak shared memory of 4 ranks, six 64 MiB sizes one after another (buffers freed between sizes)"
  base=$(awk '/^Shmem:/ {print $2}' /proc/meminfo)
  "$genie" run -n 4 --fabric real:shm --no-prefix --no-report -- "$bench" -b 64,64,64,64,64,64 -i 2 >/dev/null &
  job=$!
  peak=$base
  while kill -0 "$job" 2>/dev/null; do
    v=$(awk '/^Shmem:/ {print $2}' /proc/meminfo)
    [ "$v" -gt "$peak" ] && peak=$v
    sleep 0.05
  done
  wait "$job" && echo "peak Shmem $(((peak - base) / 1024)) MiB above the start" || echo "the run failed"
fi

[ "${GENIE_BENCH_HOST_ONLY:-0}" = 1 ] && exit 0
if [ "$(id -u)" != 0 ]; then echo "(not root: testbed benchmarks skipped)"; exit 0; fi
tb=gbench
"$genie" testbed down --name "$tb" >/dev/null 2>&1
trap '"$genie" testbed down --name "$tb" >/dev/null 2>&1' EXIT
"$genie" testbed up --name "$tb" --subnet 10.213.20 --hosts 4 --link "$link" || exit 1
rate=$("$genie" testbed status --name "$tb" | sed -n 's/.*links \([0-9.e+]*\) Gbit\/s.*/\1/p')
for prov in $providers; do
  echo "== 2. all-reduce on the 4-host testbed over $prov, links $rate Gbit/s: busbw / link rate (target >= 0.90 for >= 16 MiB)"
  "$genie" run --testbed "$tb" --fabric "real:$prov" -n 4 --no-prefix -- "$bench" -b 16,64 -i "$iters" | col |
    awk -v r="$rate" '{printf "%12d busbw %.4f GB/s = %.3f of the link rate\n", $1, $2, $2 * 8 / r}'
  echo "== 3. real vs netsim on the testbed over $prov (ring; target sim within 10% of real)"
  for c in allreduce allgather; do
    dir=$(mktemp -d)
    GENIE_REPORT_DIR=$dir NCCL_ALGO=Ring "$genie" run --testbed "$tb" --fabric "real:$prov" -n 4 --compare sim --no-prefix -- \
      "$bench" -c "$c" -b 1,4,16,64 -i "$iters" | grep -E "^ +(all_|collective)"
    rm -rf "$dir"
  done
done
