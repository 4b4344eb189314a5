// SPDX-License-Identifier: Apache-2.0
// CommTiming: where a communicator's ranks sit on the modelled cluster and how long its calls take there,
// from netsim (the algorithm library's Schedule timed by the analytical or flow engine), cached per shape.
#pragma once

#include <array>
#include <map>
#include <tuple>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::shim {

/// Where one rank runs, as the bootstrap reports it.
struct RankPlace {
  std::string node;  ///< emulated node name (GENIE_NODE or hostname)
  int cuda_dev = 0;
};

/// One call's own tuning (ncclCollConfig_t's minCTAs, maxCTAs and algSelection): empty fields leave the
/// communicator's.
struct CallTuning {
  int min_ctas = 0;
  int max_ctas = 0;
  std::string algo;  ///< NCCL_ALGO syntax
  bool force_algo = true;  ///< forceAlgSelection: a selection that cannot be met is an error (else ignored)
  bool any() const { return min_ctas > 0 || max_ctas > 0 || !algo.empty(); }
};

/// What the tuning chose for one call and what it costs.
struct CallCost {
  SimTime duration;
  netsim::Tuning tuning;
};

/// What the real fabric executes for one call shape: the Schedule (Ring or Direct, see
/// ScheduleExecutor) and, when asked for, netsim's time for that same Schedule on this topology.
struct FabricPlan {
  netsim::Schedule schedule;
  SimTime sim_duration;  ///< netsim's time for `schedule` (zero unless simulated)
  bool simulated = false;
};

/// What a communicator's ncclConfig_t (or NCCL_MIN_CTAS / NCCL_MAX_CTAS) asks of NCCL's tuning: channel bounds,
/// as NCCL clamps its channel count to them (connect.cc), and CollNet.
struct TuningOptions {
  int min_ctas = 0;         ///< at least this many channels (0: NCCL's default)
  int max_ctas = 0;         ///< at most this many channels (0: NCCL's default)
  int collnet_enable = -1;  ///< config collnetEnable (-1: NCCL_COLLNET_ENABLE decides)
};

class CommTiming {
 public:
  /// Builds the placement of `ranks` on the job's topology (GENIE_TOPOLOGY, or the node preset of the
  /// device preset `device_preset`): ranks are grouped by node name in order of first appearance; on a
  /// node with more ranks than the topology has GPUs per node (or with devices beyond it), consecutive
  /// groups of ranks form further emulated nodes.
  static Result<std::shared_ptr<CommTiming>> create(const std::vector<RankPlace>& ranks,
                                                    const std::string& device_preset, const TuningOptions& opts = {});
  /// A sub-communicator: the parent's topology and the GPUs of `parent_ranks` (new rank i = parent rank
  /// parent_ranks[i]).
  std::shared_ptr<CommTiming> subset(const std::vector<int>& parent_ranks, const TuningOptions& opts = {}) const;

  /// Whether NCCL's tuning finds an algorithm for collective `c` here under `call`'s restrictions (why not, if not).
  Status runnable_with(netsim::Collective c, const CallTuning& call) const;
  /// Duration of a collective on this communicator (spec.nranks and placement are filled in here).
  Result<CallCost> collective(netsim::Collective c, uint64_t count, netsim::DataType dt, int root,
                              const CallTuning& call = {});
  /// The real fabric's plan for a collective (cached per shape): the tuning NCCL's model picks, with the
  /// algorithm replaced by Ring/Direct where the CPU executor cannot run the chosen one; `simulate` also
  /// times it in netsim (for --compare sim).
  Result<std::shared_ptr<const FabricPlan>> fabric_plan(netsim::Collective c, uint64_t count, netsim::DataType dt,
                                                        int root, bool simulate);
  /// Duration of one point-to-point message of `bytes` from rank `src` to rank `dst`.
  Result<SimTime> p2p(int src, int dst, uint64_t bytes);
  /// Whether NCCL's model has an algorithm and protocol for collective `c` on this communicator under
  /// NCCL_ALGO / NCCL_PROTO, as NCCL checks when a call is enqueued: ok, or why not (kUnsupported). Worked out
  /// for every collective when the communicator is made; it does not depend on a call's size or datatype.
  const Status& runnable(netsim::Collective c) const { return runnable_[static_cast<size_t>(c)]; }

  const netsim::Topology& topology() const { return *topo_; }
  const std::string& topology_name() const { return topo_name_; }
  int gpu_of(int rank) const { return rank_to_gpu_[static_cast<size_t>(rank)]; }
  int num_nodes() const;

 private:
  CommTiming() = default;
  std::shared_ptr<const netsim::Topology> topo_;
  std::string topo_name_;
  std::vector<int> rank_to_gpu_;
  netsim::SimulatorOptions sim_options_;
  netsim::NcclEnv base_env_;  ///< from the environment (NCCL_ALGO, NCCL_MIN_NCHANNELS, ...)
  netsim::NcclEnv env_;       ///< base_env_ with the communicator's TuningOptions
  void set_options(const TuningOptions& opts);
  std::array<Status, static_cast<size_t>(netsim::Collective::kSendRecv) + 1> runnable_;
  /// Fills runnable_; a malformed NCCL_ALGO / NCCL_PROTO is an error, as at NCCL's communicator init.
  Status find_runnable();
  std::mutex mu_;
  struct KeyHash {
    size_t operator()(const std::array<uint64_t, 4>& k) const {
      uint64_t h = 0xcbf29ce484222325ull;
      for (uint64_t v : k) h = (h ^ v) * 0x100000001b3ull;  // FNV-1a over the words
      return static_cast<size_t>(h);
    }
  };
  /// The netsim description of a call on this communicator (root only kept for rooted collectives).
  netsim::CollectiveSpec spec_for(netsim::Collective c, uint64_t count, netsim::DataType dt, int root) const;
  /// Cache key of a call: (collective, count, datatype, root).
  static std::array<uint64_t, 4> key_of(const netsim::CollectiveSpec& spec);
  std::unordered_map<std::array<uint64_t, 4>, CallCost, KeyHash> cache_;     ///< (collective, count, dtype, root)
  std::unordered_map<std::array<uint64_t, 4>, SimTime, KeyHash> p2p_cache_;
  /// Calls with their own configuration (ncclCollConfig_t): shape and configuration -> cost.
  std::map<std::tuple<std::array<uint64_t, 4>, int, int, std::string>, CallCost> call_cache_;  ///< (src gpu, dst gpu, bytes, 0)
  std::unordered_map<std::array<uint64_t, 4>, std::shared_ptr<const FabricPlan>, KeyHash> plan_cache_;
};

}  // namespace genie::shim
