// SPDX-License-Identifier: Apache-2.0
// Schedule helpers: names and parsers, spec validation, and dispatch to the algorithm generators.
#include <strings.h>
#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

#include "algorithms/dag_builder.hpp"
#include "algorithms/nccl_tuning.hpp"
#include "engine/sim_budget.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

namespace {
template <class E, size_t N>
Result<E> parse_enum(const std::string& what, const std::string& s, const std::pair<const char*, E> (&table)[N]) {
  for (const auto& [name, v] : table) {
    if (strcasecmp(s.c_str(), name) == 0) return v;
  }
  std::string valid;
  std::set<std::string> seen;
  for (const auto& [name, v] : table) {
    (void)v;
    if (seen.insert(name).second) valid += (valid.empty() ? "" : ", ") + std::string(name);
  }
  return invalid_argument("unknown " + what + " '" + s + "' (valid: " + valid + ")");
}

const std::pair<const char*, Collective> kCollectives[] = {{"all_reduce", Collective::kAllReduce},
                                                           {"allreduce", Collective::kAllReduce},
                                                           {"all_gather", Collective::kAllGather},
                                                           {"allgather", Collective::kAllGather},
                                                           {"reduce_scatter", Collective::kReduceScatter},
                                                           {"reducescatter", Collective::kReduceScatter},
                                                           {"alltoall", Collective::kAllToAll},
                                                           {"broadcast", Collective::kBroadcast},
                                                           {"reduce", Collective::kReduce},
                                                           {"gather", Collective::kGather},
                                                           {"scatter", Collective::kScatter},
                                                           {"sendrecv", Collective::kSendRecv}};
const std::pair<const char*, Algorithm> kAlgorithms[] = {{"Ring", Algorithm::kRing},
                                                         {"Tree", Algorithm::kTree},
                                                         {"CollNetDirect", Algorithm::kCollNetDirect},
                                                         {"CollNetChain", Algorithm::kCollNetChain},
                                                         {"NVLS", Algorithm::kNvls},
                                                         {"NVLSTree", Algorithm::kNvlsTree},
                                                         {"PAT", Algorithm::kPat},
                                                         {"Direct", Algorithm::kDirect},
                                                         {"HalvingDoubling", Algorithm::kHalvingDoubling}};
const std::pair<const char*, Protocol> kProtocols[] = {
    {"LL", Protocol::kLL}, {"LL128", Protocol::kLL128}, {"Simple", Protocol::kSimple}};
const std::pair<const char*, DataType> kDataTypes[] = {
    {"int8", DataType::kInt8},         {"uint8", DataType::kUint8},     {"int32", DataType::kInt32},
    {"uint32", DataType::kUint32},     {"int64", DataType::kInt64},     {"uint64", DataType::kUint64},
    {"half", DataType::kFloat16},      {"float16", DataType::kFloat16}, {"float", DataType::kFloat32},
    {"float32", DataType::kFloat32},   {"double", DataType::kFloat64},  {"float64", DataType::kFloat64},
    {"bfloat16", DataType::kBfloat16}, {"f8e4m3", DataType::kFp8E4M3},  {"f8e5m2", DataType::kFp8E5M2}};
const std::pair<const char*, RedOp> kRedOps[] = {
    {"sum", RedOp::kSum}, {"prod", RedOp::kProd}, {"max", RedOp::kMax}, {"min", RedOp::kMin}, {"avg", RedOp::kAvg}};
}  // namespace

