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
};

/// Cost of one transfer of a schedule tuned as `t` over `route`. With `protocol_overheads` off: the bare path
/// latency, no overhead, no cap. Otherwise: the protocol's per-step hardware latency of the path's link class
/// (unless `fused`, which pays only the path), LL/LL128 wire overhead, the NVLS efficiency when the transfer
/// goes through the NVSwitch multicast object (`via_nvls`), and per-channel bandwidth caps.
TransferCost transfer_cost(const Topology& topo, const Tuning& t, const Route& route, bool protocol_overheads,
                           bool fused, bool via_nvls);

}  // namespace genie::netsim
