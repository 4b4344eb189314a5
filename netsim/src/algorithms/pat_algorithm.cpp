// SPDX-License-Identifier: Apache-2.0
// PAT (NCCL 2.23+ "Parallel Aggregated Trees") all-gather and reduce-scatter, as a compact schedule.
#include <algorithm>

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

namespace {
/// Blocks a rank forwards at distance 2^d: PAT's binomial trees (one per owner) reach offset t + 2^d from
/// every offset t that is a multiple of 2^(d+1), while t + 2^d < n (NCCL collectives.h PatAGAlgorithm: the
/// data of offset s travels along its set bits from the highest down; offsets >= nranks are skipped).
uint64_t blocks_at(uint64_t n, uint64_t d) {
  const uint64_t dist = uint64_t{1} << d;
  if (dist >= n) return 0;
  return (n - 1 - dist) / (dist * 2) + 1;
}
}  // namespace

Result<bool> build_pat_compact(const CollectiveSpec& spec, const Tuning& t, CompactSchedule* cs) {
  const bool ag = spec.collective == Collective::kAllGather;
  if (!ag && spec.collective != Collective::kReduceScatter) {
    return unsupported(std::string("PAT implements all_gather and reduce_scatter, not ") +
                       collective_name(spec.collective));
  }
  const int n = spec.nranks;
  if (n == 1) return false;
  const auto un = static_cast<uint64_t>(n);
  uint32_t dims = 0;
  while ((uint64_t{1} << dims) < un) ++dims;
  const uint64_t block = spec.count * datatype_size(spec.datatype);  // per rank
  const int nch = std::max(1, t.nchannels);
  cs->nranks = n;
  std::vector<int32_t> ident(un);
  for (int r = 0; r < n; ++r) ident[static_cast<size_t>(r)] = r;
  cs->orders.assign(static_cast<size_t>(nch), ident);
  // All-gather: rank r receives from r + 2^d and sends to r - 2^d, highest distance first; each send carries
  // the rank's own block and what it received at larger distances. Reduce-scatter mirrors it: rank r sends
  // partial sums to r + 2^d, smallest distance first, after reducing what came from r - 2^e, e < d.
  // Every peer connection (channel, distance) is a FIFO of its own, so slices pipeline across distances.
  for (int c = 0; c < nch; ++c) {
    const uint64_t ch_block = split_part(block, static_cast<uint64_t>(nch), static_cast<uint64_t>(c));
    const uint64_t chunk = t.chunk_bytes ? t.chunk_bytes : ch_block;
    const uint64_t nslices = std::clamp<uint64_t>(chunk ? (ch_block + chunk - 1) / chunk : 1, 1, kMaxSlicesPerChannel);
    std::vector<uint32_t> lane_last(dims, DagBuilder::kNone);
    std::vector<uint32_t> stage_op(dims, DagBuilder::kNone);
    for (uint64_t l = 0; l < nslices; ++l) {
      const uint64_t b = split_part(ch_block, nslices, l);
      for (uint32_t st = 0; st < dims; ++st) {
        const uint32_t d = ag ? dims - 1 - st : st;
        CompactStep op;
        op.channel = static_cast<uint16_t>(c);
        op.lane = static_cast<uint32_t>(c) * dims + d;
        op.dst_shift = ag ? -(int32_t{1} << d) : (int32_t{1} << d);
        op.step = st;
        op.slice = static_cast<uint32_t>(l);
        op.reduce = !ag;
        op.bytes = blocks_at(un, d) * b;
        op.dep_begin = static_cast<uint32_t>(cs->deps.size());
        if (lane_last[d] != DagBuilder::kNone) cs->deps.push_back(CompactDep{lane_last[d], 0});
        // Data received earlier in this slice: from r + 2^e (all-gather, e > d) or r - 2^e (reduce-scatter,
        // e < d), sent by that peer's op of stage e.
        for (uint32_t e = 0; e < dims; ++e) {
          const bool earlier = ag ? e > d : e < d;
          if (earlier) cs->deps.push_back(CompactDep{stage_op[e], ag ? (int32_t{1} << e) : -(int32_t{1} << e)});
        }
        op.dep_count = static_cast<uint32_t>(cs->deps.size()) - op.dep_begin;
        stage_op[d] = lane_last[d] = static_cast<uint32_t>(cs->ops.size());
        cs->ops.push_back(op);
      }
    }
  }
  return true;
}

}  // namespace genie::netsim
