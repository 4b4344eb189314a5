// SPDX-License-Identifier: Apache-2.0
// Topology: the cluster graph (GPUs, switches, NICs, full-duplex links) with deterministic ECMP routing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::netsim {

/// What a topology vertex is. Only GPUs are endpoints of transfers; the rest forward.
enum class NodeKind { kGpu, kNvSwitch, kPcieSwitch, kNic, kLeafSwitch, kSpineSwitch, kSwitch };
const char* node_kind_name(NodeKind k) noexcept;

/// Physical class of a link, used by the tuning model (NCCL's NVLINK / PCI / NET latency classes).
enum class LinkClass { kNvLink, kPcie, kNet };

/// A vertex of the topology graph.
struct Node {
  NodeKind kind = NodeKind::kGpu;
  std::string name;
  int server = -1;  ///< server (host) index for GPUs, NICs, NVSwitches and PCIe switches; -1 for fabric switches
  int gpu = -1;     ///< global GPU index (rank placement target) for GPUs; -1 otherwise
};

/// A full-duplex link: two independent directions, each with the full bandwidth.
/// Directed channel ids are 2*link (a -> b) and 2*link+1 (b -> a).
struct Link {
  int a = -1;
  int b = -1;
  double bw_bytes_per_s = 0;  ///< per direction
  int64_t latency_ns = 0;     ///< one-way propagation + switching
  LinkClass link_class = LinkClass::kNet;
};

/// GPU-generation facts the tuning model needs (NCCL's compCap index and NVLS support).
struct GpuArch {
  std::string name = "hopper";  ///< volta | ampere | hopper | blackwell
  int compute_capability = 90;
};

/// A route between two nodes: directed channel ids in order, with its summed latency and bottleneck.
struct Route {
  std::vector<uint32_t> channels;
  int64_t latency_ns = 0;
  double bottleneck_bytes_per_s = 0;
  bool crosses_net = false;   ///< uses at least one kNet link (inter-server)
  bool via_nvswitch = false;  ///< passes through an NVSwitch
};

/// The cluster graph. Built by the loaders below (presets, ASTRA-sim YAML, explicit JSON) or by hand in
/// tests. Routing is shortest path by an inverse-bandwidth metric (hop count on uniform fabrics); among equal-cost next
/// hops the choice is a deterministic hash of (source, destination, flow key), i.e. ECMP. Routing caches distance
/// vectors per destination up to a memory budget, beyond which each route runs a Dijkstra search from the
/// destination that stops at the source (same routes, bounded memory on large fabrics); guarded by a mutex, so
/// const routing is thread-safe; building is not thread-safe.
class Topology {
 public:
  int add_node(NodeKind kind, std::string name, int server = -1);
  /// Adds a full-duplex link; returns its index. Both ends must exist and differ.
  int add_link(int a, int b, double bw_bytes_per_s, int64_t latency_ns, LinkClass cls);

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  int num_gpus() const { return static_cast<int>(gpu_nodes_.size()); }
  int gpu_node(int gpu) const { return gpu_nodes_.at(static_cast<size_t>(gpu)); }
  /// Number of directed channels (2 per link).
  size_t num_channels() const { return links_.size() * 2; }
  const Link& channel_link(uint32_t ch) const { return links_[ch / 2]; }
  /// Node index a directed channel leaves from / arrives at.
  int channel_src(uint32_t ch) const { return ch % 2 == 0 ? links_[ch / 2].a : links_[ch / 2].b; }
  int channel_dst(uint32_t ch) const { return ch % 2 == 0 ? links_[ch / 2].b : links_[ch / 2].a; }

  /// Shortest route from node `src` to node `dst`; `flow_key` picks among equal-cost paths (ECMP).
  /// Errors: InvalidArgument for bad indices, NotFound when dst is unreachable.
  Result<Route> route(int src, int dst, uint64_t flow_key = 0) const;
  /// NVSwitch node serving GPU `gpu` for NVLS multicast, or -1 when its server has none.
  int nvswitch_of_gpu(int gpu) const;
  /// Binds GPU `gpu` to its NIC node (NCCL uses the GPU's nearest NIC, not an ECMP choice among the NICs
  /// of its PCIe switch). Routes between GPUs of different servers then go GPU -> its NIC -> fabric ->
  /// peer's NIC -> peer GPU.
  void set_gpu_nic(int gpu, int nic_node);
  int nic_of_gpu(int gpu) const;
  /// Fabric switch (leaf or generic switch) directly behind GPU `gpu`'s NIC, where CollNet's in-network
  /// reduction starts; -1 when the GPU has no NIC or the NIC no switch.
  int collnet_switch_of_gpu(int gpu) const;

