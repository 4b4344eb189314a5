// SPDX-License-Identifier: Apache-2.0
// Rank placement on a cluster topology (placement.hpp).
#include "genie/netsim/placement.hpp"

#include <map>

namespace genie::netsim {

int gpus_per_node(const Topology& t) {
  int n = 0;
  for (const auto& node : t.nodes())
    if (node.kind == NodeKind::kGpu && node.server == 0) ++n;
  return n > 0 ? n : t.num_gpus();
}

Placement place_by_node(const std::vector<RankSite>& ranks, int gpus_per_node) {
  const int g = gpus_per_node > 0 ? gpus_per_node : 1;
  std::vector<std::string> names;
  std::map<std::string, std::vector<int>> members;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!members.count(ranks[r].node)) names.push_back(ranks[r].node);
    members[ranks[r].node].push_back(static_cast<int>(r));
  }
  Placement p;
  p.gpu.assign(ranks.size(), 0);
  for (const auto& name : names) {
    const auto& m = members[name];
    bool by_dev = static_cast<int>(m.size()) <= g;
    std::vector<bool> used(static_cast<size_t>(g), false);
    for (int r : m) {
      const int d = ranks[static_cast<size_t>(r)].cuda_dev;
      if (d < 0 || d >= g || used[static_cast<size_t>(d)])
        by_dev = false;
      else
        used[static_cast<size_t>(d)] = true;
    }
    for (size_t k = 0; k < m.size(); ++k)
      p.gpu[static_cast<size_t>(m[k])] =
          gpu_index(p.nodes, by_dev ? ranks[static_cast<size_t>(m[k])].cuda_dev : static_cast<int>(k), g);
    p.nodes += by_dev ? 1 : static_cast<int>((m.size() + static_cast<size_t>(g) - 1) / static_cast<size_t>(g));
  }
  return p;
}

}  // namespace genie::netsim
