// SPDX-License-Identifier: Apache-2.0
// Topology graph and shortest-path routing with deterministic ECMP.
#include "genie/netsim/topology.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace genie::netsim {

const char* node_kind_name(NodeKind k) noexcept {
  switch (k) {
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kPcieSwitch:
      return "pcie_switch";
    case NodeKind::kNic:
      return "nic";
    case NodeKind::kLeafSwitch:
      return "leaf";
    case NodeKind::kSpineSwitch:
      return "spine";
    case NodeKind::kSwitch:
      return "switch";
  }
  return "?";
}

int Topology::add_node(NodeKind kind, std::string node_name, int server) {
  Node n;
  n.kind = kind;
  n.name = std::move(node_name);
  n.server = server;
  if (kind == NodeKind::kGpu) {
    n.gpu = static_cast<int>(gpu_nodes_.size());
    gpu_nodes_.push_back(static_cast<int>(nodes_.size()));
  }
  nodes_.push_back(std::move(n));
  adj_.emplace_back();
  return static_cast<int>(nodes_.size() - 1);
}

int Topology::add_link(int a, int b, double bw_bytes_per_s, int64_t latency_ns, LinkClass cls) {
  GENIE_ASSERT(a >= 0 && b >= 0 && a < static_cast<int>(nodes_.size()) && b < static_cast<int>(nodes_.size()) && a != b,
               "add_link: bad endpoints");
  links_.push_back(Link{a, b, bw_bytes_per_s, latency_ns, cls});
  const auto id = static_cast<uint32_t>(links_.size() - 1);
  adj_[static_cast<size_t>(a)].push_back(2 * id);
  adj_[static_cast<size_t>(b)].push_back(2 * id + 1);
  return static_cast<int>(id);
}

namespace {
/// Routing metric reference bandwidth (OSPF's reference-bandwidth idea): a link costs
/// max(1, round(kRouteRefBwBytesPerS / bw)), so a 370 GB/s NVLink bundle (27) beats a 64 GB/s PCIe hop
/// (156) and equal-bandwidth fabrics fall back to hop count.
constexpr double kRouteRefBwBytesPerS = 1e13;
}  // namespace

int64_t Topology::link_cost(uint32_t ch) const {
  const double bw = channel_link(ch).bw_bytes_per_s;
  return static_cast<int64_t>(std::max(1.0, std::round(kRouteRefBwBytesPerS / std::max(bw, 1.0))));
}

namespace {
/// Distance-vector cache budget in entries (int64 each: 64 MiB). One vector per destination costs one entry per
/// node and a full Dijkstra search, which pays off when many sources route to one destination on a small graph.
constexpr size_t kDistCacheBudgetEntries = size_t{8} << 20;
/// Above this many nodes routes always use searches that stop at the source: a full search per destination
/// visits the whole graph (a 4096-GPU rail fabric has ~11k nodes), while most routes of a collective stay
/// inside a server or a leaf and settle a few dozen nodes. hgx-h100 x 64 servers has ~1400 nodes.
constexpr size_t kDistCacheMaxNodes = 4096;

/// Dijkstra on reversed edges from `dst`: links are full duplex with equal cost both ways, so the reverse graph
/// equals the forward graph. `settle(u, d)` is called as each node is settled and returns false to stop.
/// Never routes *through* a GPU unless `gpus_forward` (NVLink forwarding through a GPU is PXN, which the
/// algorithm library models explicitly as separate transfers).
template <class Get, class Set, class Settle, class Adj, class Cost, class IsGpu>
void dijkstra_from(int dst, bool gpus_forward, Get get, Set set, Settle settle, Adj adj, Cost cost, IsGpu is_gpu) {
  using Item = std::pair<int64_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> q;
  set(dst, 0);
  q.emplace(0, dst);
  while (!q.empty()) {
    const auto [d, u] = q.top();
    q.pop();
    if (d != get(u)) continue;
    if (!settle(u, d)) return;
    if (!gpus_forward && u != dst && is_gpu(u)) continue;
    for (uint32_t ch : adj(u)) {
      const auto [v, c] = cost(ch);
      const int64_t nd = d + c;
      const int64_t dv = get(v);
      if (dv < 0 || nd < dv) {
        set(v, nd);
        q.emplace(nd, v);
      }
    }
  }
}
}  // namespace