  // Facts used by the algorithm library and tuning model.
  std::string name;
  GpuArch arch;
  int num_servers = 1;
  int gpus_per_server = 1;
  bool nvls = false;           ///< NVSwitch multicast/reduction (NVLS) available
  double nvls_efficiency = 0;  ///< NVLS data efficiency relative to NVLink bandwidth
  /// In-network reduction (NVIDIA SHARP on the fabric switches): NCCL's CollNet algorithms can offload the
  /// inter-server reduction to the first fabric switch of each GPU's NIC (collnet_switch_of_gpu).
  bool collnet = false;
  /// Host CPU vendor ("intel", "amd", or empty: unknown), which NCCL's model uses for network overheads and
  /// multi-node LL bandwidth.
  std::string cpu_vendor;
  /// GPUs relay traffic for others (direct networks: ring, torus, ASTRA-sim Ring/FullyConnected
  /// dimensions). Off for switched servers, where routes never transit a GPU.
  bool gpus_forward = false;
  int nic_per_server = 0;
  /// Host-side cost for one thread to launch a collective on one GPU (nccl-tests -g N pays it N times per
  /// iteration), plus a part per channel (NCCL prepares per-channel work on the host). Together they floor
  /// the measured per-iteration time of small collectives. 0 when unknown.
  int64_t host_launch_per_gpu_ns = 0;
  int64_t host_launch_per_gpu_channel_ns = 0;
  /// Delay between the host launching a collective and its kernel running on the GPU.
  int64_t kernel_launch_ns = 0;
  /// Per-GPU NVLink data bandwidth (sum of its links, one direction), or 0 without NVLink.
  double nvlink_bw_bytes_per_s = 0;
  /// Per-GPU network bandwidth (one direction), or 0 for a single server.
  double net_bw_bytes_per_s = 0;
  /// Per-GPU HBM bandwidth (datasheet peak, read + write), or 0 when unknown: local reductions and copies
  /// of a schedule then cost nothing.
  double hbm_bw_bytes_per_s = 0;

 private:
  /// Cached distance vector to `dst` (every node), or null when the cache budget is spent.
  const std::vector<int64_t>* distances_to(int dst) const;
  /// Dijkstra from `dst` stopped once `src` is settled, into scratch_dist_ (entries stamped scratch_gen_).
  void partial_distances(int dst, int src) const;
  Result<Route> shortest_route(int src, int dst, uint64_t flow_key) const;
  std::vector<int> gpu_nic_;  // gpu -> NIC node, -1 if unbound
  int64_t link_cost(uint32_t ch) const;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<int> gpu_nodes_;
  std::vector<std::vector<uint32_t>> adj_;                                         // node -> outgoing directed channels
  mutable std::unique_ptr<std::mutex> cache_mu_ = std::make_unique<std::mutex>();  // pointer: Topology stays movable
  // Distances are int64: a link's cost reaches 1e10 at the loaders' slowest 1 kB/s, and paths add up thousands.
  mutable std::map<int, std::unique_ptr<std::vector<int64_t>>> dist_cache_;
  mutable size_t dist_cache_entries_ = 0;
  mutable std::vector<int64_t> scratch_dist_;
  mutable std::vector<uint32_t> scratch_stamp_;
  mutable uint32_t scratch_gen_ = 0;
};

/// The most NPUs a generic shape or ASTRA-sim file may have (about 4 million).
inline constexpr int64_t kMaxTopologyNpus = int64_t{1} << 22;

/// Options for building a topology by name.
struct TopologyOptions {
  int nodes = 1;                  ///< servers (--nodes K)
  int gpus_per_node = 0;          ///< 0: the preset's count; otherwise a subset (--gpus-per-node G)
  std::string fabric = "rail";    ///< inter-server fabric: rail (rail-optimized fat-tree) | fat-tree
  double oversubscription = 1.0;  ///< classic fat-tree: leaf down/up bandwidth ratio
  int64_t max_npus = kMaxTopologyNpus;  ///< generic shapes and ASTRA-sim files: more NPUs is an error
};

/// Names of the embedded server presets (hgx-h100, hgx-h200, dgx-a100, hgx-b200) and generic shapes
/// (ring:N, torus2d:XxY, torus3d:XxYxZ).
std::vector<std::string> preset_names();

/// Builds a topology from a preset name, a generic shape, or a file path (.json: preset-format or explicit
/// graph; .yaml/.yml: ASTRA-sim analytical network). Errors name the file, the JSON path and the problem.
Result<std::shared_ptr<const Topology>> load_topology(const std::string& name_or_path, const TopologyOptions& opts);

/// Parses a JSON document: either a server preset (has "gpus_per_node") or an explicit graph (has "nodes"
/// and "links"). `origin` names the file in errors.
Result<std::shared_ptr<const Topology>> parse_topology_json(const std::string& text, const std::string& origin,
                                                            const TopologyOptions& opts);
/// Parses an ASTRA-sim analytical network YAML (topology / npus_count / bandwidth GB/s / latency ns).
Result<std::shared_ptr<const Topology>> parse_astra_yaml(const std::string& text, const std::string& origin,
                                                         int64_t max_npus = kMaxTopologyNpus);

}  // namespace genie::netsim
