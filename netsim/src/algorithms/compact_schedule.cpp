// SPDX-License-Identifier: Apache-2.0
// Compact (circulant) Schedules: expansion into the explicit DAG, and the queries Schedule answers on both.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "algorithms/dag_builder.hpp"

namespace genie::netsim {

void append_expansion(const CompactSchedule& cs, Schedule* s) {
  const auto n = static_cast<uint32_t>(cs.nranks);
  const size_t base = s->ops.size();
  s->ops.reserve(base + cs.ops.size() * n);
  size_t ndeps = 0;
  for (const CompactStep& op : cs.ops) ndeps += op.dep_count;
  s->deps.reserve(s->deps.size() + ndeps * n);
  std::unordered_map<uint32_t, uint32_t> lane_last;  // lane -> its latest compact op
  for (size_t k = 0; k < cs.ops.size(); ++k) {
    const CompactStep& c = cs.ops[k];
    const std::vector<int32_t>& order = cs.orders[c.channel];
    // The lane's previous op (shift 0) is this op's issue predecessor (CompactStep::lane).
    const auto last = lane_last.find(c.lane);
    const uint32_t issue_op = last == lane_last.end() ? Step::kNoIssueDep : last->second;
    lane_last[c.lane] = static_cast<uint32_t>(k);
    const uint32_t dshift = static_cast<uint32_t>(((c.dst_shift % static_cast<int64_t>(n)) + n) % n);
    for (uint32_t p = 0; p < n; ++p) {
      Step op;
      op.kind = Step::Kind::kTransfer;
      op.reduce = c.reduce;
      op.channel = c.channel;
      op.src = order[p];
      op.dst = order[(p + dshift) % n];
      op.step = c.step;
      op.slice = c.slice;
      op.bytes = c.member_bytes(p, n);
      op.dep_begin = static_cast<uint32_t>(s->deps.size());
      for (const CompactDep& d : cs.deps_of(k)) {
        const uint32_t q = static_cast<uint32_t>((static_cast<int64_t>(p) + d.shift % static_cast<int64_t>(n) + n) % n);
        const auto dep = static_cast<uint32_t>(base + static_cast<size_t>(d.op) * n + q);
        if (d.op == issue_op && q == p) op.issue_dep = dep;
        s->deps.push_back(dep);
      }
      op.dep_count = static_cast<uint32_t>(s->deps.size()) - op.dep_begin;
      s->ops.push_back(op);
    }
  }
}

Schedule expand_schedule(const Schedule& s) {
  Schedule out = s;
  if (!s.compact) return out;
  out.compact.reset();
  out.ops.clear();
  out.deps.clear();
  append_expansion(*s.compact, &out);
  return out;
}

size_t Schedule::num_ops() const {
  if (compact) return compact->ops.size() * static_cast<size_t>(compact->nranks);
  return ops.size();
}

uint32_t Schedule::num_steps() const {
  std::set<uint32_t> steps;
  if (compact) {
    for (const CompactStep& op : compact->ops) steps.insert(op.step);
  } else {
    for (const Step& op : ops)
      if (op.kind == Step::Kind::kTransfer) steps.insert(op.step);
  }
  return static_cast<uint32_t>(steps.size());
}

uint64_t Schedule::bytes_sent_by(int r) const {
  uint64_t b = 0;
  if (compact) {
    const auto n = static_cast<uint32_t>(compact->nranks);
    // Position of rank r in every channel's order.
    std::vector<uint32_t> pos(compact->orders.size(), n);
    for (size_t c = 0; c < compact->orders.size(); ++c) {
      const auto& o = compact->orders[c];
      const auto it = std::find(o.begin(), o.end(), r);
      if (it != o.end()) pos[c] = static_cast<uint32_t>(it - o.begin());
    }
    for (const CompactStep& op : compact->ops)
      if (pos[op.channel] < n) b += op.member_bytes(pos[op.channel], n);
    return b;
  }
  for (const Step& op : ops)
    if (op.kind == Step::Kind::kTransfer && op.src == r) b += op.bytes;
  return b;
}

}  // namespace genie::netsim
