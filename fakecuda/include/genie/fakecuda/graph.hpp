// SPDX-License-Identifier: Apache-2.0
// Graphs captured from streams or built node by node: nodes are stored ops with dependencies; an executable is a
// snapshot. Also the objects graphs hold: user objects (cudaUserObject_t) and code libraries (cudaLibrary_t).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "genie/fakecuda/code_image.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::fakecuda {

class Graph;
class UserObject;
struct Kernel;

/// What a node does when its graph runs.
enum class GraphNodeKind {
  kOp,           ///< `spec`: a kernel, copy, memset, host function... as it would have been submitted to a stream
  kEmpty,        ///< nothing (a join point)
  kChild,        ///< runs `bodies[0]` (a child graph node: a snapshot of the graph it was given)
  kConditional,  ///< runs the body `cond_type` and `cond_value` select (cudaGraphNodeTypeConditional)
};

/// Conditional node types (cudaGraphConditionalNodeType in driver_types.h).
inline constexpr int kCondTypeIf = 0;
inline constexpr int kCondTypeWhile = 1;
inline constexpr int kCondTypeSwitch = 2;

/// One node: the op, and the indices of the nodes it depends on (always smaller than its own index, so node order
/// is a topological order). Its address is its handle (cudaGraphNode_t): Graph::nodes is a deque, so handles stay
/// valid while nodes are added.
struct GraphNode {
  GraphNodeKind kind = GraphNodeKind::kOp;
  sched::OpSpec spec;
  std::vector<int> deps;
  class Graph* owner = nullptr;  ///< the graph holding this node
  int index = 0;                 ///< position in owner->nodes
  /// kChild: the child graph; kConditional: the body graphs (cudaConditionalNodeParams::phGraph_out). In an
  /// editable graph the bodies are graphs the runtime resolves (nodes can be added to them); in an executable they
  /// are snapshots taken at instantiation.
  std::vector<std::shared_ptr<Graph>> bodies;
  int cond_type = kCondTypeIf;
  /// The condition's value when the graph runs: the handle's default launch value. The device-side
  /// cudaGraphSetConditional that would change it runs inside a kernel, and kernels do not run here.
  uint64_t cond_value = 0;
};

class Graph {
 public:
  Graph() = default;
  /// Copies the nodes (fixing their owner), not the user-object references (instantiate retains those itself).
  Graph(const Graph& other);
  Graph& operator=(const Graph&) = delete;

  std::deque<GraphNode> nodes;
  bool executable = false;
  /// References this graph holds on user objects (cudaGraphRetainUserObject), released when it is destroyed.
  std::map<UserObject*, unsigned> user_refs;
  /// Appends `node` (its owner and index are set) and returns its index.
  int append(GraphNode node);
  /// Index of the node whose handle is `handle`, -1 when it is not a node of this graph.
  int index_of(const void* handle) const;
  /// A deep copy: nodes, and the bodies of child and conditional nodes, recursively (not registered anywhere).
  std::shared_ptr<Graph> snapshot() const;
};

/// A reference-counted host object (cudaUserObjectCreate): `destroy(ptr)` runs when the last reference goes, from
/// the program, a graph or an executable graph. Thread-safe.
class UserObject {
 public:
  static constexpr uint32_t kMagic = 0x7573726fu;  // "usro"
  UserObject(void* ptr, void (*destroy)(void*), unsigned refs) : ptr_(ptr), destroy_(destroy), refs_(refs) {}
  void retain(unsigned n) { refs_.fetch_add(n, std::memory_order_relaxed); }
  /// Drops `n` references; true when that was the last (the caller runs the destructor and frees the object).
  bool release(unsigned n) { return refs_.fetch_sub(n, std::memory_order_acq_rel) == n; }
  unsigned refs() const { return refs_.load(std::memory_order_relaxed); }
  void run_destructor() const {
    if (destroy_ != nullptr) destroy_(ptr_);
  }

 private:
  void* ptr_;
  void (*destroy_)(void*);
  std::atomic<unsigned> refs_;
};

/// A code library (cudaLibraryLoadData / cudaLibraryLoadFromFile): the image's kernels as Kernels with handles
/// (cudaKernel_t) that launch like registered kernels, and its variables as device memory on first request.
struct CodeLibrary {
  CodeImage image;
  /// Kernels handed out, by name: every entry from the load when the image names its kernels, else the names
  /// asked for so far.
  std::map<std::string, const Kernel*> kernels;
  /// Variables handed out (cudaLibraryGetGlobal): device memory of the variable's size, freed at unload.
  std::map<std::string, std::pair<void*, size_t>> globals;
};

/// An active stream capture (cudaStreamBeginCapture .. EndCapture).
struct CaptureSession {
  uint64_t id = 0;
  int mode = 0;
  void* origin = nullptr;  ///< Stream* that began the capture
  /// The graph the capture appends to: a new graph (registered with the runtime at the start), or the program's
  /// own with cudaStreamBeginCaptureToGraph.
  Graph* graph = nullptr;
  bool into_existing = false;  ///< cudaStreamBeginCaptureToGraph: the graph outlives a failed capture
  bool invalidated = false;
};

}  // namespace genie::fakecuda
