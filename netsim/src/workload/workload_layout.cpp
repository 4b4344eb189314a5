// SPDX-License-Identifier: Apache-2.0
// The replayed job's ranks and process groups (as recorded, or with data parallelism rescaled), and the matching of
// every rank's communication nodes into calls.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "workload/workload_model.hpp"

namespace genie::netsim::workload {

namespace {

// The data-parallel dimension of the recorded job: groups (recorded pg indices, one per membership) that partition
// the ranks into `size`-member sets, ordered by smallest member.
struct DpFamily {
  std::vector<int> groups;  ///< one pg per distinct membership
  int size = 0;
  int stride = 0;  ///< smallest rank distance inside a group
};

std::vector<int> sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Candidate families: groups of one shape (size and gaps between sorted members: frameworks lay out each parallel
// dimension regularly) whose distinct memberships partition the ranks.
std::vector<DpFamily> dp_candidates(const Model& m, int n) {
  std::set<int> with_p2p;  // groups carrying messages: pipeline groups, not data-parallel ones
  for (const auto& g : m.recorded)
    for (const CommSlot& s : g->slots)
      if (s.kind != Kind::kColl && s.pg >= 0) with_p2p.insert(s.pg);
  std::map<std::vector<int>, std::map<std::vector<int>, int>> by_shape;  // gaps -> membership -> first pg
  for (size_t p = 0; p < m.recorded_pgs.size(); ++p) {
    const auto& ranks = m.recorded_pgs[p].ranks;
    if (ranks.size() < 2 || with_p2p.count(static_cast<int>(p))) continue;
    const std::vector<int> members = sorted(ranks);
    std::vector<int> gaps;
    for (size_t i = 1; i < members.size(); ++i) gaps.push_back(members[i] - members[i - 1]);
    by_shape[gaps].try_emplace(members, static_cast<int>(p));
  }
  std::vector<DpFamily> out;
  for (const auto& [gaps, members] : by_shape) {
    const int size = static_cast<int>(gaps.size()) + 1;
    std::vector<int> cover(static_cast<size_t>(n), 0);
    for (const auto& [ranks, p] : members)
      for (int r : ranks) ++cover[static_cast<size_t>(r)];
    if (std::any_of(cover.begin(), cover.end(), [](int c) { return c != 1; })) continue;
    DpFamily f;
    f.size = size;
    f.stride = n;
    for (const auto& [ranks, p] : members) {
      f.groups.push_back(p);
      for (size_t i = 1; i < ranks.size(); ++i) f.stride = std::min(f.stride, ranks[i] - ranks[i - 1]);
    }
    std::sort(f.groups.begin(), f.groups.end(), [&](int a, int b) {
      return sorted(m.recorded_pgs[static_cast<size_t>(a)].ranks).front() <
             sorted(m.recorded_pgs[static_cast<size_t>(b)].ranks).front();
    });
    out.push_back(std::move(f));
  }
  return out;
}

Status identity_layout(Model* m) {
  const int n = static_cast<int>(m->recorded.size());
  m->pgs = m->recorded_pgs;
  m->ranks.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    Rank& rk = m->ranks[static_cast<size_t>(r)];
    rk.graph = m->recorded[static_cast<size_t>(r)];
    rk.recorded = r;
    rk.gpu = rk.graph->gpu >= 0 ? rk.graph->gpu : r;
  }
  return Status::ok();
}

}  // namespace

Status lay_out_ranks(const WorkloadOptions& opts, Model* m) {
  const int n = static_cast<int>(m->recorded.size());
  // The recorded world: a group of every rank in rank order, or one added for nodes that name no group.
  m->dp_from = m->dp_to = 0;
  auto candidates = dp_candidates(*m, n);
  if (opts.dp_from > 0) std::erase_if(candidates, [&](const DpFamily& f) { return f.size != opts.dp_from; });
  // Prefer the family whose groups' members are farthest apart (frameworks put tensor parallelism on neighbouring
  // ranks), then the largest; the whole world only when nothing else partitions the ranks.
  std::sort(candidates.begin(), candidates.end(), [&](const DpFamily& a, const DpFamily& b) {
    const bool wa = a.size == n, wb = b.size == n;
    if (wa != wb) return wb;
    return std::tie(a.stride, a.size) > std::tie(b.stride, b.size);
  });
  // Without any group every rank is its own replica.
  if (!candidates.empty()) m->dp_from = candidates.front().size;
  if (opts.dp <= 0 || (m->dp_from > 0 && opts.dp == m->dp_from)) {
    m->dp_to = m->dp_from;
    return identity_layout(m);
  }
  if (candidates.empty())
    return invalid_argument(
        "--dp: the traces have no data-parallel group (groups of equal size partitioning the " + std::to_string(n) +
        " ranks" + (opts.dp_from > 0 ? " with " + std::to_string(opts.dp_from) + " members" : "") + ") to rescale");
  const DpFamily& dp = candidates.front();
  const int D = dp.size, M = n / D, K = opts.dp;
  // Position of every recorded rank: replica i (its place in its data-parallel group) and model-parallel index mp.
  std::vector<int> rep(static_cast<size_t>(n)), mp(static_cast<size_t>(n));
  std::map<std::vector<int>, int> dp_membership;  // sorted membership -> mp index
  for (int k = 0; k < M; ++k) {
    const auto& ranks = m->recorded_pgs[static_cast<size_t>(dp.groups[static_cast<size_t>(k)])].ranks;
    dp_membership[sorted(ranks)] = k;
    for (int i = 0; i < D; ++i) {
      rep[static_cast<size_t>(ranks[static_cast<size_t>(i)])] = i;
      mp[static_cast<size_t>(ranks[static_cast<size_t>(i)])] = k;
    }
  }
  // Replayed groups: each data-parallel group grown to K members, the world grown to K x M, every other group copied
  // per replica (it must lie within one).
  enum class Role { kDp, kWorld, kReplica };
  std::vector<Role> role(m->recorded_pgs.size());
  std::vector<std::vector<int>> new_pg(m->recorded_pgs.size());  // per recorded pg: replayed pg per replica (or one)
  m->pgs.clear();
  Group world;
  world.name = "world";
  for (int r = 0; r < K * M; ++r) world.ranks.push_back(r);
  m->pgs.push_back(world);    // index 0: the world (nodes that name no group)
  std::map<int, int> dp_new;  // mp index -> replayed pg
  for (int k = 0; k < M; ++k) {
    Group g;
    g.name = "dp" + std::to_string(k);
    for (int i = 0; i < K; ++i) g.ranks.push_back(i * M + k);
    dp_new[k] = static_cast<int>(m->pgs.size());
    m->pgs.push_back(std::move(g));
  }
  for (size_t p = 0; p < m->recorded_pgs.size(); ++p) {
    const Group& g = m->recorded_pgs[p];
    auto it = dp_membership.find(sorted(g.ranks));
    if (it != dp_membership.end()) {
      role[p] = Role::kDp;
      new_pg[p] = {dp_new[it->second]};
    } else if (static_cast<int>(g.ranks.size()) == n) {
      role[p] = Role::kWorld;
      new_pg[p] = {0};
    } else {
      for (int r : g.ranks)
        if (rep[static_cast<size_t>(r)] != rep[static_cast<size_t>(g.ranks.front())])
          return invalid_argument("--dp: process group '" + g.name +
                                  "' spans data-parallel replicas without being a "
                                  "data-parallel group (of " +
                                  std::to_string(D) + " ranks): cannot rescale it");
      role[p] = Role::kReplica;
      for (int i = 0; i < K; ++i) {
        Group c;
        c.name = g.name + "@" + std::to_string(i);
        for (int r : g.ranks) c.ranks.push_back(i * M + mp[static_cast<size_t>(r)]);
        new_pg[p].push_back(static_cast<int>(m->pgs.size()));
        m->pgs.push_back(std::move(c));
      }
    }
  }
  m->ranks.assign(static_cast<size_t>(K * M), Rank{});
  for (int i = 0; i < K; ++i) {
    for (int k = 0; k < M; ++k) {
      const int src =
          m->recorded_pgs[static_cast<size_t>(dp.groups[static_cast<size_t>(k)])].ranks[static_cast<size_t>(i % D)];
      Rank& rk = m->ranks[static_cast<size_t>(i * M + k)];
      rk.graph = m->recorded[static_cast<size_t>(src)];
      rk.recorded = src;
      rk.gpu = i * M + k;
    }
  }
  m->dp_from = D;
  m->dp_to = K;
  // Calls keep their total size on a grown data-parallel group: a shard of an all-gather or reduce-scatter is D / K
  // of what it was (FSDP, ZeRO); all-reduce and broadcast sizes stay (DDP).
  m->notes.push_back("data parallelism " + std::to_string(D) + " -> " + std::to_string(K) + ": " + std::to_string(M) +
                     " rank(s) per replica; data-parallel groups: " + [&] {
                       std::string s;
                       for (int g : dp.groups) {
                         s += (s.empty() ? "" : ", ") + m->recorded_pgs[static_cast<size_t>(g)].name + " {";
                         const auto& rr = m->recorded_pgs[static_cast<size_t>(g)].ranks;
                         for (size_t j = 0; j < rr.size(); ++j) s += (j ? "," : "") + std::to_string(rr[j]);
                         s += "}";
                       }
                       return s;
                     }());
  // Stash what match_calls needs to map groups and peers.
  m->dp_role.assign(role.size(), 0);
  for (size_t p = 0; p < role.size(); ++p) m->dp_role[p] = static_cast<int>(role[p]);
  m->dp_new_pg = std::move(new_pg);
  m->dp_rep = std::move(rep);
  m->dp_mp = std::move(mp);
  m->dp_m = M;
  return Status::ok();
}

Status match_calls(Model* m) {
  const bool rescaled = !m->dp_new_pg.empty();
  const int K = m->dp_to, D = m->dp_from, M = m->dp_m;
  const int world_pg = [&] {
    if (rescaled) return 0;
    for (size_t p = 0; p < m->pgs.size(); ++p) {
      const auto& r = m->pgs[p].ranks;
      bool id = r.size() == m->ranks.size();
      for (size_t i = 0; id && i < r.size(); ++i) id = r[i] == static_cast<int>(i);
      if (id) return static_cast<int>(p);
    }
    Group w;
    w.name = "world";
    for (size_t r = 0; r < m->ranks.size(); ++r) w.ranks.push_back(static_cast<int>(r));
    m->pgs.push_back(std::move(w));
    return static_cast<int>(m->pgs.size() - 1);
  }();
  auto replayed_pg = [&](int rank, int recorded_pg) {
    if (recorded_pg < 0) return world_pg;
    if (!rescaled) return recorded_pg;
    const auto& v = m->dp_new_pg[static_cast<size_t>(recorded_pg)];
    return v.size() == 1 ? v.front() : v[static_cast<size_t>(rank / M)];
  };
  auto replayed_peer = [&](int rank, int recorded_peer) {
    if (!rescaled) return recorded_peer;
    const int src = m->ranks[static_cast<size_t>(rank)].recorded;
    const int i = rank / M;
    const int shift = m->dp_rep[static_cast<size_t>(recorded_peer)] - m->dp_rep[static_cast<size_t>(src)];
    return ((i + shift) % K + K) % K * M + m->dp_mp[static_cast<size_t>(recorded_peer)];
  };
  auto gpus_of = [&](const Group& g) {
    std::vector<int> v;
    for (int r : g.ranks) v.push_back(m->ranks[static_cast<size_t>(r)].gpu);
    return v;
  };
  std::map<std::pair<int, int>, int> coll_calls;  // (replayed pg, k) -> call
  std::map<std::pair<int, int>, int> coll_count;  // (rank, replayed pg) -> calls so far
  struct End {
    int rank;
    uint32_t node;
    const CommSlot* slot;
  };
  std::map<std::tuple<int, int, int>, std::vector<End>> sends, recvs;  // (pg, src, dst)
  auto describe = [](const CollectiveSpec& s) {
    return std::string(collective_name(s.collective)) + " of " + std::to_string(s.count) + " " +
           datatype_name(s.datatype);
  };
  for (size_t r = 0; r < m->ranks.size(); ++r) {
    Rank& rk = m->ranks[r];
    const Graph& g = *rk.graph;
    const int rank = static_cast<int>(r);
    rk.call_of_slot.assign(g.slots.size(), -1);
    for (size_t s = 0; s < g.slots.size(); ++s) {
      const CommSlot& slot = g.slots[s];
      const int pg = replayed_pg(rank, slot.pg);
      if (slot.kind == Kind::kSend) {
        sends[{pg, rank, replayed_peer(rank, slot.peer)}].push_back({rank, g.slot_node[s], &slot});
        continue;
      }
      if (slot.kind == Kind::kRecv) {
        recvs[{pg, replayed_peer(rank, slot.peer), rank}].push_back({rank, g.slot_node[s], &slot});
        continue;
      }
      const Group& group = m->pgs[static_cast<size_t>(pg)];
      const int n = static_cast<int>(group.ranks.size());
      if (std::find(group.ranks.begin(), group.ranks.end(), rank) == group.ranks.end())
        return invalid_argument(g.file + ": node id " + std::to_string(g.nodes[g.slot_node[s]].id) +
                                " calls a collective on group '" + group.name + "', which does not include rank " +
                                std::to_string(rank));
      CollectiveSpec spec = slot.spec;
      const Collective c = spec.collective;
      const bool split = c == Collective::kReduceScatter || c == Collective::kAllToAll || c == Collective::kScatter;
      if (slot.bytes > 0 && split) spec.count = slot.bytes / datatype_size(spec.datatype) / static_cast<uint64_t>(n);
      const bool shard = split || c == Collective::kAllGather || c == Collective::kGather;
      if (rescaled && shard && slot.pg >= 0 && m->dp_role[static_cast<size_t>(slot.pg)] == 0)
        spec.count = std::max<uint64_t>(
            1, (spec.count * static_cast<uint64_t>(D) + static_cast<uint64_t>(K) / 2) / static_cast<uint64_t>(K));
      spec.nranks = n;
      spec.rank_to_gpu = gpus_of(group);
      const int k = coll_count[{rank, pg}]++;
      auto [it, fresh] = coll_calls.try_emplace({pg, k}, static_cast<int>(m->calls.size()));
      if (fresh) {
        Call call;
        call.pg = pg;
        call.spec = spec;
        call.min_ctas = slot.min_ctas;
        call.max_ctas = slot.max_ctas;
        call.algo = slot.algo;
        call.expected = n;
        m->calls.push_back(std::move(call));
      }
      Call& call = m->calls[static_cast<size_t>(it->second)];
      if (call.spec.collective != spec.collective || call.spec.count != spec.count ||
          call.spec.datatype != spec.datatype || call.spec.root != spec.root) {
        return invalid_argument("group '" + group.name + "' call #" + std::to_string(k) + ": rank " +
                                std::to_string(call.members.front().first) + " calls " + describe(call.spec) +
                                ", rank " + std::to_string(rank) + " (" + g.file + ", node id " +
                                std::to_string(g.nodes[g.slot_node[s]].id) + ") calls " + describe(spec));
      }
      call.members.emplace_back(rank, g.slot_node[s]);
      rk.call_of_slot[s] = it->second;
    }
  }
  for (const auto& [key, c] : coll_calls) {
    const Call& call = m->calls[static_cast<size_t>(c)];
    if (static_cast<int>(call.members.size()) == call.expected) continue;
    const Group& group = m->pgs[static_cast<size_t>(key.first)];
    std::string missing;
    for (int r : group.ranks)
      if (std::none_of(call.members.begin(), call.members.end(), [&](const auto& mb) { return mb.first == r; }))
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    return invalid_argument("group '" + group.name + "' call #" + std::to_string(key.second) + " (" +
                            describe(call.spec) + "): rank(s) " + missing + " never call it");
  }
  auto slot_index = [&](int rank, uint32_t node) {
    return m->ranks[static_cast<size_t>(rank)].graph->nodes[node].slot;
  };
  for (const auto& [key, ss] : sends) {
    const auto rv = recvs.find(key);
    const size_t nr = rv == recvs.end() ? 0 : rv->second.size();
    const auto [pg, src, dst] = key;
    if (nr != ss.size())
      return invalid_argument("messages from rank " + std::to_string(src) + " to rank " + std::to_string(dst) +
                              " on group '" + m->pgs[static_cast<size_t>(pg)].name + "': " + std::to_string(ss.size()) +
                              " sent, " + std::to_string(nr) + " received");
    for (size_t k = 0; k < ss.size(); ++k) {
      const End& s = ss[k];
      const End& r = rv->second[k];
      Call call;
      call.p2p = true;
      call.spec = s.slot->spec;
      call.spec.nranks = 2;
      call.spec.rank_to_gpu = {m->ranks[static_cast<size_t>(src)].gpu, m->ranks[static_cast<size_t>(dst)].gpu};
      call.members = {{s.rank, s.node}, {r.rank, r.node}};
      call.expected = 2;
      const int id = static_cast<int>(m->calls.size());
      m->calls.push_back(std::move(call));
      m->ranks[static_cast<size_t>(s.rank)].call_of_slot[static_cast<size_t>(slot_index(s.rank, s.node))] = id;
      m->ranks[static_cast<size_t>(r.rank)].call_of_slot[static_cast<size_t>(slot_index(r.rank, r.node))] = id;
    }
  }
  for (const auto& [key, rr] : recvs)
    if (!sends.count(key))
      return invalid_argument("rank " + std::to_string(std::get<2>(key)) + " receives " + std::to_string(rr.size()) +
                              " message(s) from rank " + std::to_string(std::get<1>(key)) + " that never sends them");
  return Status::ok();
}

}  // namespace genie::netsim::workload
