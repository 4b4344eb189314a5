// SPDX-License-Identifier: Apache-2.0
// job_topology(): one rule for which cluster a job is timed on.
#include "genie/sched/job_topology.hpp"

#include <algorithm>

#include "genie/netsim/placement.hpp"

namespace genie::sched {

std::string server_preset_for_device(const std::string& device) {
  if (device == "h100-sxm") return "hgx-h100";
  if (device == "a100-sxm4-80gb") return "dgx-a100";
  if (device == "b200") return "hgx-b200";
  return "hgx-h200";
}

Result<JobTopology> job_topology(const std::string& topology, const std::string& device, int nodes,
                                 const std::string& fabric) {
  const std::string name = topology.empty() ? server_preset_for_device(device) : topology;
  netsim::TopologyOptions o;
  o.nodes = std::max(1, nodes);
  o.fabric = fabric.empty() ? "rail" : fabric;
  auto t = netsim::load_topology(name, o);
  if (!t.is_ok() && o.nodes > 1) {
    // Explicit graphs and ASTRA-sim networks are whole clusters: they take no --nodes.
    o.nodes = 1;
    auto whole = netsim::load_topology(name, o);
    if (whole.is_ok()) t = std::move(whole);
  }
  if (!t.is_ok()) return t.status();
  JobTopology j;
  j.topology = t.value();
  j.name = name + (o.nodes > 1 ? " x" + std::to_string(o.nodes) + " nodes" : "");
  j.gpus_per_node = netsim::gpus_per_node(*j.topology);
  return j;
}

}  // namespace genie::sched
