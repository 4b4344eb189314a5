// SPDX-License-Identifier: Apache-2.0
// DagBuilder and the per-algorithm schedule generators (private to the algorithm library).
#pragma once

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <vector>

#include "engine/sim_budget.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"

namespace genie::netsim {

class Topology;

/// Memory limit of the explicit DAG being built on this thread (build_schedule's `max_bytes`, 0: none), with what
/// the simulator will add per op. Set for one build by ScopedBuildBudget; DagBuilder checks it as it goes.
struct BuildBudget {
  uint64_t max_bytes = 0;
  uint64_t projected_bytes = 0;  ///< set when the build was stopped: the whole DAG's projected size
  uint64_t projected_ops = 0;
  bool exceeded = false;
  /// Bytes per op and per dependency of a DAG plus the simulator's state for it (estimate_state_bytes).
  static constexpr uint64_t kOpBytes = sizeof(Step) + kStateBytesPerUnit,
                            kDepBytes = sizeof(uint32_t) + kStateBytesPerDep;
};
inline thread_local BuildBudget* t_build_budget = nullptr;
class ScopedBuildBudget {
 public:
  explicit ScopedBuildBudget(BuildBudget* b) : prev_(t_build_budget) { t_build_budget = b; }
  ~ScopedBuildBudget() { t_build_budget = prev_; }
  ScopedBuildBudget(const ScopedBuildBudget&) = delete;
  ScopedBuildBudget& operator=(const ScopedBuildBudget&) = delete;

 private:
  BuildBudget* prev_;
};

/// Appends ops to a Schedule in topological order.
class DagBuilder {
 public:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  explicit DagBuilder(Schedule* s)
      : s_(s), budget_(t_build_budget && t_build_budget->max_bytes ? t_build_budget : nullptr) {}
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
  /// Every 2^18 ops: projects the whole DAG from the channels built so far (generators build channel by channel)
  /// and stops storing ops once it would not fit; build_schedule then reports OutOfMemory.
  bool over_budget() {
    if (budget_->exceeded) return true;
    const uint64_t ops = s_->ops.size(), deps = s_->deps.size();
    const uint64_t nch = static_cast<uint64_t>(std::max(1, s_->tuning.nchannels));
    // The channels finished so far (all but the one being built) project the rest; with none finished yet,
    // what exists is the estimate.
    const uint64_t done = std::min<uint64_t>(nch, channel_);
    const uint64_t pops = done ? std::max(ops, channel_ops_ * nch / done) : ops;
    const uint64_t pdeps = done ? std::max(deps, channel_deps_ * nch / done) : deps;
    const uint64_t bytes = pops * BuildBudget::kOpBytes + pdeps * BuildBudget::kDepBytes;
    if (bytes <= budget_->max_bytes) return false;
    budget_->exceeded = true;
    budget_->projected_ops = pops;
    budget_->projected_bytes = bytes;
    return true;
  }

  template <class It>
  uint32_t add(Step::Kind kind, int32_t src, int32_t dst, uint64_t bytes, int channel, uint32_t step, uint32_t slice,
               bool reduce, It b, It e, uint32_t issue) {
    if (budget_ != nullptr) {
      if (static_cast<uint64_t>(channel) > channel_) {  // generators build channel by channel, in order
        channel_ = static_cast<uint64_t>(channel);
        channel_ops_ = s_->ops.size();
        channel_deps_ = s_->deps.size();
      }
      if (budget_->exceeded ||
          ((s_->ops.size() & ((uint64_t{1} << 18) - 1)) == 0 && !s_->ops.empty() && over_budget())) {
        return static_cast<uint32_t>(s_->ops.size() - 1);  // stores no more; the generator runs to its end
      }
    }
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
  BuildBudget* budget_;
  uint64_t channel_ = 0;      ///< highest channel seen
  uint64_t channel_ops_ = 0;  ///< ops and dependencies before it: channels 0..channel_-1
  uint64_t channel_deps_ = 0;
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
