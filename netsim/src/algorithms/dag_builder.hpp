// SPDX-License-Identifier: Apache-2.0
// DagBuilder and the per-algorithm schedule generators (private to the algorithm library).
#pragma once

#include <initializer_list>
#include <limits>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"

namespace genie::netsim {

class Topology;

/// Appends ops to a Schedule in topological order.
class DagBuilder {
 public:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  explicit DagBuilder(Schedule* s) : s_(s) {}
  /// Adds a transfer; dependencies equal to kNone are skipped. `issue` is the op issued before it on the
  /// same connection (Step::issue_dep; kNone: none), added to the dependencies. Returns its op index.
  uint32_t transfer(int32_t src, int32_t dst, uint64_t bytes, int channel, uint32_t step, uint32_t slice, bool reduce,
                    std::initializer_list<uint32_t> deps, uint32_t issue = kNone) {
    return add(Step::Kind::kTransfer, src, dst, bytes, channel, step, slice, reduce, deps.begin(), deps.end(), issue);
  }
  uint32_t transfer_v(int32_t src, int32_t dst, uint64_t bytes, int channel, uint32_t step, uint32_t slice, bool reduce,
                      const std::vector<uint32_t>& deps, uint32_t issue = kNone) {
    return add(Step::Kind::kTransfer, src, dst, bytes, channel, step, slice, reduce, deps.data(),
               deps.data() + deps.size(), issue);
  }

 private:
  template <class It>
  uint32_t add(Step::Kind kind, int32_t src, int32_t dst, uint64_t bytes, int channel, uint32_t step, uint32_t slice,
               bool reduce, It b, It e, uint32_t issue) {
    Step op;
    op.kind = kind;
    op.src = src;
    op.dst = dst;
    op.bytes = bytes;
    op.channel = static_cast<uint16_t>(channel);
    op.step = step;
    op.slice = slice;
    op.reduce = reduce;
    op.dep_begin = static_cast<uint32_t>(s_->deps.size());
    for (It it = b; it != e; ++it) {
      if (*it != kNone) s_->deps.push_back(*it);
    }
    if (issue != kNone) {
      s_->deps.push_back(issue);
      op.issue_dep = issue;
    }
    op.dep_count = static_cast<uint32_t>(s_->deps.size()) - op.dep_begin;
    s_->ops.push_back(op);
    return static_cast<uint32_t>(s_->ops.size() - 1);
  }
  Schedule* s_;
};

/// Splits `total` into `parts` nearly equal pieces (the first ones get the remainder).
inline uint64_t split_part(uint64_t total, uint64_t parts, uint64_t i) {
  return total / parts + (i < total % parts ? 1 : 0);
}

/// Cap on pipeline slices per channel kept explicit in the DAG. NCCL loops over chunks; beyond this many
/// the slices are merged (each slice then carries several NCCL chunks). Latencies overlap across slices,
/// so merging only lengthens the pipeline fill.
inline constexpr uint64_t kMaxSlicesPerChannel = 8;
/// NVLS keeps more slices: its four stages share each GPU link in both directions, so the fill of a
/// coarse pipeline would cost up to 1/slices of the transfer (64 slices: under 2%).
inline constexpr uint64_t kMaxNvlsSlicesPerChannel = 64;
/// Trees are deep store-and-forward chains; they need many slices to pipeline (NCCL: depth x 8 chunks).
inline constexpr uint64_t kMaxTreeSlicesPerChannel = 64;

/// Appends the explicit form of `cs` to `s` (op k*n + p is member p of compact op k).
void append_expansion(const CompactSchedule& cs, Schedule* s);

/// Compact (circulant) generators: fill `cs` and return true, or return false when this collective is not
/// circulant under the algorithm (rooted ones), leaving `cs` untouched.
Result<bool> build_ring_compact(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, CompactSchedule* cs);
Result<bool> build_direct_compact(const CollectiveSpec& spec, const Tuning& t, CompactSchedule* cs);
/// PAT all-gather / reduce-scatter (Unsupported for other collectives).
Result<bool> build_pat_compact(const CollectiveSpec& spec, const Tuning& t, CompactSchedule* cs);

Status build_ring(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s);
Status build_tree(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s);
Status build_nvls(const CollectiveSpec& spec, const Tuning& t, Schedule* s);
/// `sharp`: the inter-server part is the fabric's in-network reduction (NCCL's multi-node NVLS) instead of trees.
Status build_nvls_tree(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s, bool sharp);
Status build_direct(const CollectiveSpec& spec, const Tuning& t, Schedule* s);
Status build_halving_doubling(const CollectiveSpec& spec, const Tuning& t, Schedule* s);
/// CollNet all-reduce (in-network reduction): Chain (a chain inside each server to a head that reduces in the
/// network) and Direct (every GPU a head for 1/G of the data, reached directly over NVLink).
Status build_collnet(const CollectiveSpec& spec, const Topology& topo, const Tuning& t, Schedule* s);

}  // namespace genie::netsim
