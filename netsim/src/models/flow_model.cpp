// SPDX-License-Identifier: Apache-2.0
// FlowModel implementation (lazy completion heap over the incremental max-min solver).
#include "models/flow_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace genie::netsim {

FlowModel::FlowModel(const Topology& topo, bool record_usage) : record_(record_usage) {
  for (size_t ch = 0; ch < topo.num_channels(); ++ch) {
    const lmm::Id c = sys_.add_constraint(topo.channel_link(static_cast<uint32_t>(ch)).bw_bytes_per_s);
    GENIE_ASSERT(c == ch, "constraint ids must equal channel ids");
  }
}

uint32_t FlowModel::alloc_slot() {
  if (!free_slots_.empty()) {
    const uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  flows_.emplace_back();
  return static_cast<uint32_t>(flows_.size() - 1);
}

void FlowModel::add_flow(uint32_t slot, uint64_t id, const TransferRequest& req, bool active) {
  Flow& f = flows_[slot];
  f.id = id;
  f.rem0 = req.wire_bytes;
  f.rate = 0;
  ++f.version;
  f.active = active;
  f.live = true;
  f.channels.assign(req.channels.begin(), req.channels.end());
  // Born disabled unless active: the latency phase consumes no bandwidth.
  const double bound = req.rate_bound_bytes_per_s > 0 ? req.rate_bound_bytes_per_s : lmm::kUnbounded;
  if (f.rem0 > 0 && (!f.channels.empty() || bound != lmm::kUnbounded)) {
    f.var = sys_.add_variable(active ? 1.0 : 0.0, bound);
    for (size_t i = 0; i < f.channels.size(); ++i)
      sys_.expand(f.var, f.channels[i], req.consumption.empty() ? 1.0 : req.consumption[i]);
    if (slot_of_var_.size() <= f.var) slot_of_var_.resize(f.var + 1, 0);
    slot_of_var_[f.var] = slot;
    if (active) dirty_ = true;
  } else {
    f.var = lmm::kNoId;
    f.rem0 = 0;  // nothing to carry (or no link to carry it): latency only
  }
  slot_of_[id] = slot;
  ++live_;
}

void FlowModel::start(uint64_t id, const TransferRequest& req, SimTime now) {
  const uint32_t slot = alloc_slot();
  add_flow(slot, id, req, false);
  Flow& f = flows_[slot];
  f.t0 = now;
  f.lat_end = now + req.latency;
  latency_q_.push(HeapEntry{f.lat_end, seq_++, slot, f.version});
}

void FlowModel::split(uint64_t id, SimTime now, std::span<const uint64_t> ids,
                      std::span<const TransferRequest> members) {
  (void)now;
  auto it = slot_of_.find(id);
  GENIE_ASSERT(it != slot_of_.end(), "split: unknown action");
  const uint32_t bslot = it->second;
  // Retire the class without a completion; its heap entries go stale through the version bump.
  Flow b = std::move(flows_[bslot]);
  Flow& old = flows_[bslot];
  old = Flow{};
  old.version = b.version + 1;
  if (b.var != lmm::kNoId) {
    sys_.remove_variable(b.var);
    dirty_ = true;
  }
  --live_;
  slot_of_.erase(it);
  free_slots_.push_back(bslot);
  for (size_t i = 0; i < ids.size(); ++i) {
    const uint32_t slot = alloc_slot();
    add_flow(slot, ids[i], members[i], b.active);
    Flow& f = flows_[slot];
    // The class's state is every member's state (same bytes banked at the same times at the same rates).
    if (f.var != lmm::kNoId) f.rem0 = b.rem0;
    f.t0 = b.t0;
    f.rate = b.rate;
    f.lat_end = b.lat_end;
    f.end_pred = b.end_pred;
    if (!b.active) {
      latency_q_.push(HeapEntry{f.lat_end, seq_++, slot, f.version});
    } else if (f.rate > 0) {
      completion_q_.push(HeapEntry{f.end_pred, seq_++, slot, f.version});
    }
  }
}

void FlowModel::record(const Flow& f, SimTime until) {
  if (!record_ || f.rate <= 0 || until <= f.t0) return;
  for (uint32_t ch : f.channels) usage_.push_back(LinkUsageSample{ch, f.t0, until, f.rate});
}

void FlowModel::resolve(SimTime now) {
  if (!dirty_) return;
  sys_.solve();
  dirty_ = false;
  for (lmm::Id v : sys_.changed()) {
    const uint32_t slot = slot_of_var_[v];
    Flow& f = flows_[slot];
    if (!f.live || !f.active || f.var != v) continue;
    const double r = sys_.rate(v);
    // A member split off a symmetry class whose rate the re-solve kept: its predicted end stands, as it
    // would have for a flow that was never part of a class (never happens otherwise: changed() lists a
    // variable only when its rate differs from the last solve's, which f.rate mirrors).
    if (r == f.rate) continue;
    // Bank the bytes moved at the old rate, then predict the end at the new one.
    f.rem0 = std::max(0.0, f.rem0 - f.rate * (now - f.t0).to_seconds());
    record(f, now);
    f.t0 = now;
    f.rate = r;
    ++f.version;
    if (r > 0) {
      const SimTime dt = SimTime::ns(std::max<int64_t>(0, static_cast<int64_t>(std::ceil(f.rem0 / r * 1e9))));
      f.end_pred = now + dt;
      completion_q_.push(HeapEntry{f.end_pred, seq_++, slot, f.version});
    }
  }
}

bool FlowModel::latency_valid(const HeapEntry& e) const {
  const Flow& f = flows_[e.slot];
  return f.live && !f.active && f.version == e.version;
}

bool FlowModel::valid(const HeapEntry& e) const {
  const Flow& f = flows_[e.slot];
  return f.live && f.active && f.version == e.version;
}

std::optional<SimTime> FlowModel::next_event(SimTime now) {
  resolve(now);
  while (!completion_q_.empty() && !valid(completion_q_.top())) completion_q_.pop();
  while (!latency_q_.empty() && !latency_valid(latency_q_.top())) latency_q_.pop();
  std::optional<SimTime> best;
  if (!latency_q_.empty()) best = max(SimTime::zero(), latency_q_.top().t - now);
  if (!completion_q_.empty()) {
    const SimTime d = max(SimTime::zero(), completion_q_.top().t - now);
    if (!best || d < *best) best = d;
  }
  return best;
}

void FlowModel::finish(uint32_t slot, SimTime t) {
  Flow& f = flows_[slot];
  record(f, t);
  if (f.var != lmm::kNoId) {
    sys_.remove_variable(f.var);
    dirty_ = true;
  }
  f.live = false;
  f.active = false;
  ++f.version;
  --live_;
  slot_of_.erase(f.id);
  free_slots_.push_back(slot);
  done_.emplace_back(f.id, t);
}

void FlowModel::advance(SimTime now, SimTime dt) {
  const SimTime t = now + dt;
  done_.clear();
  // 1. Data phase over: predicted ends at or before t.
  while (!completion_q_.empty() && completion_q_.top().t <= t) {
    const HeapEntry e = completion_q_.top();
    completion_q_.pop();
    if (valid(e)) finish(e.slot, t);
  }
  // 2. Latency phase over: enable the variable (or finish a zero-byte flow).
  while (!latency_q_.empty() && latency_q_.top().t <= t) {
    const HeapEntry e = latency_q_.top();
    const uint32_t s = e.slot;
    latency_q_.pop();
    Flow& f = flows_[s];
    if (!latency_valid(e)) continue;  // a class that was split
    if (f.var == lmm::kNoId) {
      finish(s, t);
      continue;
    }
    f.active = true;
    f.t0 = t;
    f.rate = 0;
    sys_.set_weight(f.var, 1.0);
    dirty_ = true;
  }
  // Completions last: the callback may start new flows.
  auto done = std::move(done_);
  done_.clear();
  for (const auto& [id, when] : done) notify_complete(id, when);
}

}  // namespace genie::netsim