const char* collective_name(Collective c) noexcept {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllToAll:
      return "alltoall";
    case Collective::kGather:
      return "gather";
    case Collective::kScatter:
      return "scatter";
    case Collective::kSendRecv:
      return "sendrecv";
  }
  return "?";
}
const char* collective_api_name(Collective c) noexcept {
  switch (c) {
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    case Collective::kAllToAll:
      return "AlltoAll";
    case Collective::kGather:
      return "Gather";
    case Collective::kScatter:
      return "Scatter";
    case Collective::kSendRecv:
      return "SendRecv";
  }
  return "?";
}
const char* algorithm_name(Algorithm a) noexcept {
  for (const auto& [n, v] : kAlgorithms)
    if (v == a) return n;
  return "?";
}
const char* protocol_name(Protocol p) noexcept {
  for (const auto& [n, v] : kProtocols)
    if (v == p) return n;
  return "?";
}
const char* datatype_name(DataType d) noexcept {
  switch (d) {
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kUint32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kFloat16:
      return "half";
    case DataType::kFloat32:
      return "float";
    case DataType::kFloat64:
      return "double";
    case DataType::kBfloat16:
      return "bfloat16";
    case DataType::kFp8E4M3:
      return "f8e4m3";
    case DataType::kFp8E5M2:
      return "f8e5m2";
  }
  return "?";
}
const char* redop_name(RedOp o) noexcept {
  if (o == RedOp::kPreMulSum) return "premulsum";  // made by ncclRedOpCreatePreMulSum, never parsed from a name
  for (const auto& [n, v] : kRedOps)
    if (v == o) return n;
  return "?";
}
size_t datatype_size(DataType d) noexcept {
  switch (d) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 1;
}
Result<Collective> parse_collective(const std::string& s) { return parse_enum("collective", s, kCollectives); }
Result<Algorithm> parse_algorithm(const std::string& s) { return parse_enum("algorithm", s, kAlgorithms); }
Result<Protocol> parse_protocol(const std::string& s) { return parse_enum("protocol", s, kProtocols); }
Result<DataType> parse_datatype(const std::string& s) { return parse_enum("datatype", s, kDataTypes); }
Result<RedOp> parse_redop(const std::string& s) { return parse_enum("reduction op", s, kRedOps); }
bool collective_reduces(Collective c) noexcept {
  return c == Collective::kAllReduce || c == Collective::kReduce || c == Collective::kReduceScatter;
}

uint64_t Schedule::payload_bytes() const {
  const uint64_t ts = datatype_size(spec.datatype);
  switch (spec.collective) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllToAll:
      return spec.count * ts * static_cast<uint64_t>(spec.nranks);
    default:
      return spec.count * ts;
  }
}

namespace {
Status validate_spec(const CollectiveSpec& spec, const Topology& topo) {
  if (spec.nranks < 1) return invalid_argument("nranks must be >= 1 (got " + std::to_string(spec.nranks) + ")");
  if (!spec.rank_to_gpu.empty() && static_cast<int>(spec.rank_to_gpu.size()) != spec.nranks) {
    return invalid_argument("rank placement lists " + std::to_string(spec.rank_to_gpu.size()) + " GPUs for " +
                            std::to_string(spec.nranks) + " ranks");
  }
  std::set<int> used;
  for (int r = 0; r < spec.nranks; ++r) {
    const int g = spec.rank_to_gpu.empty() ? r : spec.rank_to_gpu[static_cast<size_t>(r)];
    if (g < 0 || g >= topo.num_gpus()) {
      return invalid_argument("rank " + std::to_string(r) + " is placed on GPU " + std::to_string(g) +
                              ", but topology " + topo.name + " has " + std::to_string(topo.num_gpus()) + " GPUs");
    }
    if (!used.insert(g).second) {
      return invalid_argument("rank " + std::to_string(r) + " is placed on GPU " + std::to_string(g) +
                              ", which another rank already uses");
    }
  }
  // Byte sizes must fit in 64 bits: count x element size (x nranks for the per-rank-count collectives).
  const bool per_rank = spec.collective == Collective::kAllGather || spec.collective == Collective::kReduceScatter ||
                        spec.collective == Collective::kAllToAll || spec.collective == Collective::kGather ||
                        spec.collective == Collective::kScatter;
  const uint64_t ts = datatype_size(spec.datatype);
  const uint64_t mult = ts * (per_rank ? static_cast<uint64_t>(spec.nranks) : 1);
  if (spec.count > std::numeric_limits<uint64_t>::max() / mult) {
    return invalid_argument("count " + std::to_string(spec.count) + " of " + datatype_name(spec.datatype) + " (" +
                            std::to_string(ts) + " bytes" +
                            (per_rank ? " x " + std::to_string(spec.nranks) + " ranks" : std::string()) +
                            ") overflows a 64-bit byte count");
  }
  const bool rooted = spec.collective == Collective::kBroadcast || spec.collective == Collective::kReduce ||
                      spec.collective == Collective::kGather || spec.collective == Collective::kScatter;
  if (rooted && (spec.root < 0 || spec.root >= spec.nranks)) {
    return invalid_argument("root " + std::to_string(spec.root) + " is not a rank of a " + std::to_string(spec.nranks) +
                            "-rank communicator");
  }
  return Status::ok();
}
}  // namespace

