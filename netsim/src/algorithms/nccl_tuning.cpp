// SPDX-License-Identifier: Apache-2.0
// NCCL tuning model: constants (cited), protocol costs, NCCL_ALGO/NCCL_PROTO parsing and selection.
#include "algorithms/nccl_tuning.hpp"

#include <strings.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

namespace genie::netsim {

namespace nccl {

namespace {
// Column order of NCCL's tables: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT; protocols
// LL, LL128, Simple. Values: NCCL src/graph/tuning.cc ncclTunerConstantsDefaults (2.2x).
constexpr double kBaseLat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                   {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
constexpr double kHwLat[3][7][3] = {
    /* NVLINK */ {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    /* PCI */ {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    /* NET */ {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
/// llMaxBws[arch][nodes index] in GB/s (same file): LL bus-bandwidth ceiling.
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
/// perChMaxRingLL128Bws[arch][nodes index] in GB/s (same file).
constexpr double kPerChRingLl128Bw[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
/// perChMaxNVLSTreeBws[arch][nodes index] in GB/s (same file).
constexpr double kPerChNvlsTreeBw[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
/// LL128 ring efficiency factor 0.92 (~120/128 payload per line), NCCL tuning.cc.
constexpr double kLl128Efficiency = 0.92;
/// LL: half of every 16-byte line is flags (NCCL tuning.cc "busBw * .5").
constexpr double kLlEfficiency = 0.5;
constexpr double kGbps = 1e9;

int algo_col(Algorithm a) {
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
}  // namespace

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

double base_latency_us(Algorithm a, Protocol p) noexcept {
  return kBaseLat[algo_col(a)][static_cast<int>(p)];
}
double hw_latency_us(int hw, Algorithm a, Protocol p) noexcept {
  return kHwLat[hw][algo_col(a)][static_cast<int>(p)];
}

ProtocolCost protocol_cost(const Topology& topo, Algorithm a, Protocol p, LinkClass cls, int comm_channels) noexcept {
  ProtocolCost c;
  const int hw = hw_class(cls);
  // NVLS steps are in-switch reduction / multicast trees: each pays NCCL's NVLink Tree Simple step latency
  // (4.0 us). NVLS's own 25 us hwLatency is a whole-collective figure, of which the schedule's base latency
  // keeps what its steps do not charge.
  const Algorithm step_algo = (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) ? Algorithm::kTree : a;
  c.step_latency_ns = static_cast<int64_t>(std::llround(hw_latency_us(hw, step_algo, p) * 1000.0));
  const int ai = arch_index(topo.arch);
  const int ni = topo.num_servers <= 2 ? topo.num_servers - 1 : 2;
  const int nch = std::max(1, comm_channels);
  switch (p) {
    case Protocol::kLL:
      c.wire_factor = 1.0 / kLlEfficiency;
      c.per_channel_cap = kLlMaxBw[ai][std::max(0, ni)] * kGbps / nch;
      break;
    case Protocol::kLL128:
      c.wire_factor = 1.0 / kLl128Efficiency;
      c.per_channel_cap = kPerChRingLl128Bw[ai][std::max(0, ni)] * kGbps;
      break;
    case Protocol::kSimple:
      break;
  }
  return c;
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

constexpr std::array<Algorithm, 9> kAllAlgos = {
    Algorithm::kTree,     Algorithm::kRing, Algorithm::kCollNetDirect, Algorithm::kCollNetChain,   Algorithm::kNvls,
    Algorithm::kNvlsTree, Algorithm::kPat,  Algorithm::kDirect,        Algorithm::kHalvingDoubling};
constexpr std::array<Protocol, 3> kAllProtos = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};

/// NCCL's function names as used in NCCL_ALGO/NCCL_PROTO prefixes.
const char* nccl_func_name(Collective c) {
  switch (c) {
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllGather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reducescatter";
    case Collective::kAllReduce:
      return "allreduce";
    default:
      return "sendrecv";
  }
}

/// Applies NCCL's list syntax ("a,b", "^a", "allreduce:a;broadcast:b") for function `func` to `enabled`
/// (indexed like `names`). Errors name the variable and the bad token.
template <size_t N>
Status apply_list(const std::string& var, const std::string& text, const char* func,
                  const std::array<const char*, N>& names, std::array<bool, N>* enabled) {
  std::stringstream full(text);
  std::string entry;
  bool first = true;
  while (std::getline(full, entry, ';')) {
    std::string prefix, list = entry;
    const auto colon = entry.find(':');
    if (colon != std::string::npos) {
      prefix = entry.substr(0, colon);
      list = entry.substr(colon + 1);
      static const char* kFuncs[] = {"broadcast", "reduce",   "allgather", "reducescatter",
                                     "allreduce", "sendrecv", "send",      "recv"};
      bool known = false;
      for (const char* f : kFuncs) known |= strcasecmp(prefix.c_str(), f) == 0;
      if (!known) return invalid_argument(var + "=\"" + text + "\": unknown function prefix '" + prefix + "'");
    } else if (!first) {
      return invalid_argument(var + "=\"" + text + "\": all entries except the first must have a 'function:' prefix");
    }
    first = false;
    bool set = true;
    if (!list.empty() && list[0] == '^') {
      set = false;
      list = list.substr(1);
    }
    std::array<bool, N> parsed{};
    std::stringstream ls(list);
    std::string tok;
    while (std::getline(ls, tok, ',')) {
      size_t i = 0;
      for (; i < N; ++i) {
        if (strcasecmp(tok.c_str(), names[i]) == 0) break;
      }
      if (i == N) {
        std::string valid;
        for (const char* n : names) valid += std::string(valid.empty() ? "" : ", ") + n;
        return invalid_argument(var + "=\"" + text + "\": unknown value '" + tok + "' (valid: " + valid + ")");
      }
      parsed[i] = true;
    }
    if (!prefix.empty() && strcasecmp(prefix.c_str(), func) != 0) continue;
    for (size_t i = 0; i < N; ++i) (*enabled)[i] = parsed[i] ? set : !set;
  }
  return Status::ok();
}

struct Candidate {
  Algorithm algo;
  Protocol proto;
  double time_us;
};

}  // namespace

NcclEnv NcclEnv::from_config(const config::Config& cfg) {
  NcclEnv e;
  e.algo = cfg.get(kNcclAlgo);
  e.proto = cfg.get(kNcclProto);
  e.min_channels = static_cast<int>(cfg.get(kNcclMinChannels));
  e.max_channels = static_cast<int>(cfg.get(kNcclMaxChannels));
  e.buffsize = cfg.get(kNcclBuffsize);
  e.nvls_enable = static_cast<int>(cfg.get(kNcclNvlsEnable));
  return e;
}

Result<Tuning> select_tuning(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env) {
  const int n = spec.nranks;
  if (n < 1) return invalid_argument("nranks must be >= 1");
  if (env.buffsize == 0 || env.buffsize < -1) {
    return invalid_argument("NCCL_BUFFSIZE=" + std::to_string(env.buffsize) + " must be positive");
  }
  if (env.buffsize > 0 && env.buffsize < nccl::kSteps * 16) {
    return invalid_argument("NCCL_BUFFSIZE=" + std::to_string(env.buffsize) + " is below the minimum " +
                            std::to_string(nccl::kSteps * 16) + " (NCCL_STEPS x 16 bytes)");
  }
  if (env.min_channels == 0 || env.max_channels == 0 || env.min_channels < -1 || env.max_channels < -1) {
    return invalid_argument("NCCL_MIN_NCHANNELS/NCCL_MAX_NCHANNELS must be >= 1");
  }
  if (env.min_channels > 0 && env.max_channels > 0 && env.min_channels > env.max_channels) {
    return invalid_argument("NCCL_MIN_NCHANNELS=" + std::to_string(env.min_channels) +
                            " exceeds NCCL_MAX_NCHANNELS=" + std::to_string(env.max_channels));
  }
  if (env.nvls_enable < -1 || env.nvls_enable > 2) {
    return invalid_argument("NCCL_NVLS_ENABLE=" + std::to_string(env.nvls_enable) + " (expected 0, 1 or 2)");
  }
  std::array<const char*, 9> algo_names = {"Tree",     "Ring", "CollNetDirect", "CollNetChain",   "NVLS",
                                           "NVLSTree", "PAT",  "Direct",        "HalvingDoubling"};
  std::array<const char*, 3> proto_names = {"LL", "LL128", "Simple"};
  std::array<bool, 9> algo_on;
  algo_on.fill(true);
  algo_on[7] = algo_on[8] = false;  // ASTRA-sim comparison algorithms: only when named in NCCL_ALGO
  std::array<bool, 3> proto_on = {true, true, true};
  const char* func = nccl_func_name(spec.collective);
  if (!env.algo.empty()) GENIE_TRY(apply_list("NCCL_ALGO", env.algo, func, algo_names, &algo_on));
  if (!env.proto.empty()) GENIE_TRY(apply_list("NCCL_PROTO", env.proto, func, proto_names, &proto_on));

  auto clamp_channels = [&](int nch) {
    if (env.min_channels > 0) nch = std::max(nch, env.min_channels);
    if (env.max_channels > 0) nch = std::min(nch, env.max_channels);
    return std::clamp(nch, 1, nccl::kMaxChannels);
  };
  Tuning t;
  const uint64_t bytes = spec.count * datatype_size(spec.datatype);
  // Point-to-point based collectives are not tuned by NCCL: grouped sends/recvs, Simple protocol.
  if (spec.collective == Collective::kAllToAll || spec.collective == Collective::kGather ||
      spec.collective == Collective::kScatter || spec.collective == Collective::kSendRecv) {
    t.algorithm = Algorithm::kDirect;
    t.protocol = Protocol::kSimple;
    t.nchannels = clamp_channels(nccl::default_channels(topo, Algorithm::kRing));
    return t;
  }
  const bool nvls_ok =
      topo.nvls && env.nvls_enable != 0 && topo.num_servers == 1 && n > 1 && nccl::arch_index(topo.arch) >= 2;
  if (env.nvls_enable == 1 && !topo.nvls && !env.algo.empty() && algo_on[4]) {
    return unsupported("NCCL_NVLS_ENABLE=1 but topology " + topo.name + " has no NVLS (NVSwitch multicast)");
  }
  const int nnodes = std::max(1, topo.num_servers);
  const int ai = nccl::arch_index(topo.arch);
  const int ni = nnodes <= 2 ? nnodes - 1 : 2;
  const double intra_bw = topo.nvlink_bw_bytes_per_s > 0 ? topo.nvlink_bw_bytes_per_s : 12e9;  // NCCL PCI_BW 12 GB/s
  // NCCL's nChannels x bwInter: channels spread over all NICs of a server, so a multi-node ring or tree
  // gets the server's whole NIC bandwidth, capped by the GPU's NVLink bandwidth.
  const double bw_total = (nnodes > 1 && topo.net_bw_bytes_per_s > 0)
                              ? std::min(intra_bw, topo.net_bw_bytes_per_s * topo.gpus_per_server)
                              : intra_bw;
  const int hw = nnodes > 1 ? 2 : (topo.nvlink_bw_bytes_per_s > 0 ? 0 : 1);
  const int nsteps = spec.collective == Collective::kAllReduce ? 2 * (n - 1)
                     : (spec.collective == Collective::kAllGather || spec.collective == Collective::kReduceScatter)
                         ? n - 1
                         : n;
  std::vector<Candidate> cands;
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls, Algorithm::kNvlsTree, Algorithm::kDirect,
                      Algorithm::kHalvingDoubling}) {
    const size_t ai_col = a == Algorithm::kDirect            ? 7
                          : a == Algorithm::kHalvingDoubling ? 8
                          : a == Algorithm::kRing            ? 1
                          : a == Algorithm::kTree            ? 0
                          : a == Algorithm::kNvls            ? 4
                                                             : 5;
    if (!algo_on[ai_col]) continue;
    // NVLSTree: NVLS inside servers, trees across them (multi-server all-reduce on NVLS-capable servers).
    if (a == Algorithm::kNvlsTree && (spec.collective != Collective::kAllReduce || nnodes < 2 || !topo.nvls ||
                                      env.nvls_enable == 0 || ai < 2 || topo.gpus_per_server < 2))
      continue;
    if (a == Algorithm::kTree && spec.collective != Collective::kAllReduce) continue;
    if (a == Algorithm::kNvls &&
        (!nvls_ok || (spec.collective != Collective::kAllReduce && spec.collective != Collective::kAllGather &&
                      spec.collective != Collective::kReduceScatter)))
      continue;
    if (a == Algorithm::kHalvingDoubling && (spec.collective != Collective::kAllReduce || (n & (n - 1)) != 0)) continue;
    if (a == Algorithm::kDirect && spec.collective != Collective::kAllReduce &&
        spec.collective != Collective::kAllGather && spec.collective != Collective::kReduceScatter)
      continue;
    for (Protocol p : kAllProtos) {
      if (!proto_on[static_cast<size_t>(p)]) continue;
      if ((a == Algorithm::kNvls || a == Algorithm::kNvlsTree) && p != Protocol::kSimple) continue;
      if ((a == Algorithm::kDirect || a == Algorithm::kHalvingDoubling) && p != Protocol::kSimple) continue;
      const int nch = nccl::default_channels(topo, a);
      double bus_bw = bw_total / 1e9;  // GB/s, NCCL's nChannels * bwIntra
      double lat = nccl::base_latency_us(a, p);
      if (a == Algorithm::kRing) {
        if (p == Protocol::kLL) bus_bw = std::min(nccl::kLlMaxBw[ai][ni], bus_bw * nccl::kLlEfficiency);
        if (p == Protocol::kLL128)
          bus_bw = std::min(bus_bw * nccl::kLl128Efficiency, nch * nccl::kPerChRingLl128Bw[ai][ni]);
        lat += nsteps * nccl::hw_latency_us(hw, a, p);
        bus_bw *= static_cast<double>(n) / std::max(1, nsteps);
      } else if (a == Algorithm::kTree) {
        // Tree: 0.92 efficiency and ratio 0.5 (NCCL tuning.cc); LL at 1/3.8, LL128 at 7/9 on one node.
        bus_bw *= 0.92;
        if (p == Protocol::kLL) bus_bw = std::min(bus_bw / 3.8, nccl::kLlMaxBw[ai][ni]);
        if (p == Protocol::kLL128) bus_bw *= nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
        bus_bw *= 0.5;
        lat += 2 * ((n / nnodes - 1) * nccl::hw_latency_us(hw == 2 ? 0 : hw, a, p) +
                    std::log2(nnodes) * nccl::hw_latency_us(2, a, p));
      } else if (a == Algorithm::kNvls) {
        const double eff = topo.nvls_efficiency;
        bus_bw = bus_bw * eff * (nch - 1) / nch;
        bus_bw *= spec.collective == Collective::kAllReduce ? 2.0 : static_cast<double>(n - 1) / n;
        if (spec.collective == Collective::kAllReduce) bus_bw *= static_cast<double>(n) / nsteps;
        lat = nccl::hw_latency_us(0, a, p);
      } else if (a == Algorithm::kNvlsTree) {
        // intra: NVLS bandwidth (efficiency, (nch-1)/nch, x2 for the two pipelined halves); inter: the
        // server's NICs (x2 with two servers); capped by perChMaxNVLSTreeBws; latency NVLS + 2 log2(nodes)
        // NET NVLSTree steps (NCCL tuning.cc).
        const double intra = intra_bw / 1e9 * topo.nvls_efficiency * (nch - 1) / nch * 2.0;
        const double inter = topo.net_bw_bytes_per_s * topo.gpus_per_server / 1e9 * (nnodes <= 2 ? 2.0 : 1.0);
        bus_bw = std::min({intra, inter, nch * nccl::kPerChNvlsTreeBw[ai][ni]});
        bus_bw *= static_cast<double>(n) / nsteps;
        lat = nccl::hw_latency_us(0, a, p) + 2 * std::log2(nnodes) * nccl::hw_latency_us(2, a, p);
      } else {
        // ASTRA-style direct / halving-doubling: priced like a ring step sequence with their step counts.
        const int steps = a == Algorithm::kDirect ? 2 : 2 * static_cast<int>(std::log2(n));
        lat += steps * nccl::hw_latency_us(hw, Algorithm::kRing, p);
        bus_bw *= static_cast<double>(n) / std::max(1, nsteps);
      }
      if (bus_bw <= 0) continue;
      cands.push_back({a, p, lat + static_cast<double>(bytes) / (1000.0 * bus_bw)});
    }
  }
  if (cands.empty()) {
    return unsupported(std::string("no enabled algorithm/protocol can run ") + collective_name(spec.collective) +
                       " on " + topo.name + " (NCCL_ALGO=\"" + env.algo + "\", NCCL_PROTO=\"" + env.proto + "\")");
  }
  const auto best = std::min_element(cands.begin(), cands.end(),
                                     [](const Candidate& x, const Candidate& y) { return x.time_us < y.time_us; });
  t.algorithm = best->algo;
  t.protocol = best->proto;
  t.predicted_us = best->time_us;
  int nch = clamp_channels(nccl::default_channels(topo, t.algorithm));
  // Fewer channels for small operations: NCCL drops channels while each would get less than
  // nThreads * threadThreshold bytes (enqueue.cc; thresholds comm.h: LL 8*nRanks, LL128 8, Simple 64;
  // threads: LL 512, LL128 640, Simple 512).
  if (t.algorithm == Algorithm::kRing || t.algorithm == Algorithm::kTree) {
    const int64_t threads = t.protocol == Protocol::kLL128 ? 640 : 512;
    const int64_t thresh = t.protocol == Protocol::kLL      ? 8 * (t.algorithm == Algorithm::kRing ? n : 1)
                           : t.protocol == Protocol::kLL128 ? 8
                                                            : 64;
    const int floor_ch = env.min_channels > 0 ? env.min_channels : 1;
    while (nch > floor_ch && static_cast<int64_t>(bytes) < nch * threads * thresh) --nch;
  }
  t.nchannels = nch;
  // NCCL_BUFFSIZE sizes the Simple buffers only (LL/LL128 have their own NCCL_LL*_BUFFSIZE).
  const int64_t buff = (env.buffsize > 0 && t.protocol == Protocol::kSimple) ? env.buffsize
                       : t.protocol == Protocol::kLL                         ? nccl::kDefaultLlBuffsize
                       : t.protocol == Protocol::kLL128                      ? nccl::kDefaultLl128Buffsize
                                                                             : nccl::kDefaultSimpleBuffsize;
  t.chunk_bytes = (t.algorithm == Algorithm::kNvls || t.algorithm == Algorithm::kNvlsTree)
                      ? static_cast<uint64_t>(nccl::kNvlsChunkBytes)
                      : static_cast<uint64_t>(nccl::ring_chunk_bytes(spec.collective, t.protocol, buff));
  return t;
}

}  // namespace genie::netsim
