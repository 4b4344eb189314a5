// SPDX-License-Identifier: Apache-2.0
// NCCL's tuning model (ncclTopoTuneModel + ncclTopoGetAlgoTime + getAlgoInfo of NCCL 2.28.9) on a netsim
// topology, NCCL_ALGO/NCCL_PROTO list parsing, and select_tuning().
#include <strings.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <sstream>

#include "algorithms/nccl_tuning.hpp"

namespace genie::netsim {

namespace {

constexpr std::array<Algorithm, 9> kAllAlgos = {
    Algorithm::kTree,     Algorithm::kRing, Algorithm::kCollNetDirect, Algorithm::kCollNetChain,   Algorithm::kNvls,
    Algorithm::kNvlsTree, Algorithm::kPat,  Algorithm::kDirect,        Algorithm::kHalvingDoubling};
constexpr std::array<Protocol, 3> kAllProtos = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};
// NCCL_ALGO / NCCL_PROTO spellings, indexed like kAllAlgos / kAllProtos: the schedule header's names.
const std::array<const char*, 9>& algo_names() {
  static const std::array<const char*, 9> names = [] {
    std::array<const char*, 9> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = algorithm_name(kAllAlgos[i]);
    return n;
  }();
  return names;
}
const std::array<const char*, 3>& proto_names() {
  static const std::array<const char*, 3> names = [] {
    std::array<const char*, 3> n{};
    for (size_t i = 0; i < n.size(); ++i) n[i] = protocol_name(kAllProtos[i]);
    return n;
  }();
  return names;
}

/// NCCL's PCI_BW (src/graph/topo.h): GB/s of a PCIe path in the graph search.
constexpr double kPciBwGbps = 12.0;
/// NCCL_MAX_NVLS_ARITY (src/include/device.h): most local ranks NVLS all-gather/reduce-scatter serve.
constexpr int kMaxNvlsArity = 32;
/// NCCL_COLLNET_NODE_THRESHOLD default (src/init.cc): CollNet needs at least this many nodes.
constexpr int kCollNetNodeThreshold = 2;
/// Arity serialisation latency of CollNetDirect, 0.4 us per extra local rank (tuning.cc).
constexpr double kCollNetArityLatUs = 0.4;
/// Threads per channel (src/include/device.h NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS,
/// NCCL_SIMPLE_MAX_NTHREADS) and per-thread thresholds (src/include/comm.h NCCL_LL_THREAD_THRESHOLD,
/// NCCL_LL128_THREAD_THRESHOLD, NCCL_SIMPLE_THREAD_THRESHOLD) behind getAlgoInfo's channel reduction.
constexpr int64_t kLlThreads = 512, kLl128Threads = 640, kSimpleThreads = 512;
constexpr int64_t kLlThreshold = 8, kLl128Threshold = 8, kSimpleThreshold = 64;

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

size_t algo_slot(Algorithm a) {
  return static_cast<size_t>(std::find(kAllAlgos.begin(), kAllAlgos.end(), a) - kAllAlgos.begin());
}

int log2i(uint64_t v) {
  int l = -1;
  while (v) {
    v >>= 1;
    ++l;
  }
  return l;
}

bool point_to_point(Collective c) {
  return c == Collective::kAllToAll || c == Collective::kGather || c == Collective::kScatter ||
         c == Collective::kSendRecv;
}

Status check_env(const NcclEnv& env) {
  if (env.buffsize == 0 || env.buffsize < -1) {
    return invalid_argument("NCCL_BUFFSIZE=" + std::to_string(env.buffsize) + " must be positive");
  }
  if (env.buffsize > 0 && env.buffsize < nccl::kSteps * 16) {
    return invalid_argument("NCCL_BUFFSIZE=" + std::to_string(env.buffsize) + " is below the minimum " +
                            std::to_string(nccl::kSteps * 16) + " (NCCL_STEPS x 16 bytes)");
  }
  if (env.min_channels == 0 || env.min_channels < -1) {
    return invalid_argument("NCCL_MIN_NCHANNELS=" + std::to_string(env.min_channels) + " must be >= 1");
  }
  if (env.max_channels == 0 || env.max_channels < -1) {
    return invalid_argument("NCCL_MAX_NCHANNELS=" + std::to_string(env.max_channels) + " must be >= 1");
  }
  if (env.nvls_enable < -1 || env.nvls_enable > 2) {
    return invalid_argument("NCCL_NVLS_ENABLE=" + std::to_string(env.nvls_enable) + " (expected 0, 1 or 2)");
  }
  if (env.collnet_enable < -1 || env.collnet_enable > 1) {
    return invalid_argument("NCCL_COLLNET_ENABLE=" + std::to_string(env.collnet_enable) + " (expected 0 or 1)");
  }
  if (env.pat_enable < -1 || env.pat_enable > 2) {
    return invalid_argument("NCCL_PAT_ENABLE=" + std::to_string(env.pat_enable) + " (expected 0, 1 or 2)");
  }
  return Status::ok();
}

}  // namespace

