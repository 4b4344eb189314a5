// SPDX-License-Identifier: Apache-2.0
// NCCL tuning-model constants (cited), per-transfer protocol costs, channel and chunk defaults, NCCL_* params.
#include "algorithms/nccl_tuning.hpp"

#include <strings.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

namespace genie::netsim {

namespace nccl {

int algo_col(Algorithm a) noexcept {
  switch (a) {
    case Algorithm::kTree:
      return 0;
    case Algorithm::kRing:
      return 1;
    case Algorithm::kCollNetDirect:
      return 2;
    case Algorithm::kCollNetChain:
      return 3;
    case Algorithm::kNvls:
      return 4;
    case Algorithm::kNvlsTree:
      return 5;
    case Algorithm::kPat:
      return 6;
    default:
      return 1;  // Direct/HalvingDoubling: point-to-point steps priced like ring steps
  }
}

int arch_index(const GpuArch& arch) noexcept {
  if (arch.compute_capability >= 100) return 3;
  if (arch.compute_capability >= 90) return 2;
  if (arch.compute_capability >= 80) return 1;
  return 0;
}

int hw_class(LinkClass c) noexcept {
  switch (c) {
    case LinkClass::kNvLink:
      return 0;
    case LinkClass::kPcie:
      return 1;
    case LinkClass::kNet:
      return 2;
  }
  return 2;
}

double base_latency_us(Algorithm a, Protocol p) noexcept { return kBaseLat[algo_col(a)][static_cast<int>(p)]; }
double hw_latency_us(int hw, Algorithm a, Protocol p) noexcept { return kHwLat[hw][algo_col(a)][static_cast<int>(p)]; }

ProtocolCost protocol_cost(const Topology& topo, Algorithm a, Protocol p, LinkClass cls, int comm_channels,
                           int nnodes) noexcept {
  ProtocolCost c;
  const int hw = hw_class(cls);
  // NVLS steps are in-switch reduction / multicast trees: each pays NCCL's NVLink Tree Simple step latency
  // (4.0 us). NVLS's own 25 us hwLatency is a whole-collective figure, of which the schedule's base latency
  // keeps what its steps do not charge.
  const Algorithm step_algo = (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) ? Algorithm::kTree : a;
  c.step_latency_ns = static_cast<int64_t>(std::llround(hw_latency_us(hw, step_algo, p) * 1000.0));
  const int ai = arch_index(topo.arch);
  const int ni = node_index(nnodes);
  const int nch = std::max(1, comm_channels);
  switch (p) {
    case Protocol::kLL:
      c.wire_factor = 1.0 / kLlEfficiency;
      c.per_channel_cap = kLlMaxBw[ll_index(topo, nnodes)][ni] * kGbps / nch;
      break;
    case Protocol::kLL128:
      c.wire_factor = 1.0 / kLl128Efficiency;
      c.per_channel_cap = kPerChRingLl128Bw[ai][ni] * kGbps;
      break;
    case Protocol::kSimple:
      break;
  }
  return c;
}

int node_index(int nnodes) noexcept { return nnodes <= 2 ? std::max(0, nnodes - 1) : 2; }

int ll_index(const Topology& topo, int nnodes) noexcept {
  // "LL: for single node, we look at GPU type; for multi-node, we look at CPU type" (tuning.cc): AMD or mixed
  // CPUs use row 1, others row 0.
  if (nnodes <= 1) return arch_index(topo.arch);
  return topo.cpu_vendor == "amd" ? 1 : 0;
}

int64_t net_overhead_ns(const Topology& topo, Protocol p) noexcept {
  const int64_t base = topo.cpu_vendor == "amd" ? 2000 : 1000;
  return p == Protocol::kSimple ? 3 * base : base;
}

int default_channels(const Topology& topo, Algorithm a) noexcept {
  const bool nvswitch = topo.nvlink_bw_bytes_per_s > 0 && topo.gpus_per_server > 1 && topo.nvswitch_of_gpu(0) >= 0;
  if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) return kNvlsChannels;
  return nvswitch ? kNvSwitchCollChannels : kGenericCollChannels;
}

int64_t ring_chunk_bytes(Collective c, Protocol p, int64_t buffsize) noexcept {
  // stepSize = buffSize / NCCL_STEPS; Simple ring chunk = stepSize * chunkSteps (ALLREDUCE/ALLGATHER/
  // REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS/2, BROADCAST/REDUCE = 1), LL carries half, LL128 120/128.
  const int64_t step = buffsize / kSteps;
  if (p == Protocol::kLL) return std::max<int64_t>(step / 2, 1);
  if (p == Protocol::kLL128) return std::max<int64_t>(step / 128 * 120, 1);
  const int chunk_steps = (c == Collective::kBroadcast || c == Collective::kReduce) ? 1 : kSteps / 2;
  return std::max<int64_t>(step * chunk_steps, 1);
}

int64_t chunk_bytes(const CollectiveSpec& spec, const Tuning& t, int64_t buffsize, uint64_t bytes) noexcept {
  const auto nch = static_cast<uint64_t>(std::max(1, t.nchannels));
  const int64_t step = buffsize / kSteps;
  switch (t.algorithm) {
    case Algorithm::kNvls:
    case Algorithm::kNvlsTree:
      return kNvlsChunkBytes;  // the builders shrink it for small operations as calcCollChunking does
    case Algorithm::kPat: {
      // chunkSteps 1 off the ring: one step; halved while the channels would get fewer than 32 (AG) / 16 (RS).
      const uint64_t want = spec.collective == Collective::kAllGather ? 32 : 16;
      uint64_t chunk = static_cast<uint64_t>(std::max<int64_t>(step, 1));
      while (chunk * nch * want > bytes && chunk > kPatMinChunkBytes) chunk /= 2;
      return static_cast<int64_t>(chunk);
    }
    case Algorithm::kCollNetChain:
    case Algorithm::kCollNetDirect: {
      // CollNetChain: min(256 KiB, stepSize); both halved while each channel's chunks would not cover the
      // pipeline (depth 64 / 8 / 1 chunks above 128 / 64 / 32 KiB). The depth is the local chain (ranks of a
      // server) plus the network hop.
      uint64_t chunk = static_cast<uint64_t>(std::max<int64_t>(step, 1));
      if (t.algorithm == Algorithm::kCollNetChain) chunk = std::min<uint64_t>(chunk, kCollNetChainMaxChunkBytes);
      const uint64_t depth = static_cast<uint64_t>(std::max(2, spec.nranks));
      while (bytes / (nch * chunk) < depth * 64 && chunk > 131072) chunk /= 2;
      while (bytes / (nch * chunk) < depth * 8 && chunk > 65536) chunk /= 2;
      while (bytes / (nch * chunk) < depth && chunk > 32768) chunk /= 2;
      return static_cast<int64_t>(chunk);
    }
    default:
      return ring_chunk_bytes(spec.collective, t.protocol, buffsize);
  }
}

}  // namespace nccl