const std::vector<int64_t>* Topology::distances_to(int dst) const {
  auto it = dist_cache_.find(dst);
  if (it != dist_cache_.end()) return it->second.get();
  if (nodes_.size() > kDistCacheMaxNodes || dist_cache_entries_ + nodes_.size() > kDistCacheBudgetEntries)
    return nullptr;
  auto dist = std::make_unique<std::vector<int64_t>>(nodes_.size(), -1);
  auto& dv = *dist;
  dijkstra_from(
      dst, gpus_forward, [&](int v) { return dv[static_cast<size_t>(v)]; },
      [&](int v, int64_t d) { dv[static_cast<size_t>(v)] = d; }, [](int, int64_t) { return true; },
      [&](int u) -> const std::vector<uint32_t>& { return adj_[static_cast<size_t>(u)]; },
      [&](uint32_t ch) { return std::make_pair(channel_dst(ch), link_cost(ch)); },
      [&](int u) { return nodes_[static_cast<size_t>(u)].kind == NodeKind::kGpu; });
  dist_cache_entries_ += nodes_.size();
  const std::vector<int64_t>* ref = dist.get();
  dist_cache_.emplace(dst, std::move(dist));
  return ref;
}

void Topology::partial_distances(int dst, int src) const {
  if (scratch_dist_.size() != nodes_.size()) {
    scratch_dist_.assign(nodes_.size(), -1);
    scratch_stamp_.assign(nodes_.size(), 0);
  }
  if (++scratch_gen_ == 0) {  // stamp wrap-around: clear
    std::fill(scratch_stamp_.begin(), scratch_stamp_.end(), 0);
    scratch_gen_ = 1;
  }
  const uint32_t gen = scratch_gen_;
  // Every node closer to dst than src is settled before src, so the next hops of the route (all closer)
  // have their final distances when the search stops.
  dijkstra_from(
      dst, gpus_forward,
      [&](int v) { return scratch_stamp_[static_cast<size_t>(v)] == gen ? scratch_dist_[static_cast<size_t>(v)] : -1; },
      [&](int v, int64_t d) {
        scratch_stamp_[static_cast<size_t>(v)] = gen;
        scratch_dist_[static_cast<size_t>(v)] = d;
      },
      [&](int u, int64_t) { return u != src; },
      [&](int u) -> const std::vector<uint32_t>& { return adj_[static_cast<size_t>(u)]; },
      [&](uint32_t ch) { return std::make_pair(channel_dst(ch), link_cost(ch)); },
      [&](int u) { return nodes_[static_cast<size_t>(u)].kind == NodeKind::kGpu; });
}

