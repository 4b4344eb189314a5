// SPDX-License-Identifier: Apache-2.0
// Ring algorithms (NCCL ring): all-reduce, all-gather, reduce-scatter, broadcast and reduce chains.
#include <algorithm>
#include <map>

#include "genie/netsim/topology.hpp"

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

namespace {
/// Ring order of channel `c` (positions -> ranks). One server: rank order. Several servers: NCCL builds
/// rail-aligned rings, so each server is entered and left on the GPUs whose NICs share a rail with the
/// neighbouring server, and channels rotate over the rails (so all NICs carry traffic): server i enters
/// at local GPU a and leaves at b (odd servers swap a and b), a = c mod G, b = (c+1) mod G.
std::vector<int> ring_order(const CollectiveSpec& spec, const Topology& topo, int c) {
  const int n = spec.nranks;
  std::vector<int> order(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) order[static_cast<size_t>(r)] = r;
  if (topo.num_servers <= 1) return order;
  // Group ranks by server, in order of first appearance, each group in local GPU order.
  std::map<int, std::vector<std::pair<int, int>>> by_server;  // server -> (gpu, rank)
  std::vector<int> server_order;
  for (int r = 0; r < n; ++r) {
    const int g = spec.rank_to_gpu[static_cast<size_t>(r)];
    const int srv = topo.nodes()[static_cast<size_t>(topo.gpu_node(g))].server;
    if (!by_server.count(srv)) server_order.push_back(srv);
    by_server[srv].emplace_back(g, r);
  }
  if (server_order.size() <= 1) return order;
  order.clear();
  for (size_t i = 0; i < server_order.size(); ++i) {
    auto& grp = by_server[server_order[i]];
    std::sort(grp.begin(), grp.end());
    const int m = static_cast<int>(grp.size());
    int a = c % m, bb = (c + 1) % m;
    if (i % 2 == 1) std::swap(a, bb);
    order.push_back(grp[static_cast<size_t>(a)].second);
    for (int k = 1; k < m; ++k) {
      const int idx = (a + k) % m;
      if (idx != bb) order.push_back(grp[static_cast<size_t>(idx)].second);
    }
    if (bb != a) order.push_back(grp[static_cast<size_t>(bb)].second);
  }
  return order;
}

uint64_t slices_for(uint64_t bytes_per_channel, uint64_t loop_bytes) {
  if (loop_bytes == 0) return 1;
  const uint64_t loops = (bytes_per_channel + loop_bytes - 1) / loop_bytes;
  return std::clamp<uint64_t>(loops, 1, kMaxSlicesPerChannel);
}
}  // namespace

