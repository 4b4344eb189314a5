// SPDX-License-Identifier: Apache-2.0
// Graphs captured from streams: nodes are stored ops with dependencies; an executable is a copy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "genie/sched/timeline.hpp"

namespace genie::fakecuda {

/// One node: the op as it would have been submitted, and the indices of the nodes it depends on
/// (always smaller than its own index, so node order is a topological order).
struct GraphNode {
  sched::OpSpec spec;
  std::vector<int> deps;
  class Graph* owner = nullptr;  ///< set when handles are handed out (cudaGraphGetNodes)
  int index = 0;
};

class Graph {
 public:
  std::vector<GraphNode> nodes;
  bool executable = false;
};

/// An active stream capture (cudaStreamBeginCapture .. EndCapture).
struct CaptureSession {
  uint64_t id = 0;
  int mode = 0;
  void* origin = nullptr;  ///< Stream* that began the capture
  std::unique_ptr<Graph> graph = std::make_unique<Graph>();
  bool invalidated = false;
};

}  // namespace genie::fakecuda