namespace {
uint64_t mix(uint64_t x) {
  // splitmix64 finaliser: a fixed, platform-independent hash so ECMP choices are reproducible.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

void Topology::set_gpu_nic(int gpu, int nic_node) {
  if (gpu_nic_.size() < gpu_nodes_.size()) gpu_nic_.resize(gpu_nodes_.size(), -1);
  gpu_nic_.at(static_cast<size_t>(gpu)) = nic_node;
}

int Topology::nic_of_gpu(int gpu) const {
  return static_cast<size_t>(gpu) < gpu_nic_.size() ? gpu_nic_[static_cast<size_t>(gpu)] : -1;
}

namespace {
Route concat(Route r, const Route& seg) {
  if (r.channels.empty()) r.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
  r.channels.insert(r.channels.end(), seg.channels.begin(), seg.channels.end());
  r.latency_ns += seg.latency_ns;
  if (!seg.channels.empty()) r.bottleneck_bytes_per_s = std::min(r.bottleneck_bytes_per_s, seg.bottleneck_bytes_per_s);
  r.crosses_net |= seg.crosses_net;
  r.via_nvswitch |= seg.via_nvswitch;
  return r;
}
}  // namespace

int Topology::collnet_switch_of_gpu(int gpu) const {
  const int nic = nic_of_gpu(gpu);
  if (nic < 0) return -1;
  for (uint32_t ch : adj_[static_cast<size_t>(nic)]) {
    const NodeKind k = nodes_[static_cast<size_t>(channel_dst(ch))].kind;
    if (k == NodeKind::kLeafSwitch || k == NodeKind::kSwitch || k == NodeKind::kSpineSwitch) return channel_dst(ch);
  }
  return -1;
}

Result<Route> Topology::route(int src, int dst, uint64_t flow_key) const {
  const int n = static_cast<int>(nodes_.size());
  if (src < 0 || src >= n || dst < 0 || dst >= n) return invalid_argument("route: node index out of range");
  const Node& a = nodes_[static_cast<size_t>(src)];
  const Node& b = nodes_[static_cast<size_t>(dst)];
  if (a.kind == NodeKind::kGpu && b.kind == NodeKind::kGpu && a.server != b.server && nic_of_gpu(a.gpu) >= 0 &&
      nic_of_gpu(b.gpu) >= 0) {
    // Inter-server: through each GPU's own NIC (three shortest segments).
    Route r;
    r.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
    const int hops[4] = {src, nic_of_gpu(a.gpu), nic_of_gpu(b.gpu), dst};
    for (int k = 0; k < 3; ++k) {
      GENIE_ASSIGN_OR_RETURN(Route seg, shortest_route(hops[k], hops[k + 1], flow_key));
      r.channels.insert(r.channels.end(), seg.channels.begin(), seg.channels.end());
      r.latency_ns += seg.latency_ns;
      r.bottleneck_bytes_per_s = std::min(r.bottleneck_bytes_per_s, seg.bottleneck_bytes_per_s);
      r.crosses_net |= seg.crosses_net;
      r.via_nvswitch |= seg.via_nvswitch;
    }
    return r;
  }
  // GPU <-> fabric switch (CollNet's in-network reduction): through the GPU's own NIC.
  auto fabric = [&](const Node& x) { return x.server < 0 && x.kind != NodeKind::kGpu; };
  if (a.kind == NodeKind::kGpu && fabric(b) && nic_of_gpu(a.gpu) >= 0) {
    GENIE_ASSIGN_OR_RETURN(Route r, shortest_route(src, nic_of_gpu(a.gpu), flow_key));
    GENIE_ASSIGN_OR_RETURN(Route seg, shortest_route(nic_of_gpu(a.gpu), dst, flow_key));
    return concat(std::move(r), seg);
  }
  if (fabric(a) && b.kind == NodeKind::kGpu && nic_of_gpu(b.gpu) >= 0) {
    GENIE_ASSIGN_OR_RETURN(Route r, shortest_route(src, nic_of_gpu(b.gpu), flow_key));
    GENIE_ASSIGN_OR_RETURN(Route seg, shortest_route(nic_of_gpu(b.gpu), dst, flow_key));
    return concat(std::move(r), seg);
  }
  return shortest_route(src, dst, flow_key);
}

Result<Route> Topology::shortest_route(int src, int dst, uint64_t flow_key) const {
  Route r;
  if (src == dst) return r;
  std::lock_guard<std::mutex> lock(*cache_mu_);
  const std::vector<int64_t>* full = distances_to(dst);
  if (full == nullptr) partial_distances(dst, src);
  const uint32_t gen = scratch_gen_;
  auto dist = [&](int v) -> int64_t {
    if (full != nullptr) return (*full)[static_cast<size_t>(v)];
    return scratch_stamp_[static_cast<size_t>(v)] == gen ? scratch_dist_[static_cast<size_t>(v)] : -1;
  };
  if (dist(src) < 0) {
    return not_found("no path from " + nodes_[static_cast<size_t>(src)].name + " to " +
                     nodes_[static_cast<size_t>(dst)].name);
  }
  r.bottleneck_bytes_per_s = std::numeric_limits<double>::infinity();
  int u = src;
  uint64_t h = mix(static_cast<uint64_t>(src) * 1000003ULL ^ static_cast<uint64_t>(dst) ^ mix(flow_key));
  std::vector<uint32_t> next;
  while (u != dst) {
    next.clear();
    const int64_t du = dist(u);
    for (uint32_t ch : adj_[static_cast<size_t>(u)]) {
      const int v = channel_dst(ch);
      const int64_t dv = dist(v);
      if (dv >= 0 && dv == du - link_cost(ch) &&
          (gpus_forward || v == dst || nodes_[static_cast<size_t>(v)].kind != NodeKind::kGpu)) {
        next.push_back(ch);
      }
    }
    GENIE_ASSERT(!next.empty(), "route: Dijkstra distances inconsistent");
    const uint32_t ch = next[h % next.size()];
    h = mix(h);
    const Link& l = channel_link(ch);
    r.channels.push_back(ch);
    r.latency_ns += l.latency_ns;
    r.bottleneck_bytes_per_s = std::min(r.bottleneck_bytes_per_s, l.bw_bytes_per_s);
    if (l.link_class == LinkClass::kNet) r.crosses_net = true;
    u = channel_dst(ch);
    if (nodes_[static_cast<size_t>(u)].kind == NodeKind::kNvSwitch) r.via_nvswitch = true;
  }
  return r;
}

int Topology::nvswitch_of_gpu(int gpu) const {
  const int node = gpu_node(gpu);
  for (uint32_t ch : adj_[static_cast<size_t>(node)]) {
    const int v = channel_dst(ch);
    if (nodes_[static_cast<size_t>(v)].kind == NodeKind::kNvSwitch) return v;
  }
  return -1;
}

}  // namespace genie::netsim
