// SPDX-License-Identifier: Apache-2.0
// CommTiming: rank placement on the modelled cluster and netsim-timed call durations.
#include "comm_timing.hpp"

#include <algorithm>
#include <map>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/netsim/placement.hpp"
#include "genie/sched/job_topology.hpp"
#include "nccl_debug.hpp"
#include "transport/schedule_executor.hpp"

namespace genie::shim {
namespace {

const config::Param<std::string> kTopology{
    "topology", "",
    "Cluster the NCCL shim times collectives on: a netsim preset (hgx-h200, hgx-h100, dgx-a100, hgx-b200, ring:N, "
    "torus2d:XxY, ...) or a topology file. Empty: the node preset matching GENIE_DEVICE, with as many nodes as "
    "the communicator spans."};
const config::Param<std::string> kEngine{"engine",
                                         "flow",
                                         "Network model that times collectives: flow (max-min link sharing) or "
                                         "analytical (alpha-beta).",
                                         {"flow", "analytical"}};
const config::Param<std::string> kFabric{
    "topology_fabric", "rail", "Inter-node fabric of multi-node topologies: rail or fat-tree.", {"rail", "fat-tree"}};

const config::Param<int64_t> kFabricMaxChannels{
    "shim.fabric_max_channels", 4,
    "Real fabric: most channels a collective's Schedule uses (the CPU executes them all on one thread per rank; "
    "the simulated time in --compare is for the same Schedule).",
    {}, 1.0, 64.0};


struct TopoCache {
  std::mutex mu;
  std::map<std::pair<std::string, int>, std::shared_ptr<const netsim::Topology>> topos;
};
TopoCache& topo_cache() {
  static auto* c = new TopoCache();
  return *c;
}

Result<std::shared_ptr<const netsim::Topology>> load_cached(const std::string& name, int nodes,
                                                            const std::string& fabric) {
  auto& c = topo_cache();
  std::lock_guard lk(c.mu);
  auto key = std::make_pair(name, nodes);
  auto it = c.topos.find(key);
  if (it != c.topos.end()) return it->second;
  // The same rule as genie run's coordinator: whole-cluster files take no node count.
  GENIE_ASSIGN_OR_RETURN(auto t, sched::job_topology(name, "", nodes, fabric));
  c.topos[key] = t.topology;
  return t.topology;
}

}  // namespace

Result<std::shared_ptr<CommTiming>> CommTiming::create(const std::vector<RankPlace>& ranks,
                                                       const std::string& device_preset, const TuningOptions& opts) {
  const config::Config& cfg = config::global();
  std::string name = cfg.get(kTopology);
  const bool by_device = name.empty();
  if (by_device) name = sched::server_preset_for_device(device_preset);
  const std::string fabric = cfg.get(kFabric);
  // GPUs per node: from the single-node form of the topology.
  GENIE_ASSIGN_OR_RETURN(auto one, load_cached(name, 1, fabric));
  const int gpus_per_node = netsim::gpus_per_node(*one);
  if (gpus_per_node <= 0) return invalid_argument("topology '" + name + "' has no GPUs");
  std::vector<netsim::RankSite> sites;
  for (const RankPlace& r : ranks) sites.push_back({r.node, r.cuda_dev});
  netsim::Placement placed = netsim::place_by_node(sites, gpus_per_node);
  auto t = std::shared_ptr<CommTiming>(new CommTiming());
  t->rank_to_gpu_ = std::move(placed.gpu);
  const int node_base = placed.nodes;
  // A topology that already has the servers (an explicit graph, e.g. a testbed's) is used as it is.
  if (one->num_servers >= node_base) {
    t->topo_ = one;
  } else {
    GENIE_ASSIGN_OR_RETURN(t->topo_, load_cached(name, std::max(1, node_base), fabric));
  }
  for (int g : t->rank_to_gpu_)
    if (g >= t->topo_->num_gpus())
      return invalid_argument("topology '" + name + "' has " + std::to_string(t->topo_->num_gpus()) +
                              " GPUs, too few for this communicator's " + std::to_string(ranks.size()) +
                              " ranks (set GENIE_TOPOLOGY to a larger cluster)");
  t->topo_name_ = name + (node_base > 1 ? " x" + std::to_string(node_base) + " nodes" : "");
  auto engine = netsim::parse_engine(cfg.get(kEngine));
  t->sim_options_.engine = engine.is_ok() ? engine.value() : netsim::EngineKind::kFlow;
  t->base_env_ = netsim::NcclEnv::from_config(cfg);
  t->set_options(opts);
  GENIE_TRY(t->find_runnable());
  return t;
}

void CommTiming::set_options(const TuningOptions& opts) {
  env_ = base_env_.restricted(opts.min_ctas, opts.max_ctas, "");
  if (opts.collnet_enable >= 0) env_.collnet_enable = opts.collnet_enable;
}

Status CommTiming::find_runnable() {
  for (size_t i = 0; i < runnable_.size(); ++i) {
    const auto c = static_cast<netsim::Collective>(i);
    auto tuning = netsim::select_tuning(spec_for(c, 1, netsim::DataType::kFloat32, 0), *topo_, env_);
    runnable_[i] = tuning.is_ok() ? Status::ok() : tuning.status();
    // NCCL parses NCCL_ALGO / NCCL_PROTO when it tunes a new communicator, and refuses it on a bad list.
    if (!tuning.is_ok() && tuning.status().code() == Errc::kInvalidArgument)
      return invalid_usage(tuning.status().message());
  }
  return Status::ok();
}

Status CommTiming::runnable_with(netsim::Collective c, const CallTuning& call) const {
  const netsim::NcclEnv env = env_.restricted(call.min_ctas, call.max_ctas, call.algo);
  return netsim::select_tuning(spec_for(c, 1, netsim::DataType::kFloat32, 0), *topo_, env).status();
}

std::shared_ptr<CommTiming> CommTiming::subset(const std::vector<int>& parent_ranks, const TuningOptions& opts) const {
  auto t = std::shared_ptr<CommTiming>(new CommTiming());
  t->topo_ = topo_;
  t->topo_name_ = topo_name_;
  t->sim_options_ = sim_options_;
  t->base_env_ = base_env_;
  t->set_options(opts);
  for (int p : parent_ranks) t->rank_to_gpu_.push_back(rank_to_gpu_[static_cast<size_t>(p)]);
  (void)t->find_runnable();  // the lists parsed for the parent; what runs depends on the ranks
  return t;
}

int CommTiming::num_nodes() const {
  std::vector<int> servers;
  for (int g : rank_to_gpu_) servers.push_back(topo_->nodes()[static_cast<size_t>(topo_->gpu_node(g))].server);
  std::sort(servers.begin(), servers.end());
  return static_cast<int>(std::unique(servers.begin(), servers.end()) - servers.begin());
}

netsim::CollectiveSpec CommTiming::spec_for(netsim::Collective c, uint64_t count, netsim::DataType dt,
                                            int root) const {
  // Root placement only matters for rooted collectives.
  const bool rooted = c == netsim::Collective::kBroadcast || c == netsim::Collective::kReduce ||
                      c == netsim::Collective::kGather || c == netsim::Collective::kScatter;
  netsim::CollectiveSpec spec;
  spec.collective = c;
  spec.count = count;
  spec.datatype = dt;
  spec.root = rooted ? root : 0;
  spec.nranks = static_cast<int>(rank_to_gpu_.size());
  spec.rank_to_gpu = rank_to_gpu_;
  return spec;
}

std::array<uint64_t, 4> CommTiming::key_of(const netsim::CollectiveSpec& spec) {
  return {static_cast<uint64_t>(spec.collective), spec.count, static_cast<uint64_t>(spec.datatype),
          static_cast<uint64_t>(spec.root)};
}

Result<CallCost> CommTiming::collective(netsim::Collective c, uint64_t count, netsim::DataType dt, int root,
                                        const CallTuning& call) {
  const netsim::CollectiveSpec spec = spec_for(c, count, dt, root);
  if (call.any()) {
    // A per-call configuration (ncclCollConfig_t): planned with it, not cached with the communicator's choices.
    auto ckey = std::make_tuple(key_of(spec), call.min_ctas, call.max_ctas, call.algo);
    {
      std::lock_guard lk(mu_);
      auto it = call_cache_.find(ckey);
      if (it != call_cache_.end()) return it->second;
    }
    const netsim::NcclEnv env = env_.restricted(call.min_ctas, call.max_ctas, call.algo);
    GENIE_ASSIGN_OR_RETURN(netsim::Schedule sched, netsim::plan_collective(spec, *topo_, env));
    GENIE_ASSIGN_OR_RETURN(netsim::CollectiveTiming timing, netsim::simulate_schedule(topo_, sched, sim_options_));
    CallCost cost{timing.duration(), sched.tuning};
    if (nccl_debug_level() >= NcclDebugLevel::kInfo)
      nccl_debug(NcclDebugLevel::kInfo, -1,
                 "%s: %llu x %s on %d ranks -> %s/%s, %d channels, %.2f us (ncclCollConfig_t: minCTAs %d maxCTAs %d "
                 "algSelection '%s')",
                 netsim::collective_name(c), static_cast<unsigned long long>(count), netsim::datatype_name(dt),
                 spec.nranks, netsim::algorithm_name(sched.tuning.algorithm),
                 netsim::protocol_name(sched.tuning.protocol), sched.tuning.nchannels, cost.duration.count_ns() / 1e3,
                 call.min_ctas, call.max_ctas, call.algo.c_str());
    std::lock_guard lk(mu_);
    call_cache_[ckey] = cost;
    return cost;
  }
  const std::array<uint64_t, 4> key = key_of(spec);
  {
    std::lock_guard lk(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  GENIE_ASSIGN_OR_RETURN(netsim::Schedule sched, netsim::plan_collective(spec, *topo_, env_));
  GENIE_ASSIGN_OR_RETURN(netsim::CollectiveTiming timing, netsim::simulate_schedule(topo_, sched, sim_options_));
  CallCost cost{timing.duration(), sched.tuning};
  if (nccl_debug_level() >= NcclDebugLevel::kInfo)
    nccl_debug(NcclDebugLevel::kInfo, -1, "%s: %llu x %s on %d ranks -> %s/%s, %d channels, %.2f us (netsim %s on %s)",
               netsim::collective_name(c), static_cast<unsigned long long>(count), netsim::datatype_name(dt),
               spec.nranks, netsim::algorithm_name(sched.tuning.algorithm),
               netsim::protocol_name(sched.tuning.protocol), sched.tuning.nchannels, cost.duration.count_ns() / 1e3,
               netsim::engine_name(sim_options_.engine), topo_name_.c_str());
  std::lock_guard lk(mu_);
  cache_[key] = cost;
  return cost;
}

Result<std::shared_ptr<const FabricPlan>> CommTiming::fabric_plan(netsim::Collective c, uint64_t count,
                                                                 netsim::DataType dt, int root, bool simulate) {
  netsim::CollectiveSpec spec = spec_for(c, count, dt, root);
  const std::array<uint64_t, 4> key = key_of(spec);
  {
    std::lock_guard lk(mu_);
    auto it = plan_cache_.find(key);
    if (it != plan_cache_.end()) return it->second;
  }
  GENIE_ASSIGN_OR_RETURN(netsim::Tuning tuning, netsim::select_tuning(spec, *topo_, env_));
  if (!executor_supports(c, tuning.algorithm)) tuning.algorithm = executor_algorithm(c);
  // One CPU thread per rank drives every channel: beyond a few channels more of them only multiply the
  // per-message costs (1 MiB all-reduce on 4 ranks over shm: 32 channels x 8 slices x 6 steps = 1536
  // sends of 682 bytes each). NCCL_MAX_NCHANNELS still lowers it further.
  tuning.nchannels = std::min<int>(tuning.nchannels, static_cast<int>(config::global().get(kFabricMaxChannels)));
  // The CPU sends each chunk as plain bytes: NCCL's Simple protocol. LL/LL128 are GPU flag-word formats whose
  // bandwidth cost the real fabric never pays, so simulating them would not describe what ran.
  tuning.protocol = netsim::Protocol::kSimple;
  auto plan = std::make_shared<FabricPlan>();
  GENIE_ASSIGN_OR_RETURN(plan->schedule, netsim::build_schedule(spec, *topo_, tuning));
  if (simulate) {
    GENIE_ASSIGN_OR_RETURN(netsim::CollectiveTiming timing,
                           netsim::simulate_schedule(topo_, plan->schedule, sim_options_));
    plan->sim_duration = timing.duration();
    plan->simulated = true;
  }
  if (nccl_debug_level() >= NcclDebugLevel::kInfo)
    nccl_debug(NcclDebugLevel::kInfo, -1, "%s: %llu x %s on %d ranks -> %s/%s, %d channels on the real fabric%s",
               netsim::collective_name(c), static_cast<unsigned long long>(count), netsim::datatype_name(dt),
               spec.nranks, netsim::algorithm_name(tuning.algorithm), netsim::protocol_name(tuning.protocol),
               tuning.nchannels,
               simulate ? fmt::format(" (netsim {}: {:.2f} us on {})", netsim::engine_name(sim_options_.engine),
                                      plan->sim_duration.count_ns() / 1e3, topo_name_)
                              .c_str()
                        : "");
  std::lock_guard lk(mu_);
  plan_cache_[key] = plan;
  return std::shared_ptr<const FabricPlan>(plan);
}

Result<SimTime> CommTiming::p2p(int src, int dst, uint64_t bytes) {
  if (bytes == 0) return SimTime::zero();
  const int gs = gpu_of(src), gd = gpu_of(dst);
  const std::array<uint64_t, 4> key{static_cast<uint64_t>(gs), static_cast<uint64_t>(gd), bytes, 0};
  {
    std::lock_guard lk(mu_);
    auto it = p2p_cache_.find(key);
    if (it != p2p_cache_.end()) return it->second;
  }
  SimTime d;
  if (gs == gd) {
    d = SimTime::zero();  // a copy within one GPU: TODO(#8) time it with the device's copy model
  } else {
    netsim::CollectiveSpec spec;
    spec.collective = netsim::Collective::kSendRecv;
    spec.count = bytes;
    spec.datatype = netsim::DataType::kUint8;
    spec.nranks = 2;
    spec.rank_to_gpu = {gs, gd};
    GENIE_ASSIGN_OR_RETURN(netsim::Schedule sched, netsim::plan_collective(spec, *topo_, env_));
    GENIE_ASSIGN_OR_RETURN(netsim::CollectiveTiming timing, netsim::simulate_schedule(topo_, sched, sim_options_));
    d = timing.duration();
  }
  std::lock_guard lk(mu_);
  p2p_cache_[key] = d;
  return d;
}

}  // namespace genie::shim
