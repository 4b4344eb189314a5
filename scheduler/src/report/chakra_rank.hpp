// SPDX-License-Identifier: Apache-2.0
// One rank's Chakra nodes from its op records: stream order, cross-stream waits, per-thread host time, ranges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/netsim/chakra_et.hpp"
#include "genie/sched/coordinator.hpp"

namespace genie::sched::chakra_detail {

/// A communicator as the traces name it: a process group with ET ranks in communicator-rank order.
struct Pg {
  uint64_t key = 0;
  int id = 0;              ///< pg_name is its decimal form ("0": the world)
  std::vector<int> ranks;  ///< ET rank of each communicator rank
};

/// What a communication op of the rank was, once matched with the coordinator's resolved calls.
struct OpComm {
  const CollectiveRecord* coll = nullptr;  ///< a collective
  struct Message {
    const CollectiveRecord* rec = nullptr;
    bool send = false;  ///< this rank's side
  };
  std::vector<Message> messages;  ///< the messages of a point-to-point op
  const Pg* pg = nullptr;
  bool unmatched = false;  ///< a communication op whose call was not found
};

/// Everything one rank's nodes are made from.
struct RankInput {
  int rank = 0;
  std::vector<const coord::OpRecord*> ops;   ///< device ops, in record order (stream order per stream)
  std::vector<OpComm> comm;                  ///< parallel to `ops`
  std::vector<const coord::OpRecord*> host;  ///< host waits and ranges of the threads of the rank's process
  const std::vector<std::string>* labels = nullptr;
};

struct RankStats {
  uint64_t unmatched_waits = 0;
  uint64_t dropped_deps = 0;  ///< dependencies left out to break a cycle (ops of equal times)
};

/// The rank's nodes, ids from 1 in a topological order that follows time (node 0 is the caller's metadata node).
/// Every dependency is a data dependency (the one kind Chakra's own feeder resolves; docs/chakra.md).
std::vector<netsim::chakra::Node> build_rank_nodes(const RankInput& in, RankStats* stats);

/// Chakra's CollectiveCommType of a netsim collective, and comm_size as Chakra's PyTorch converter computes it (the
/// bytes of the call's input tensors).
netsim::chakra::CommType chakra_comm_type(netsim::Collective c);
uint64_t chakra_comm_size(const CollectiveRecord& r);

}  // namespace genie::sched::chakra_detail