Result<Schedule> build_schedule(const CollectiveSpec& spec, const Topology& topo, const Tuning& tuning) {
  return build_schedule(spec, topo, tuning, ScheduleForm::kExplicit);
}

Result<Schedule> build_schedule(const CollectiveSpec& spec, const Topology& topo, const Tuning& tuning,
                                ScheduleForm form, uint64_t max_bytes) {
  GENIE_TRY(validate_spec(spec, topo));
  if (tuning.nchannels < 1 || tuning.nchannels > nccl::kMaxChannels) {
    return invalid_argument("channel count " + std::to_string(tuning.nchannels) + " outside [1, " +
                            std::to_string(nccl::kMaxChannels) + "]");
  }
  Schedule s;
  s.spec = spec;
  if (s.spec.rank_to_gpu.empty()) {
    for (int r = 0; r < spec.nranks; ++r) s.spec.rank_to_gpu.push_back(r);
  }
  s.tuning = tuning;
  // Compact form where the algorithm is circulant for this collective; explicit otherwise.
  auto compact = [&](Result<bool> built, CompactSchedule&& cs) -> Result<bool> {
    GENIE_ASSIGN_OR_RETURN(bool ok, std::move(built));
    if (ok) s.compact = std::make_shared<const CompactSchedule>(std::move(cs));
    return ok;
  };
  CompactSchedule cs;
  const bool want_compact = form == ScheduleForm::kCompact;
  BuildBudget budget;
  budget.max_bytes = max_bytes;
  ScopedBuildBudget scope(&budget);
  switch (tuning.algorithm) {
    case Algorithm::kRing:
      if (want_compact) {
        GENIE_ASSIGN_OR_RETURN(bool done, compact(build_ring_compact(s.spec, topo, tuning, &cs), std::move(cs)));
        if (done) break;
      }
      GENIE_TRY(build_ring(s.spec, topo, tuning, &s));
      break;
    case Algorithm::kTree:
      GENIE_TRY(build_tree(s.spec, topo, tuning, &s));
      break;
    case Algorithm::kNvls:
      if (!topo.nvls) return unsupported("NVLS needs NVSwitch multicast; topology " + topo.name + " has none");
      if (nccl::comm_shape(s.spec, topo).nnodes > 1) {
        // NCCL's NVLS across servers is CollNet+NVLS: NVLS inside servers, SHARP between them.
        if (!topo.collnet) {
          return unsupported("NVLS across servers needs in-network reduction (CollNet); topology " + topo.name +
                             " declares none");
        }
        GENIE_TRY(build_nvls_tree(s.spec, topo, tuning, &s, true));
        break;
      }
      GENIE_TRY(build_nvls(s.spec, tuning, &s));
      break;
    case Algorithm::kNvlsTree:
      if (!topo.nvls) return unsupported("NVLSTree needs NVSwitch multicast; topology " + topo.name + " has none");
      GENIE_TRY(build_nvls_tree(s.spec, topo, tuning, &s, false));
      break;
    case Algorithm::kDirect:
      if (want_compact) {
        GENIE_ASSIGN_OR_RETURN(bool done, compact(build_direct_compact(s.spec, tuning, &cs), std::move(cs)));
        if (done) break;
      }
      GENIE_TRY(build_direct(s.spec, tuning, &s));
      break;
    case Algorithm::kHalvingDoubling:
      GENIE_TRY(build_halving_doubling(s.spec, tuning, &s));
      break;
    case Algorithm::kPat: {
      GENIE_ASSIGN_OR_RETURN(bool built, build_pat_compact(s.spec, tuning, &cs));
      if (built && want_compact) {
        s.compact = std::make_shared<const CompactSchedule>(std::move(cs));
      } else if (built) {
        append_expansion(cs, &s);
      }
      break;
    }
    case Algorithm::kCollNetDirect:
    case Algorithm::kCollNetChain:
      GENIE_TRY(build_collnet(s.spec, topo, tuning, &s));
      break;
  }
  if (budget.exceeded) {
    s.ops.clear();
    s.deps.clear();
    char ops[32];
    std::snprintf(ops, sizeof(ops), "%.1f M", static_cast<double>(budget.projected_ops) / 1e6);
    return Status(Errc::kOutOfMemory,
                  std::string("the explicit ") + algorithm_name(tuning.algorithm) + "/" +
                      protocol_name(tuning.protocol) + " schedule of " + collective_name(spec.collective) + " of " +
                      std::to_string(s.payload_bytes()) + " bytes on " + std::to_string(spec.nranks) + " ranks (" +
                      std::to_string(tuning.nchannels) + " channels) would have about " + ops + " ops and need about " +
                      format_bytes(budget.projected_bytes) + " with the simulator's state, over the memory limit of " +
                      format_bytes(max_bytes) + " (given up while building it). For " + too_big_help(s));
  }
  // Once per collective: NCCL's base latency of the algorithm/protocol (kernel start, work fetch). NCCL
  // prices NVLS as one whole-collective latency (tuning.cc: latency = intraLat = 25 us on NVLink); our NVLS
  // DAG already charges an NVLink Tree Simple step latency on each of its kNvlsStages synchronised stages,
  // so the base keeps only the remainder.
  double base_us = nccl::base_latency_us(tuning.algorithm, tuning.protocol);
  if (tuning.algorithm == Algorithm::kNvlsTree) {
    // NCCL: baseLatency(0) + intraLat (NVLS 25 us) + 2 log2(nNodes) x interLat; the DAG charges each step's
    // own latency (NET Tree Simple on the tree hops, NVLink Tree Simple on the NVLS stages), so keep only
    // the NVLS remainder as with NVLS.
    base_us = std::max(0.0, nccl::hw_latency_us(0, Algorithm::kNvlsTree, Protocol::kSimple) -
                                4 * nccl::hw_latency_us(0, Algorithm::kTree, Protocol::kSimple));
  } else if (tuning.algorithm == Algorithm::kNvls && nccl::comm_shape(s.spec, topo).nnodes > 1) {
    // Across servers: NCCL's latency is intraLat (NVLS 25 us) + interLat; the DAG charges the four NVLS stages
    // (NVLink Tree Simple each) and the SHARP upload (NET step latency), so keep the NVLS remainder.
    base_us = std::max(0.0, nccl::hw_latency_us(0, Algorithm::kNvls, Protocol::kSimple) -
                                4 * nccl::hw_latency_us(0, Algorithm::kTree, Protocol::kSimple));
  } else if (tuning.algorithm == Algorithm::kNvls) {
    // All-reduce: upload, reduced download, multicast download (the multicast upload is fused with the
    // reduce); all-gather / reduce-scatter: upload and download.
    const int kNvlsStages = spec.collective == Collective::kAllReduce ? 3 : 2;
    base_us = std::max(0.0, nccl::hw_latency_us(0, Algorithm::kNvls, Protocol::kSimple) -
                                kNvlsStages * nccl::hw_latency_us(0, Algorithm::kTree, Protocol::kSimple));
  }
  s.base_latency_ns = spec.nranks > 1 ? static_cast<int64_t>(base_us * 1000.0) : 0;
  return s;
}

Result<Schedule> plan_collective(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env) {
  return plan_collective(spec, topo, env, ScheduleForm::kExplicit);
}

Result<Schedule> plan_collective(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env,
                                 ScheduleForm form, uint64_t max_bytes) {
  GENIE_TRY(validate_spec(spec, topo));
  GENIE_ASSIGN_OR_RETURN(Tuning t, select_tuning(spec, topo, env));
  return build_schedule(spec, topo, t, form, max_bytes);
}

}  // namespace genie::netsim