namespace nccl {

CommShape comm_shape(const CollectiveSpec& spec, const Topology& topo) {
  CommShape c;
  c.nranks = spec.nranks;
  std::vector<int> per_server;
  std::set<int> servers;
  for (int r = 0; r < spec.nranks; ++r) {
    const int g = spec.rank_to_gpu.empty() ? r : spec.rank_to_gpu[static_cast<size_t>(r)];
    const int s = topo.num_servers > 1 ? topo.nodes()[static_cast<size_t>(topo.gpu_node(g))].server : 0;
    servers.insert(s);
    if (per_server.size() <= static_cast<size_t>(std::max(0, s))) per_server.resize(static_cast<size_t>(s) + 1, 0);
    ++per_server[static_cast<size_t>(std::max(0, s))];
  }
  c.nnodes = std::max<int>(1, static_cast<int>(servers.size()));
  for (int k : per_server) c.max_local_ranks = std::max(c.max_local_ranks, k);
  c.ppn = static_cast<double>(c.nranks) / c.nnodes;
  c.nvlink = topo.nvlink_bw_bytes_per_s > 0;
  c.intra_gbps = c.nvlink ? topo.nvlink_bw_bytes_per_s / 1e9 : kPciBwGbps;
  // NCCL's nChannels x bwInter: channels spread over all NICs of a server, so a multi-node ring or tree gets
  // the NIC bandwidth of all the communicator's GPUs on a server, capped by a GPU's NVLink bandwidth.
  c.inter_gbps = topo.net_bw_bytes_per_s / 1e9 * c.ppn;
  c.bus_gbps = c.nnodes > 1 && c.inter_gbps > 0 ? std::min(c.intra_gbps, c.inter_gbps) : c.intra_gbps;
  c.nvswitch = c.nvlink && topo.gpus_per_server > 1 && topo.nvswitch_of_gpu(0) >= 0;
  return c;
}

Result<std::vector<ModelEntry>> tuning_table(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env) {
  GENIE_TRY(check_env(env));
  if (spec.nranks < 1) return invalid_argument("nranks must be >= 1");
  std::array<bool, 9> algo_on;
  algo_on.fill(true);
  algo_on[7] = algo_on[8] = false;  // ASTRA-sim comparison algorithms: only when named in NCCL_ALGO
  std::array<bool, 3> proto_on = {true, true, true};
  const char* func = nccl_func_name(spec.collective);
  if (!env.algo.empty()) GENIE_TRY(apply_list("NCCL_ALGO", env.algo, func, algo_names(), &algo_on));
  if (!env.proto.empty()) GENIE_TRY(apply_list("NCCL_PROTO", env.proto, func, proto_names(), &proto_on));

  const CommShape sh = comm_shape(spec, topo);
  const int n = sh.nranks;
  const int nnodes = sh.nnodes;
  const int ai = arch_index(topo.arch);
  const int ni = node_index(nnodes);
  const double ll_max_bw = kLlMaxBw[ll_index(topo, nnodes)][ni];
  const Collective coll = spec.collective;
  const bool ar = coll == Collective::kAllReduce;
  const bool agrs = coll == Collective::kAllGather || coll == Collective::kReduceScatter;
  const uint64_t bytes = spec.count * datatype_size(spec.datatype) * (agrs ? static_cast<uint64_t>(n) : 1);
  const int nsteps = ar ? 2 * (n - 1) : agrs ? n - 1 : n;
  // Support of the algorithms that need hardware (NCCL: nvlsSupport, collNetSupport, ncclPatEnable).
  const bool nvls_support = topo.nvls && env.nvls_enable != 0 && ai >= 2 && n > 1;
  const bool collnet = topo.collnet && env.collnet_enable == 1 && nnodes >= kCollNetNodeThreshold;
  const int pat_env = env.pat_enable < 0 ? 2 : env.pat_enable;
  const bool pat = topo.arch.compute_capability >= 60 && (pat_env == 1 || (pat_env == 2 && nnodes == n));
  const int intra_hw = sh.nvlink ? 0 : 1;
  const int hw = nnodes == 1 ? intra_hw : 2;

  std::vector<ModelEntry> table;
  for (Algorithm a : kAllAlgos) {
    if (!algo_on[algo_slot(a)]) continue;
    const int col = algo_col(a);
    // Which algorithms NCCL's model evaluates for this collective (tuning.cc, enqueue.cc).
    if ((coll == Collective::kBroadcast || coll == Collective::kReduce) && a != Algorithm::kRing) continue;
    if (agrs && a != Algorithm::kPat && a != Algorithm::kRing && a != Algorithm::kNvls &&
        a != Algorithm::kCollNetDirect && a != Algorithm::kDirect)
      continue;
    if (ar && a == Algorithm::kPat) continue;
    if (a == Algorithm::kNvlsTree && nnodes == 1) continue;
    if ((a == Algorithm::kNvls || a == Algorithm::kNvlsTree) &&
        (!nvls_support || (!ar && sh.max_local_ranks > kMaxNvlsArity)))
      continue;
    if (a == Algorithm::kNvls && nnodes > 1 && !collnet) continue;  // multi-node NVLS is CollNet+NVLS
    if ((a == Algorithm::kCollNetDirect || a == Algorithm::kCollNetChain) && !collnet) continue;
    if (a == Algorithm::kCollNetDirect && !sh.nvswitch) continue;  // needs an NVSwitch system
    // CollNet all-gather/reduce-scatter need the collnet plugin's iallgather/ireducescatter and 1:1 GPU:NIC.
    if (a == Algorithm::kCollNetDirect && agrs) continue;
    if (a == Algorithm::kPat && (!pat || !agrs)) continue;
    if (a == Algorithm::kPat && coll == Collective::kReduceScatter && spec.redop == RedOp::kAvg) continue;
    if (a == Algorithm::kHalvingDoubling && (!ar || (n & (n - 1)) != 0)) continue;
    if (a == Algorithm::kDirect && !ar && !agrs) continue;
    const int nch = default_channels(topo, a);
    for (Protocol p : kAllProtos) {
      if (!proto_on[static_cast<size_t>(p)]) continue;
      const int pi = static_cast<int>(p);
      const bool simple_only = a == Algorithm::kNvls || a == Algorithm::kNvlsTree || a == Algorithm::kPat ||
                               a == Algorithm::kCollNetDirect || a == Algorithm::kCollNetChain ||
                               a == Algorithm::kDirect || a == Algorithm::kHalvingDoubling;
      if (simple_only && p != Protocol::kSimple) continue;
      if ((a == Algorithm::kNvls || a == Algorithm::kNvlsTree) && nch < 2) continue;
      // busBw = nChannels x bw: the per-GPU bus bandwidth of the algorithm's graph.
      double bus = sh.bus_gbps;
      if (a == Algorithm::kCollNetDirect || a == Algorithm::kCollNetChain) bus = sh.intra_gbps;
      if (a == Algorithm::kNvls || a == Algorithm::kNvlsTree) {
        double intra = sh.intra_gbps * topo.nvls_efficiency * (nch - 1) / nch;
        intra *= ar ? 2.0 : (sh.ppn - 1) / sh.ppn;
        const double inter = sh.inter_gbps * ((nnodes <= 2 && a == Algorithm::kNvlsTree) ? 2.0 : 1.0);
        bus = intra;
        if (nnodes > 1) bus = std::min(bus, inter);
        if (a == Algorithm::kNvlsTree) bus = std::min(bus, nch * kPerChNvlsTreeBw[ai][ni]);
      }
      if (a == Algorithm::kRing && p == Protocol::kLL) bus = std::min(ll_max_bw, bus * kLlEfficiency);
      if (a == Algorithm::kRing && p == Protocol::kLL128)
        bus = std::min(bus * kLl128Efficiency, nch * kPerChRingLl128Bw[ai][ni]);
      if (a == Algorithm::kTree && ar) bus = std::min(bus * .92, nch * kPerChTreeBw[ai][ni]);
      if (a == Algorithm::kTree && p == Protocol::kLL) bus = std::min(bus / 3.8, ll_max_bw);
      if (a == Algorithm::kTree && p == Protocol::kLL128)
        bus = std::min(bus * (nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * kPerChTreeLl128Bw[ai][ni]);
      if (a == Algorithm::kPat) bus *= .75;
      if (a == Algorithm::kCollNetDirect) {
        // "Collnet+Direct requires all GPUs to have a local NIC to work at full speed": GPU/NIC ratio.
        const int heads = std::max(1, topo.nic_per_server);
        double factor = sh.ppn / heads;
        factor -= (factor - 1) / 2;
        bus /= factor;
        if (topo.arch.compute_capability >= 90) bus *= .85;
      }
      // Bus -> algorithm bandwidth (ring, NVLS: n/nsteps; others 0.5, except AG/RS off the ring).
      if (!(a != Algorithm::kRing && agrs)) {
        if (a == Algorithm::kRing || a == Algorithm::kNvls || a == Algorithm::kNvlsTree || a == Algorithm::kDirect ||
            a == Algorithm::kHalvingDoubling)
          bus *= static_cast<double>(n) / std::max(1, nsteps);
        else
          bus *= .5;
      }
      if (bus <= 0) continue;
      // Latency.
      double lat = kBaseLat[col][pi];
      const double intra_lat0 = kHwLat[intra_hw][col][pi];
      const double inter_lat = sh.ppn == 1 ? kHwLat[2][0][pi] : kHwLat[2][col][pi];  // graph latencyInter: 0
      if (a == Algorithm::kRing) {
        const double step_lat = kHwLat[hw][col][pi];
        if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
          // sameChannels (every channel one ring) on an NVSwitch server: one step latency; otherwise NCCL's
          // "chunk latency" per step (Tree's for Simple).
          if (sh.nvswitch && nnodes == 1)
            lat += step_lat;
          else
            lat += nsteps * (p == Protocol::kSimple ? kHwLat[hw][0][pi] : step_lat);
        } else {
          // Inter-node rings still launch nsteps x net overhead (x3 for Simple).
          double intra_lat = intra_lat0;
          if (nnodes > 1) intra_lat = std::max(intra_lat, net_overhead_ns(topo, p) / 1000.0);
          const int inter_steps = nnodes == 1 ? 0 : ar ? 2 * (nnodes - 1) : nnodes - 1;
          lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
        }
      } else if (a == Algorithm::kTree) {
        if (ar) lat += 2 * ((n / nnodes - 1) * intra_lat0 + log2i(static_cast<uint64_t>(nnodes)) * inter_lat);
      } else if (a == Algorithm::kCollNetDirect) {
        const int local = n / nnodes;
        lat += 2 * (std::min(1, local - 1) * intra_lat0 + (local - 1) * kCollNetArityLatUs) + inter_lat;
      } else if (a == Algorithm::kCollNetChain) {
        lat += 2 * (n / nnodes - 1) * intra_lat0 + inter_lat;
      } else if (a == Algorithm::kNvls) {
        lat = intra_lat0;
        if (nnodes > 1) lat += inter_lat;
      } else if (a == Algorithm::kNvlsTree) {
        lat += intra_lat0 + 2 * log2i(static_cast<uint64_t>(nnodes)) * inter_lat;
      } else if (a == Algorithm::kPat) {
        lat += log2i(static_cast<uint64_t>(nnodes)) * (inter_lat / 3.5) + n * 2.8;
      } else {
        // ASTRA-style direct / halving-doubling: priced like ring steps with their own step counts.
        const int steps = a == Algorithm::kDirect ? 2 : 2 * log2i(static_cast<uint64_t>(n));
        lat += steps * kHwLat[hw][1][pi];
      }
      // ncclTopoGetAlgoTime refinements.
      double bw = bus;
      const int log_size = log2i(bytes >> 6);
      if (a == Algorithm::kTree && ar && log_size >= 0 && log_size < 23) bw *= kTreeCorrection[pi][log_size];
      if (a == Algorithm::kRing && p == Protocol::kSimple && nnodes > 1 && ar &&
          bytes / (static_cast<uint64_t>(default_channels(topo, Algorithm::kRing)) * n) >= 64)
        lat *= topo.arch.compute_capability < 80 ? 1.9 : 1.4;  // plateau effect of ring
      table.push_back(ModelEntry{a, p, lat, bw, lat + static_cast<double>(bytes) / (1000.0 * bw)});
    }
  }
  return table;
}

}  // namespace nccl

