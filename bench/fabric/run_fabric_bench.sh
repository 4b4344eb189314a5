#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real-fabric benchmarks, each with its reference measured in the same run (docs/BENCHMARKS.md):
#  1. all-reduce busbw on one host (libfabric shm) against OpenMPI's MPI_Allreduce, 2 and 4 ranks,
#     1/16/64/256 MiB fp32, ratio side by side;
#  2. (root) on a 4-host testbed at --link (default 1gbit): busbw against the link rate for >= 16 MiB;
#  3. (root) the same testbed with --compare sim: ring all-reduce and all-gather 1..64 MiB, sim/real.
# 2 and 3 run once per provider of GENIE_BENCH_PROVIDERS (default "tcp tcp;ofi_rxm": the default, libfabric 1.17's
# native RDM provider net, and rxm over the tcp msg provider, the default before; docs/fabric.md).
# GENIE_BENCH_TESTBED_ONLY=1 skips 1.
#   bench/fabric/run_fabric_bench.sh [build dir] [link rate]
set -u
build=${1:-build}
link=${2:-1gbit}
genie=$build/bin/genie
bench=$build/bench/fabric_allreduce
mpi=$build/bench/mpi_allreduce
sizes=1,16,64,256
iters=${GENIE_BENCH_ITERS:-3}
col() { awk '$1 ~ /^[0-9]+$/ {print $1, $4}'; }  # size busbw

providers=${GENIE_BENCH_PROVIDERS:-tcp tcp;ofi_rxm}
if [ "${GENIE_BENCH_TESTBED_ONLY:-0}" != 1 ]; then
  echo "== 1. all-reduce on one host: Genie real fabric (shm) vs OpenMPI MPI_Allreduce, $iters iterations"
  for p in 2 4; do
    g=$("$genie" run -n "$p" --fabric real:shm --no-prefix -- "$bench" -b "$sizes" -i "$iters" | col)
    if [ -x "$mpi" ] && command -v mpirun >/dev/null; then
      m=$(mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np "$p" "$mpi" -b "$sizes" -i "$iters" |
        col)
    else
      m=""
      echo "(no OpenMPI: install openmpi-bin libopenmpi-dev and rebuild for the reference)"
    fi
    printf '%d ranks\n%12s %14s %14s %8s\n' "$p" "bytes" "genie GB/s" "MPI GB/s" "ratio"
    join <(printf '%s\n' "$g" | sort) <(printf '%s\n' "$m" | sort) -a1 | sort -n |
      awk '{r = ($3 > 0) ? $2 / $3 : 0; printf "%12d %14.3f %14.3f %8.2f\n", $1, $2, $3, r}'
  done
fi

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
