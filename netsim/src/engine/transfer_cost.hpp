// SPDX-License-Identifier: Apache-2.0
// TransferCost: what a transfer of a Schedule costs on its route (latency phase, wire bytes, rate cap).
#pragma once

#include <cstdint>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// Per-transfer protocol costs (NCCL tuning-model constants, see algorithms/nccl_tuning.hpp).
struct TransferCost {
  int64_t latency_ns = 0;  ///< latency phase before data moves
  double wire_factor = 1;  ///< wire bytes per payload byte
  double rate_bound = 0;   ///< wire bytes/s cap of the transfer (0: none)
  /// Least latency phase when it overlaps its issue predecessor (Step::issue_dep): a network transfer is posted
  /// by NCCL's proxy thread, one per step and connection, which costs getNetOverhead (tuning.cc: 1 us, 2 us
  /// on AMD hosts, x3 for Simple), so steps over the network cannot follow each other faster.
  int64_t min_latency_ns = 0;
};

/// Cost of one transfer of a schedule tuned as `t`, whose communicator spans `nnodes` servers, over `route`.
/// With `protocol_overheads` off: the bare path latency, no overhead, no cap. Otherwise: the protocol's per-step
/// hardware latency of the path's link class (unless `fused`, which pays only the path), LL/LL128 wire overhead, the
/// NVLS efficiency when the transfer goes through the NVSwitch multicast object (`via_nvls`), and per-channel bandwidth
/// caps.
TransferCost transfer_cost(const Topology& topo, const Tuning& t, int nnodes, const Route& route,
                           bool protocol_overheads, bool fused, bool via_nvls);

/// HBM time of a local op on one GPU, in ns: a copy (Step::Kind::kCopy, or a transfer to itself) reads and
/// writes `bytes`, a reduction (kReduce) reads two inputs and writes one, at the GPU's HBM bandwidth
/// (Topology::hbm_bw_bytes_per_s) times the efficiency such kernels reach. 0 when the topology has no HBM
/// data. Local ops have the GPU to themselves (no contention with transfers' memory traffic is modelled).
int64_t local_op_ns(const Topology& topo, Step::Kind kind, uint64_t bytes);

}  // namespace genie::netsim