Result<bool> build_ring_compact(const CollectiveSpec& spec, const Topology& topo, const Tuning& t,
                                CompactSchedule* cs) {
  const int n = spec.nranks;
  if (n == 1) return false;
  const bool ar = spec.collective == Collective::kAllReduce;
  if (!ar && spec.collective != Collective::kAllGather && spec.collective != Collective::kReduceScatter) return false;
  const uint64_t ts = datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  // All-reduce: 2(n-1) steps (n-1 reduce-scatter steps with reduction, n-1 all-gather steps); each rank
  // sends one chunk of S/n per step, 2(n-1)/n x S in all. All-gather / reduce-scatter: n-1 steps of the
  // per-rank block.
  const uint64_t total = ar ? spec.count * ts : spec.count * ts * static_cast<uint64_t>(n);
  const uint32_t steps = ar ? 2 * static_cast<uint32_t>(n - 1) : static_cast<uint32_t>(n - 1);
  cs->nranks = n;
  for (int c = 0; c < nch; ++c) {
    const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    const uint64_t nslices = slices_for(ch_bytes, t.chunk_bytes * static_cast<uint64_t>(n));
    // Ring position p (rank order[p]) sends to p+1. Each position's sends on a channel form one FIFO
    // (NCCL's connection): an op waits for the position's previous op (issue order: slice by slice, step by
    // step) and for the data from its left neighbour (position p-1) at the previous step.
    std::vector<int> order = ring_order(spec, topo, c);
    cs->orders.emplace_back(order.begin(), order.end());
    bool first = true;
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t sl_bytes = split_part(ch_bytes, nslices, l);
      for (uint32_t st = 0; st < steps; ++st) {
        CompactStep op;
        op.channel = static_cast<uint16_t>(c);
        op.lane = static_cast<uint16_t>(c);
        op.dst_shift = 1;
        op.step = st;
        op.slice = static_cast<uint32_t>(l);
        op.reduce = (ar && st < static_cast<uint32_t>(n - 1)) || spec.collective == Collective::kReduceScatter;
        // Position p forwards block (p - st) mod n; blocks follow the nearly-equal split of the slice.
        op.bytes = sl_bytes / static_cast<uint64_t>(n);
        op.extra = static_cast<uint32_t>(sl_bytes % static_cast<uint64_t>(n));
        op.rotation = st % static_cast<uint32_t>(n);
        op.dep_begin = static_cast<uint32_t>(cs->deps.size());
        const auto prev = static_cast<uint32_t>(cs->ops.size() - (first ? 0 : 1));
        // At step 0 of a slice the left neighbour's data is the position's own input: no data dependency.
        if (st > 0) cs->deps.push_back(CompactDep{prev, -1});
        if (!first) cs->deps.push_back(CompactDep{prev, 0});
        op.dep_count = static_cast<uint32_t>(cs->deps.size()) - op.dep_begin;
        cs->ops.push_back(op);
        first = false;
      }
    }
  }
  return true;
}

Status build_ring(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s) {
  const int n = spec.nranks;
  const uint64_t ts = datatype_size(spec.datatype);
  DagBuilder b(s);
  const int nch = std::max(1, t.nchannels);
  if (n == 1) return Status::ok();
  switch (spec.collective) {
    case Collective::kAllReduce:
    case Collective::kAllGather:
    case Collective::kReduceScatter: {
      CompactSchedule cs;
      GENIE_ASSIGN_OR_RETURN(bool built, build_ring_compact(spec, topo, t, &cs));
      GENIE_ASSERT(built, "ring all-reduce family is circulant");
      append_expansion(cs, s);
      return Status::ok();
    }
    case Collective::kBroadcast:
    case Collective::kReduce: {
      // Chain through the ring: broadcast root -> root+1 -> ... -> root-1; reduce root+1 -> ... -> root.
      const bool bc = spec.collective == Collective::kBroadcast;
      const uint64_t total = spec.count * ts;
      for (int c = 0; c < nch; ++c) {
        const std::vector<int> order = ring_order(spec, topo, c);
        const int root_pos = static_cast<int>(std::find(order.begin(), order.end(), spec.root) - order.begin());
        const int first = bc ? root_pos : (root_pos + 1) % n;
        const uint64_t ch_bytes = split_part(total, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
        const uint64_t nslices = slices_for(ch_bytes, t.chunk_bytes);
        std::vector<uint32_t> prev_slice(static_cast<size_t>(n), DagBuilder::kNone);
        for (uint64_t l = 0; l < nslices; ++l) {
          const uint64_t bytes = split_part(ch_bytes, nslices, l);
          uint32_t prev = DagBuilder::kNone;
          for (int h = 0; h < n - 1; ++h) {
            const int pos = (first + h) % n;
            prev = b.transfer(order[static_cast<size_t>(pos)], order[static_cast<size_t>((pos + 1) % n)], bytes, c,
                              static_cast<uint32_t>(h), static_cast<uint32_t>(l), !bc, {prev},
                              prev_slice[static_cast<size_t>(h)]);
            prev_slice[static_cast<size_t>(h)] = prev;
          }
        }
      }
      return Status::ok();
    }
    default:
      return unsupported(std::string("Ring does not implement ") + collective_name(spec.collective));
  }
}

}  // namespace genie::netsim
