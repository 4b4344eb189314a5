// SPDX-License-Identifier: Apache-2.0
// The cluster a job is timed on, as genie run, the coordinator and the NCCL shim all choose it.
#pragma once

#include <memory>
#include <string>

#include "genie/common/status.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::sched {

/// The HGX/DGX server preset that carries a device preset: h100-sxm -> hgx-h100, a100-sxm4-80gb -> dgx-a100,
/// b200 -> hgx-b200, anything else -> hgx-h200.
std::string server_preset_for_device(const std::string& device);

struct JobTopology {
  std::shared_ptr<const netsim::Topology> topology;
  std::string name;       ///< "hgx-h200 x2 nodes", the file name, ...
  int gpus_per_node = 8;  ///< GPUs of one server (the first one) of the topology
};

/// Loads `topology` (a preset, shape or file; empty: the server preset of `device`) with `nodes` servers on
/// the `fabric` ("rail" | "fat-tree"). Explicit graphs and ASTRA-sim files describe the whole cluster and
/// ignore `nodes`. Errors come from the loaders and name the file and JSON path.
Result<JobTopology> job_topology(const std::string& topology, const std::string& device, int nodes,
                                 const std::string& fabric);

}  // namespace genie::sched
