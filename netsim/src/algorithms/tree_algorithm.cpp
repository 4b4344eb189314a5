// SPDX-License-Identifier: Apache-2.0
// Double binary tree all-reduce (NCCL tree): two complementary trees each reduce and broadcast half the data.
#include <algorithm>
#include <map>

#include "algorithms/dag_builder.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

namespace {

/// Parent rank of every rank (-1 for the root) in tree `tree` (0 or 1).
/// One server: binary tree in heap order over rank positions; tree 1 maps position p to rank n-1-p, so a
/// leaf of one tree is an inner node of the other. Several servers (NCCL's layout): the ranks of a server
/// form a chain below their head; heads form a binary tree over servers, mirrored in tree 1. The head
/// (and chain start) rotates with the channel, so channels use different GPUs' NICs, as NCCL's do.
std::vector<int> tree_parents(const CollectiveSpec& spec, const Topology& topo, int tree, int channel) {
  const int n = spec.nranks;
  std::vector<int> parent(static_cast<size_t>(n), -1);
  std::map<int, std::vector<std::pair<int, int>>> by_server;
  std::vector<int> servers;
  for (int r = 0; r < n; ++r) {
    const int g = spec.rank_to_gpu[static_cast<size_t>(r)];
    const int srv = topo.num_servers > 1 ? topo.nodes()[static_cast<size_t>(topo.gpu_node(g))].server : 0;
    if (!by_server.count(srv)) servers.push_back(srv);
    by_server[srv].emplace_back(g, r);
  }
  if (servers.size() <= 1) {
    auto rank_at = [&](int pos) { return tree == 0 ? pos : n - 1 - pos; };
    for (int p = 1; p < n; ++p) parent[static_cast<size_t>(rank_at(p))] = rank_at((p - 1) / 2);
    return parent;
  }
  const int ns = static_cast<int>(servers.size());
  std::vector<int> head(static_cast<size_t>(ns));
  for (int i = 0; i < ns; ++i) {
    auto& grp = by_server[servers[static_cast<size_t>(i)]];
    std::sort(grp.begin(), grp.end());
    const size_t m = grp.size();
    const size_t first = static_cast<size_t>(channel) % m;
    head[static_cast<size_t>(i)] = grp[first].second;
    for (size_t k = 1; k < m; ++k)
      parent[static_cast<size_t>(grp[(first + k) % m].second)] = grp[(first + k - 1) % m].second;
  }
  auto server_at = [&](int pos) { return tree == 0 ? pos : ns - 1 - pos; };
  for (int p = 1; p < ns; ++p) {
    parent[static_cast<size_t>(head[static_cast<size_t>(server_at(p))])] =
        head[static_cast<size_t>(server_at((p - 1) / 2))];
  }
  return parent;
}

}  // namespace

Status build_tree(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s) {
  if (spec.collective != Collective::kAllReduce) {
    return unsupported(std::string("Tree implements all_reduce only, not ") + collective_name(spec.collective));
  }
  const int n = spec.nranks;
  if (n == 1) return Status::ok();
  const uint64_t total = spec.count * datatype_size(spec.datatype);
  DagBuilder b(s);
  const int nch = std::max(1, t.nchannels);
  for (int c = 0; c < nch; ++c) {
    const int tree = c % 2;  // channels alternate between the two trees
    const std::vector<int> parent = tree_parents(spec, topo, tree, c / 2);
    // Depth of every rank and an order by depth (parents before children).
    std::vector<int> depth(static_cast<size_t>(n), -1);
    std::vector<std::vector<int>> children(static_cast<size_t>(n));
    int root = -1;
    for (int r = 0; r < n; ++r) {
      if (parent[static_cast<size_t>(r)] < 0)
        root = r;
      else
        children[static_cast<size_t>(parent[static_cast<size_t>(r)])].push_back(r);
    }
    std::vector<int> by_depth = {root};
    depth[static_cast<size_t>(root)] = 0;
    for (size_t i = 0; i < by_depth.size(); ++i) {
      for (int ch : children[static_cast<size_t>(by_depth[i])]) {
        depth[static_cast<size_t>(ch)] = depth[static_cast<size_t>(by_depth[i])] + 1;
        by_depth.push_back(ch);
      }
    }
    const auto max_depth = static_cast<uint32_t>(depth[static_cast<size_t>(by_depth.back())]);
    const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    // Trees only perform when pipelined in chunks much smaller than a channel's share: as NCCL's
    // calcCollChunking does, halve the chunk while a channel would get fewer than depth x 8 chunks (floor
    // kMinTreeChunkBytes). Each chunk is stored and forwarded at every hop; LL and LL128 really forward each
    // line as it arrives (not modelled: small LL trees come out slower than NCCL's model, docs/netsim.md).
    constexpr uint64_t kMinTreeChunkBytes = 32 * 1024;
    uint64_t chunk = t.chunk_bytes ? t.chunk_bytes : ch_bytes;
    while (chunk > kMinTreeChunkBytes && ch_bytes / chunk < 8 * static_cast<uint64_t>(max_depth)) chunk /= 2;
    uint64_t nslices = chunk ? (ch_bytes + chunk - 1) / chunk : 1;
    nslices = std::clamp<uint64_t>(nslices, 1, kMaxTreeSlicesPerChannel);
    std::vector<uint32_t> up_prev(static_cast<size_t>(n), DagBuilder::kNone);
    std::vector<uint32_t> down_prev(static_cast<size_t>(n), DagBuilder::kNone);
    std::vector<uint32_t> up(static_cast<size_t>(n)), down(static_cast<size_t>(n));
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t bytes = split_part(ch_bytes, nslices, l);
      const auto sl = static_cast<uint32_t>(l);
      // Reduce up, deepest first: a rank sends its partial sum once all its children's have arrived.
      std::fill(up.begin(), up.end(), DagBuilder::kNone);
      for (auto it = by_depth.rbegin(); it != by_depth.rend(); ++it) {
        const int v = *it;
        if (v == root) continue;
        std::vector<uint32_t> deps;
        for (int ch : children[static_cast<size_t>(v)]) deps.push_back(up[static_cast<size_t>(ch)]);
        up[static_cast<size_t>(v)] = b.transfer_v(v, parent[static_cast<size_t>(v)], bytes, c,
                                                  max_depth - static_cast<uint32_t>(depth[static_cast<size_t>(v)]), sl,
                                                  true, deps, up_prev[static_cast<size_t>(v)]);
      }
      // Broadcast down from the root once it holds the full sum.
      std::fill(down.begin(), down.end(), DagBuilder::kNone);
      for (int v : by_depth) {
        if (v == root) continue;
        const int p = parent[static_cast<size_t>(v)];
        std::vector<uint32_t> deps;
        if (p == root) {
          for (int ch : children[static_cast<size_t>(root)]) deps.push_back(up[static_cast<size_t>(ch)]);
        } else {
          deps.push_back(down[static_cast<size_t>(p)]);
        }
        down[static_cast<size_t>(v)] =
            b.transfer_v(p, v, bytes, c, max_depth + static_cast<uint32_t>(depth[static_cast<size_t>(v)]) - 1, sl,
                         false, deps, down_prev[static_cast<size_t>(v)]);
      }
      up_prev = up;
      down_prev = down;
    }
  }
  return Status::ok();
}

}  // namespace genie::netsim
