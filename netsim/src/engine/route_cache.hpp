// SPDX-License-Identifier: Apache-2.0
// RouteCache: memoised Topology routes keyed by (source node, destination node, ECMP flow key).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// Routes a simulator asks for, computed once each. Returned pointers stay valid for the cache's life.
/// ECMP keys are folded modulo kEcmpKeys (routes differ only by the key's hash). Not thread-safe.
class RouteCache {
 public:
  /// Distinct ECMP flow keys kept apart; channel ids beyond it share routes (NCCL has at most 64 channels).
  static constexpr uint64_t kEcmpKeys = 64;
  explicit RouteCache(const Topology& topo) : topo_(topo) {}
  Result<const Route*> get(int src_node, int dst_node, uint64_t flow_key) {
    const uint64_t n = topo_.nodes().size();
    const uint64_t key =
        (static_cast<uint64_t>(src_node) * n + static_cast<uint64_t>(dst_node)) * kEcmpKeys + (flow_key % kEcmpKeys);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    GENIE_ASSIGN_OR_RETURN(Route r, topo_.route(src_node, dst_node, flow_key));
    routes_.push_back(std::move(r));
    index_.emplace(key, &routes_.back());
    return &routes_.back();
  }

 private:
  const Topology& topo_;
  std::unordered_map<uint64_t, const Route*> index_;
  std::deque<Route> routes_;
};

}  // namespace genie::netsim
