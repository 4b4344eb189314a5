// SPDX-License-Identifier: Apache-2.0
// Replaying Chakra execution traces (one per rank) on a topology: compute nodes are delays, collectives and messages
// are planned and timed by netsim with their process groups placed on the cluster, all ranks on one clock. The logic
// behind `genie sim --workload DIR` (docs/chakra.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// How far a replay has got (for a progress line).
struct WorkloadProgress {
  uint64_t nodes_done = 0, nodes_total = 0;
  SimTime now;
  double wall_s = 0;
};

struct WorkloadOptions {
  /// A directory holding <prefix>.<rank>.et files (one prefix), or DIR/PREFIX.
  std::string workload;
  /// The cluster: empty takes the traces' (GlobalMetadata topology, nodes, topology_fabric).
  std::string topology;
  std::optional<int> nodes;  ///< servers (default: the traces', or what the ranks need)
  std::optional<std::string> fabric;
  std::optional<EngineKind> engine;  ///< default: the traces'
  /// NCCL choices: the traces' (nccl_algo, ...) with these fields overriding where set (not -1 / empty).
  NcclEnv env_override;
  /// Data-parallel replicas to replay (0: as recorded). Each data-parallel group grows to `dp` members, every other
  /// group is copied per replica (docs/chakra.md, "Rescaling data parallelism").
  int dp = 0;
  /// Data-parallel group size of the traces when their groups do not make it unambiguous (0: inferred).
  int dp_from = 0;
  /// Called about once per `progress_interval_s` of wall time while the replay runs.
  std::function<void(const WorkloadProgress&)> progress;
  double progress_interval_s = 2.0;
};

/// Per-rank outcome. Ranges are the annotated ranges the traces mark (NVTX ranges of genie run: node attributes
/// range / range_event), each occurrence's replayed duration in order.
struct WorkloadRank {
  int rank = 0;
  int gpu = 0;
  SimTime end;  ///< when its last device node (not is_cpu_op) finished; its last host node when it has none
  std::map<std::string, std::vector<SimTime>> ranges;
};

struct WorkloadResult {
  int nranks = 0;
  int dp_from = 0, dp_to = 0;  ///< data-parallel degree recorded and replayed (equal without --dp)
  std::string topology_name;
  std::string engine;
  uint64_t nodes = 0, collectives = 0, messages = 0;
  SimTime total;  ///< the last rank's end
  double wall_s = 0;
  std::vector<WorkloadRank> ranks;
  std::vector<std::string> notes;  ///< what the replay assumed (printed under the table)
};

/// Loads, checks and replays the traces. Errors: InvalidArgument naming the file, node id and field for bad traces;
/// for traces that cannot run together (a collective some member never reaches, mismatched calls, an unknown process
/// group) the error names the group, call and ranks; kSystem when a file cannot be read.
Result<WorkloadResult> replay_workload(const WorkloadOptions& opts);

/// The table `genie sim --workload` prints: per rank its total and, per range name, the occurrences and mean
/// duration (all and from the second on, the steady state).
std::string format_workload(const WorkloadResult& r);
/// The same as JSON (for scripts and tests).
std::string workload_json(const WorkloadResult& r);

}  // namespace genie::netsim
