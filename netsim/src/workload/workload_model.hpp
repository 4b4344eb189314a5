// SPDX-License-Identifier: Apache-2.0
// A workload as the replay runs it: per recorded rank an immutable dependency graph (shared by the replicas of a
// data-parallel rescale), the job's ranks with their graphs and process groups, and the calls matched across ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/workload.hpp"

namespace genie::netsim::workload {

enum class Kind : uint8_t { kDelay, kColl, kSend, kRecv };

/// What one communication node of a recorded rank asks for.
struct CommSlot {
  Kind kind = Kind::kColl;
  int pg = -1;          ///< recorded process group (index into Model::recorded_pgs); -1: the world
  CollectiveSpec spec;  ///< collective, count, datatype, redop, root (nranks and placement set per call)
  int min_ctas = 0, max_ctas = 0;
  std::string algo;
  int peer = -1;  ///< send: destination, recv: source (recorded ET rank)
  uint64_t bytes = 0;
};

/// One node of a recorded rank's graph.
struct GNode {
  Kind kind = Kind::kDelay;
  bool range_begin = false;
  bool cpu = false;  ///< is_cpu_op: host work, not counted in the rank's end
  uint32_t indegree = 0;
  uint32_t child_begin = 0, child_end = 0;  ///< into Graph::children
  int32_t slot = -1;                        ///< index into Graph::slots (communication nodes)
  int32_t range = -1;                       ///< index into Graph::range_names (range markers)
  int32_t range_index = 0;
  int64_t dur_ns = 0;
  uint64_t id = 0;  ///< the trace's node id (for messages)
};

/// A recorded rank's trace as a graph. Immutable once built.
struct Graph {
  std::string file;
  std::vector<GNode> nodes;
  std::vector<uint32_t> children;
  std::vector<CommSlot> slots;      ///< communication nodes in node-id order
  std::vector<uint32_t> slot_node;  ///< node of each slot
  std::vector<std::string> range_names;
  int gpu = -1;  ///< recorded GPU on the job's topology (-1: unknown)
};

/// A rank of the replayed job.
struct Rank {
  std::shared_ptr<const Graph> graph;
  int recorded = 0;                   ///< the recorded rank it replays
  int gpu = 0;                        ///< GPU on the replay's topology
  std::vector<int32_t> call_of_slot;  ///< per slot: index into Model::calls
};

/// A collective instance or a message, matched across ranks.
struct Call {
  bool p2p = false;
  int pg = -1;          ///< replayed group (index into Model::pgs); messages: -1
  CollectiveSpec spec;  ///< complete: nranks and rank_to_gpu set
  int min_ctas = 0, max_ctas = 0;
  std::string algo;
  std::vector<std::pair<int, uint32_t>> members;  ///< (rank, node) that take part, filled as matched
  int expected = 0;
};

/// Recorded or replayed process group: ET ranks in communicator-rank order.
struct Group {
  std::string name;
  std::vector<int> ranks;
};

/// What the traces say about the job (GlobalMetadata of rank 0).
struct JobInfo {
  std::string topology, fabric, engine;
  int nodes = 0;
  NcclEnv env;
};

struct Model {
  JobInfo info;
  std::vector<std::shared_ptr<const Graph>> recorded;  ///< per recorded rank
  std::vector<Group> recorded_pgs;
  std::vector<Rank> ranks;
  std::vector<Group> pgs;
  std::vector<Call> calls;
  int dp_from = 0, dp_to = 0;
  std::vector<std::string> notes;
  /// A data-parallel rescale (lay_out_ranks; empty dp_new_pg: none): per recorded group its role (0 data-parallel,
  /// 1 the world, 2 within one replica) and its replayed group (one, or one per replica); per recorded rank its
  /// replica and model-parallel index; ranks per replica.
  std::vector<int> dp_role;
  std::vector<std::vector<int>> dp_new_pg;
  std::vector<int> dp_rep, dp_mp;
  int dp_m = 1;
};

/// Reads the traces of `opts.workload` into recorded graphs and groups (Model::info, recorded, recorded_pgs).
Status load_traces(const WorkloadOptions& opts, Model* m);
/// Lays out the replayed ranks: as recorded, or rescaled to opts.dp data-parallel replicas (Model::ranks, pgs).
Status lay_out_ranks(const WorkloadOptions& opts, Model* m);
/// Matches the ranks' communication nodes into calls (Model::calls, Rank::call_of_slot); placement of every call
/// from the ranks' GPUs. Errors name the group, the call and the ranks that disagree or never reach it.
Status match_calls(Model* m);

}  // namespace genie::netsim::workload
