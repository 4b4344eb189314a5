// SPDX-License-Identifier: Apache-2.0
// Point-to-point based schedules: direct all-to-all, gather, scatter, send/recv, direct all-reduce family,
// and ASTRA-sim's halving-doubling all-reduce.
#include <algorithm>

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

Status build_direct(const CollectiveSpec& spec, const Tuning& t, Schedule* s) {
  const int n = spec.nranks;
  const uint64_t ts = datatype_size(spec.datatype);
  const int nch = std::max(1, t.nchannels);
  DagBuilder b(s);
  // Each peer pair uses one channel (NCCL p2p spreads peers over channels).
  auto ch_of = [&](int peer_delta) { return peer_delta % nch; };
  switch (spec.collective) {
    case Collective::kAllToAll:
      // Every rank sends count elements to every other rank, all at once (NCCL: grouped send/recv).
      for (int d = 1; d < n; ++d)
        for (int r = 0; r < n; ++r)
          b.transfer(r, (r + d) % n, spec.count * ts, ch_of(d), static_cast<uint32_t>(d - 1), 0, false, {});
      return Status::ok();
    case Collective::kGather:
      for (int r = 0; r < n; ++r)
        if (r != spec.root) b.transfer(r, spec.root, spec.count * ts, ch_of(r), 0, 0, false, {});
      return Status::ok();
    case Collective::kScatter:
      for (int r = 0; r < n; ++r)
        if (r != spec.root) b.transfer(spec.root, r, spec.count * ts, ch_of(r), 0, 0, false, {});
      return Status::ok();
    case Collective::kSendRecv:
      // nccl-tests sendrecv: rank r sends to r+1 and receives from r-1.
      if (n == 1) return Status::ok();
      for (int r = 0; r < n; ++r) b.transfer(r, (r + 1) % n, spec.count * ts, 0, 0, 0, false, {});
      return Status::ok();
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kAllGather: {
      // ASTRA-sim "direct": every rank exchanges its 1/n blocks with every peer at once (reduce-scatter),
      // then the reduced blocks (all-gather).
      const bool ar = spec.collective == Collective::kAllReduce;
      const uint64_t total = ar ? spec.count * ts : spec.count * ts * static_cast<uint64_t>(n);
      std::vector<std::vector<uint32_t>> into(static_cast<size_t>(n));
      if (spec.collective != Collective::kAllGather) {
        for (int d = 1; d < n; ++d)
          for (int r = 0; r < n; ++r) {
            const int dst = (r + d) % n;
            into[static_cast<size_t>(dst)].push_back(
                b.transfer(r, dst, split_part(total, n, dst), ch_of(d), 0, 0, true, {}));
          }
      }
      if (spec.collective != Collective::kReduceScatter) {
        for (int d = 1; d < n; ++d)
          for (int r = 0; r < n; ++r)
            b.transfer_v(r, (r + d) % n, split_part(total, n, r), ch_of(d), 1, 0, false, into[static_cast<size_t>(r)]);
      }
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
          b.transfer(r, p, bytes, 0, st, 0, true, {last[static_cast<size_t>(r)], last[static_cast<size_t>(p)]});
    }
    last = cur;
    ++st;
  }
  for (auto it = dists.rbegin(); it != dists.rend(); ++it) {
    const int d = *it;
    for (int r = 0; r < n; ++r) {
      const int p = r ^ d;
      cur[static_cast<size_t>(r)] =
          b.transfer(r, p, bytes, 0, st, 0, false, {last[static_cast<size_t>(r)], last[static_cast<size_t>(p)]});
    }
    last = cur;
    bytes *= 2;
    ++st;
  }
  (void)steps;
  return Status::ok();
}

}  // namespace genie::netsim
