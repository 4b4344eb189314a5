// SPDX-License-Identifier: Apache-2.0
// Rank placement: which GPU of a cluster topology each rank of a job or communicator is, from the emulated node its
// process runs on and the CUDA device it uses. One rule for the shim's own timing and for the job's coordinator.
#pragma once

#include <string>
#include <vector>

#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// The GPUs of one server of `t`: those of server 0, or all of them when the topology has no servers (a file or
/// generic shape describing one node).
int gpus_per_node(const Topology& t);

/// The topology GPU that CUDA device `dev` of a process is when the process's first emulated node is server
/// `node_base`: devices beyond one server's GPUs continue on the next servers (a process may see 16 devices of
/// two 8-GPU nodes).
inline int gpu_index(int node_base, int dev, int gpus_per_node) {
  return (node_base + dev / gpus_per_node) * gpus_per_node + dev % gpus_per_node;
}

/// Where one rank runs: its emulated node's name (GENIE_NODE or the hostname) and its CUDA device.
struct RankSite {
  std::string node;
  int cuda_dev = 0;
};

/// Ranks on topology GPUs, and how many servers they span.
struct Placement {
  std::vector<int> gpu;  ///< per rank
  int nodes = 0;
};

/// Places the ranks of one communicator that knows nothing of the rest of the job: node names take servers in order
/// of first appearance; the ranks of a name sit on its server by device (gpu_index) when their devices are distinct
/// and fit, else they fill as many servers as they need in rank order (several ranks on one device, or more ranks
/// than a server has GPUs). The job's coordinator, which knows every process, numbers the nodes itself and then
/// places each rank with gpu_index.
Placement place_by_node(const std::vector<RankSite>& ranks, int gpus_per_node);

}  // namespace genie::netsim
