// SPDX-License-Identifier: Apache-2.0
// Point-to-point based schedules: direct all-to-all, gather, scatter, send/recv, direct all-reduce family,
// and ASTRA-sim's halving-doubling all-reduce.
#include <algorithm>

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

Result<bool> build_direct_compact(const CollectiveSpec& spec, const Tuning& t, CompactSchedule* cs) {
  const int n = spec.nranks;
  const auto un = static_cast<uint64_t>(n);
  const uint64_t ts = datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  if (n == 1) return false;
  // Each peer distance uses one channel (NCCL p2p spreads peers over channels); positions are ranks.
  auto ch_of = [&](int peer_delta) { return static_cast<uint16_t>(peer_delta % nch); };
  // Ops at one distance are independent of each other: each is its own lane.
  auto add = [&](uint16_t channel, int delta, uint32_t step, uint64_t total_or_bytes, bool split, uint32_t rotation,
                 bool reduce) {
    CompactStep op;
    op.channel = channel;
    op.lane = static_cast<uint32_t>(cs->ops.size());
    op.dst_shift = delta;
    op.step = step;
    op.reduce = reduce;
    op.bytes = split ? total_or_bytes / un : total_or_bytes;
    op.extra = split ? static_cast<uint32_t>(total_or_bytes % un) : 0;
    op.rotation = rotation;
    op.dep_begin = static_cast<uint32_t>(cs->deps.size());
    cs->ops.push_back(op);
    return static_cast<uint32_t>(cs->ops.size() - 1);
  };
  auto init = [&]() {
    cs->nranks = n;
    std::vector<int32_t> ident(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) ident[static_cast<size_t>(r)] = r;
    cs->orders.assign(static_cast<size_t>(nch), ident);
  };
  switch (spec.collective) {
    case Collective::kAllToAll:
      // Every rank sends count elements to every other rank, all at once (NCCL: grouped send/recv).
      init();
      for (int d = 1; d < n; ++d) add(ch_of(d), d, static_cast<uint32_t>(d - 1), spec.count * ts, false, 0, false);
      return true;
    case Collective::kSendRecv:
      // nccl-tests sendrecv: rank r sends to r+1 and receives from r-1.
      init();
      add(0, 1, 0, spec.count * ts, false, 0, false);
      return true;
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      // ASTRA-sim "direct": every rank exchanges its 1/n blocks with every peer at once (reduce-scatter),
      // then the reduced blocks (all-gather). Rank p sends block (p + d) at distance d in the reduce-scatter
      // and its own block p in the all-gather, which waits for every block reduced into p.
      const bool ar = spec.collective == Collective::kAllReduce;
      const uint64_t total = ar ? spec.count * ts : spec.count * ts * un;
      init();
      std::vector<uint32_t> rs(static_cast<size_t>(n), 0);
      if (spec.collective != Collective::kAllGather) {
        for (int d = 1; d < n; ++d)
          rs[static_cast<size_t>(d)] = add(ch_of(d), d, 0, total, true, static_cast<uint32_t>(n - d), true);
      }
      if (spec.collective != Collective::kReduceScatter) {
        for (int d = 1; d < n; ++d) {
          add(ch_of(d), d, 1, total, true, 0, false);
          CompactStep& op = cs->ops.back();
          if (spec.collective != Collective::kAllGather) {
            for (int d2 = 1; d2 < n; ++d2) cs->deps.push_back(CompactDep{rs[static_cast<size_t>(d2)], -d2});
          }
          op.dep_count = static_cast<uint32_t>(cs->deps.size()) - op.dep_begin;
        }
      }
      return true;
    }
    default:
      return false;
  }
}

Status build_direct(const CollectiveSpec& spec, const Tuning& t, Schedule* s) {
  const int n = spec.nranks;
  const uint64_t ts = datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  DagBuilder b(s);
  auto ch_of = [&](int peer_delta) { return peer_delta % nch; };
  switch (spec.collective) {
    case Collective::kGather:
      for (int r = 0; r < n; ++r)
        if (r != spec.root) b.transfer(r, spec.root, spec.count * ts, ch_of(r), 0, 0, false, {});
      return Status::ok();
    case Collective::kScatter:
      for (int r = 0; r < n; ++r)
        if (r != spec.root) b.transfer(spec.root, r, spec.count * ts, ch_of(r), 0, 0, false, {});
      return Status::ok();
    case Collective::kAllToAll:
    case Collective::kSendRecv:
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      CompactSchedule cs;
      GENIE_ASSIGN_OR_RETURN(bool built, build_direct_compact(spec, t, &cs));
      if (built) append_expansion(cs, s);
      return Status::ok();
    }
    default:
      return unsupported(std::string("Direct does not implement ") + collective_name(spec.collective));
  }
}

Status build_halving_doubling(const CollectiveSpec& spec, const Tuning& t, Schedule* s) {
  (void)t;
  const int n = spec.nranks;
  if (spec.collective != Collective::kAllReduce) return unsupported("HalvingDoubling implements all_reduce only");
  if ((n & (n - 1)) != 0) {
    return invalid_argument("HalvingDoubling needs a power-of-two rank count (got " + std::to_string(n) + ")");
  }
  if (n == 1) return Status::ok();
  const uint64_t total = spec.count * datatype_size(spec.datatype);
  DagBuilder b(s);
  // Recursive halving reduce-scatter (log2 n steps, partner distance n/2, n/4, ...; bytes halve), then
  // recursive doubling all-gather in reverse. Each step waits for the rank's own and its partner's
  // previous step.
  std::vector<uint32_t> last(static_cast<size_t>(n), DagBuilder::kNone);
  std::vector<uint32_t> cur(static_cast<size_t>(n));
  int steps = 0;
  for (int d = n / 2; d >= 1; d /= 2) ++steps;
  uint32_t st = 0;
  uint64_t bytes = total;
  std::vector<int> dists;
  for (int d = n / 2; d >= 1; d /= 2) dists.push_back(d);
  for (int d : dists) {
    bytes = (bytes + 1) / 2;
    for (int r = 0; r < n; ++r) {
      const int p = r ^ d;
      cur[static_cast<size_t>(r)] =
          b.transfer(r, p, bytes, 0, st, 0, true, {last[static_cast<size_t>(p)]}, last[static_cast<size_t>(r)]);
    }
    last = cur;
    ++st;
  }
  for (auto it = dists.rbegin(); it != dists.rend(); ++it) {
    const int d = *it;
    for (int r = 0; r < n; ++r) {
      const int p = r ^ d;
      cur[static_cast<size_t>(r)] =
          b.transfer(r, p, bytes, 0, st, 0, false, {last[static_cast<size_t>(p)]}, last[static_cast<size_t>(r)]);
    }
    last = cur;
    bytes *= 2;
    ++st;
  }
  (void)steps;
  return Status::ok();
}

}  // namespace genie::netsim
