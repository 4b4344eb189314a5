// SPDX-License-Identifier: Apache-2.0
// TransferCost implementation.
#include "engine/transfer_cost.hpp"

#include <algorithm>

#include "algorithms/nccl_tuning.hpp"

namespace genie::netsim {

TransferCost transfer_cost(const Topology& topo, const Tuning& t, const Route& route, bool protocol_overheads,
                           bool fused, bool via_nvls) {
  TransferCost c;
  c.latency_ns = route.latency_ns;
  if (!protocol_overheads) return c;
  bool all_nvlink = !route.channels.empty();
  for (uint32_t ch : route.channels) all_nvlink &= topo.channel_link(ch).link_class == LinkClass::kNvLink;
  const LinkClass cls = route.crosses_net ? LinkClass::kNet : (all_nvlink ? LinkClass::kNvLink : LinkClass::kPcie);
  const nccl::ProtocolCost pc = nccl::protocol_cost(topo, t.algorithm, t.protocol, cls, t.nchannels);
  if (!fused) c.latency_ns = std::max(c.latency_ns, pc.step_latency_ns);
  c.wire_factor = pc.wire_factor;
  // Multicast/in-switch reduction moves data at nvls_efficiency of the NVLink rate (NCCL tuning.cc
  // nvlsEfficiency), whichever algorithm issues it (NVLS, NVLSTree).
  if (via_nvls && topo.nvls_efficiency > 0) c.wire_factor /= topo.nvls_efficiency;
  if (pc.per_channel_cap > 0) c.rate_bound = pc.per_channel_cap * pc.wire_factor;
  return c;
}

}  // namespace genie::netsim