Result<Tuning> select_tuning(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env) {
  const int n = spec.nranks;
  if (n < 1) return invalid_argument("nranks must be >= 1");
  GENIE_TRY(check_env(env));
  // NCCL (connect.cc): the channels are cut to NCCL_MAX_NCHANNELS, then copied up to NCCL_MIN_NCHANNELS, so where
  // the two cross the minimum wins, without an error.
  auto clamp_channels = [&](int nch) {
    if (env.max_channels > 0) nch = std::min(nch, env.max_channels);
    if (env.min_channels > 0) nch = std::max(nch, env.min_channels);
    return std::clamp(nch, 1, nccl::kMaxChannels);
  };
  Tuning t;
  // Point-to-point based collectives are not tuned by NCCL: grouped sends/recvs, Simple protocol.
  if (point_to_point(spec.collective)) {
    // Still parse NCCL_ALGO/NCCL_PROTO so bad values are reported.
    std::array<bool, 9> algo_on{};
    std::array<bool, 3> proto_on{};
    if (!env.algo.empty()) GENIE_TRY(apply_list("NCCL_ALGO", env.algo, "sendrecv", algo_names(), &algo_on));
    if (!env.proto.empty()) GENIE_TRY(apply_list("NCCL_PROTO", env.proto, "sendrecv", proto_names(), &proto_on));
    t.algorithm = Algorithm::kDirect;
    t.protocol = Protocol::kSimple;
    t.nchannels = clamp_channels(nccl::default_channels(topo, Algorithm::kRing));
    return t;
  }
  if (env.nvls_enable == 1 && !topo.nvls && !env.algo.empty()) {
    std::array<bool, 9> algo_on{};
    GENIE_TRY(apply_list("NCCL_ALGO", env.algo, nccl_func_name(spec.collective), algo_names(), &algo_on));
    if (algo_on[algo_slot(Algorithm::kNvls)])
      return unsupported("NCCL_NVLS_ENABLE=1 but topology " + topo.name + " has no NVLS (NVSwitch multicast)");
  }
  GENIE_ASSIGN_OR_RETURN(std::vector<nccl::ModelEntry> table, nccl::tuning_table(spec, topo, env));
  if (table.empty()) {
    return unsupported(std::string("no enabled algorithm/protocol can run ") + collective_name(spec.collective) +
                       " on " + topo.name + " (NCCL_ALGO=\"" + env.algo + "\", NCCL_PROTO=\"" + env.proto + "\")");
  }
  const auto best =
      std::min_element(table.begin(), table.end(), [](const auto& x, const auto& y) { return x.time_us < y.time_us; });
  t.algorithm = best->algo;
  t.protocol = best->proto;
  t.predicted_us = best->time_us;
  int nch = clamp_channels(nccl::default_channels(topo, t.algorithm));
  const bool agrs = spec.collective == Collective::kAllGather || spec.collective == Collective::kReduceScatter;
  const uint64_t bytes = spec.count * datatype_size(spec.datatype) * (agrs ? static_cast<uint64_t>(n) : 1);
  // Fewer channels for small operations: getAlgoInfo drops channels while each would get less than
  // nThreads x threadThreshold bytes (ring, tree and CollNetChain; PAT has no thread count there, NVLS and
  // CollNetDirect keep theirs). LL's threshold scales with nRanks on rings.
  if (t.algorithm == Algorithm::kRing || t.algorithm == Algorithm::kTree || t.algorithm == Algorithm::kCollNetChain) {
    const int64_t threads = t.protocol == Protocol::kLL128 ? kLl128Threads
                            : t.protocol == Protocol::kLL  ? kLlThreads
                                                           : kSimpleThreads;
    const int64_t thresh = t.protocol == Protocol::kLL      ? kLlThreshold * (t.algorithm == Algorithm::kRing ? n : 1)
                           : t.protocol == Protocol::kLL128 ? kLl128Threshold
                           : t.algorithm == Algorithm::kCollNetChain ? 512
                                                                     : kSimpleThreshold;
    const int floor_ch = env.min_channels > 0 ? env.min_channels : 1;
    while (nch > floor_ch && static_cast<int64_t>(bytes) < nch * threads * thresh) --nch;
  }
  t.nchannels = nch;
  // NCCL_BUFFSIZE sizes the Simple buffers only (LL/LL128 have their own NCCL_LL*_BUFFSIZE).
  const int64_t buff = (env.buffsize > 0 && t.protocol == Protocol::kSimple) ? env.buffsize
                       : t.protocol == Protocol::kLL                         ? nccl::kDefaultLlBuffsize
                       : t.protocol == Protocol::kLL128                      ? nccl::kDefaultLl128Buffsize
                                                                             : nccl::kDefaultSimpleBuffsize;
  t.chunk_bytes = static_cast<uint64_t>(nccl::chunk_bytes(spec, t, buff, bytes));
  return t;
}

}  // namespace genie::netsim