// ---------------------------------------------------------------------------------------------------
// NCCL_* configuration parameters (declared once; NCCL's own env names).

namespace {
const config::Param<std::string> kNcclAlgo{
    "netsim.nccl_algo", "", "NCCL_ALGO: algorithms allowed (NCCL list syntax)", {}, {}, {}, "NCCL_ALGO"};
const config::Param<std::string> kNcclProto{
    "netsim.nccl_proto", "", "NCCL_PROTO: protocols allowed (NCCL list syntax)", {}, {}, {}, "NCCL_PROTO"};
const config::Param<int64_t> kNcclMinChannels{"netsim.nccl_min_nchannels", -1, "NCCL_MIN_NCHANNELS", {}, -1, 1024,
                                              "NCCL_MIN_NCHANNELS"};
const config::Param<int64_t> kNcclMaxChannels{"netsim.nccl_max_nchannels", -1, "NCCL_MAX_NCHANNELS", {}, -1, 1024,
                                              "NCCL_MAX_NCHANNELS"};
const config::Param<int64_t> kNcclBuffsize{
    "netsim.nccl_buffsize", -1, "NCCL_BUFFSIZE: Simple protocol buffer bytes", {}, -1, {}, "NCCL_BUFFSIZE"};
const config::Param<int64_t> kNcclNvlsEnable{
    "netsim.nccl_nvls_enable", 2, "NCCL_NVLS_ENABLE: 0 off, 1 on, 2 auto", {}, 0, 2, "NCCL_NVLS_ENABLE"};
const config::Param<int64_t> kNcclCollNetEnable{"netsim.nccl_collnet_enable",
                                                0,
                                                "NCCL_COLLNET_ENABLE: 1 lets CollNet (in-network reduction) run where "
                                                "the topology declares it, 0 (NCCL's default) does not",
                                                {},
                                                0,
                                                1,
                                                "NCCL_COLLNET_ENABLE"};
const config::Param<int64_t> kNcclPatEnable{
    "netsim.nccl_pat_enable", 2, "NCCL_PAT_ENABLE: 0 off, 1 on, 2 auto (one GPU per node)", {}, 0, 2,
    "NCCL_PAT_ENABLE"};

}  // namespace

NcclEnv NcclEnv::from_config(const config::Config& cfg) {
  NcclEnv e;
  e.algo = cfg.get(kNcclAlgo);
  e.proto = cfg.get(kNcclProto);
  e.min_channels = static_cast<int>(cfg.get(kNcclMinChannels));
  e.max_channels = static_cast<int>(cfg.get(kNcclMaxChannels));
  e.buffsize = cfg.get(kNcclBuffsize);
  e.nvls_enable = static_cast<int>(cfg.get(kNcclNvlsEnable));
  e.collnet_enable = static_cast<int>(cfg.get(kNcclCollNetEnable));
  e.pat_enable = static_cast<int>(cfg.get(kNcclPatEnable));
  return e;
}

NcclEnv NcclEnv::restricted(int min_ctas, int max_ctas, const std::string& algo_selection) const {
  NcclEnv e = *this;
  // NCCL bounds the channels by min(NCCL_MAX_NCHANNELS, maxCTAs) and max(NCCL_MIN_NCHANNELS, minCTAs) (connect.cc).
  if (max_ctas > 0) e.max_channels = e.max_channels > 0 ? std::min(e.max_channels, max_ctas) : max_ctas;
  if (min_ctas > 0) e.min_channels = std::max(e.min_channels, min_ctas);
  if (!algo_selection.empty()) e.algo = algo_selection;
  return e;
}

}  // namespace genie::netsim
