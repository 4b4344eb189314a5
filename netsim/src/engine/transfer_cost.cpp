// SPDX-License-Identifier: Apache-2.0
// TransferCost implementation.
#include "engine/transfer_cost.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/nccl_tuning.hpp"

namespace genie::netsim {

namespace {
/// Fraction of peak HBM bandwidth a device copy / an elementwise add reaches on large buffers: measured on
/// one H200 (tests/data/calibration/h200/membound.csv, 2^29 fp32 elements: copy 4254.1 GB/s counting read +
/// write, add 4346.7 GB/s counting 2 reads + 1 write, of the 4800 GB/s datasheet peak). Applied to every GPU
/// generation (no other measurement here).
constexpr double kHbmCopyEfficiency = 4254.1 / 4800.0;
constexpr double kHbmReduceEfficiency = 4346.7 / 4800.0;
}  // namespace

TransferCost transfer_cost(const Topology& topo, const Tuning& t, int nnodes, const Route& route,
                           bool protocol_overheads, bool fused, bool via_nvls) {
  TransferCost c;
  c.latency_ns = route.latency_ns;
  if (!protocol_overheads) return c;
  bool all_nvlink = !route.channels.empty();
  for (uint32_t ch : route.channels) all_nvlink &= topo.channel_link(ch).link_class == LinkClass::kNvLink;
  const LinkClass cls = route.crosses_net ? LinkClass::kNet : (all_nvlink ? LinkClass::kNvLink : LinkClass::kPcie);
  const nccl::ProtocolCost pc = nccl::protocol_cost(topo, t.algorithm, t.protocol, cls, t.nchannels, nnodes);
  if (!fused) c.latency_ns = std::max(c.latency_ns, pc.step_latency_ns);
  c.wire_factor = pc.wire_factor;
  // Multicast/in-switch reduction moves data at nvls_efficiency of the NVLink rate (NCCL tuning.cc
  // nvlsEfficiency), whichever algorithm issues it (NVLS, NVLSTree).
  if (via_nvls && topo.nvls_efficiency > 0) c.wire_factor /= topo.nvls_efficiency;
  if (pc.per_channel_cap > 0) c.rate_bound = pc.per_channel_cap * pc.wire_factor;
  if (cls == LinkClass::kNet) c.min_latency_ns = nccl::net_overhead_ns(topo, t.protocol);
  return c;
}

int64_t local_op_ns(const Topology& topo, Step::Kind kind, uint64_t bytes) {
  if (topo.hbm_bw_bytes_per_s <= 0 || bytes == 0) return 0;
  const bool reduce = kind == Step::Kind::kReduce;
  const double traffic = static_cast<double>(bytes) * (reduce ? 3.0 : 2.0);
  const double rate = topo.hbm_bw_bytes_per_s * (reduce ? kHbmReduceEfficiency : kHbmCopyEfficiency);
  return static_cast<int64_t>(std::ceil(traffic / rate * 1e9));
}

}  // namespace genie::netsim
