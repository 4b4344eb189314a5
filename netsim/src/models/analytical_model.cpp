// SPDX-License-Identifier: Apache-2.0
// AnalyticalModel implementation.
#include "models/analytical_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace genie::netsim {

void AnalyticalModel::start(uint64_t id, const TransferRequest& req, SimTime now) {
  double rate = std::numeric_limits<double>::infinity();
  for (uint32_t ch : req.channels) rate = std::min(rate, topo_.channel_link(ch).bw_bytes_per_s);
  if (!alone_) rate /= std::max(1, req.share_divisor);
  if (req.rate_bound_bytes_per_s > 0) rate = std::min(rate, req.rate_bound_bytes_per_s);
  SimTime xfer = SimTime::zero();
  if (req.wire_bytes > 0 && std::isfinite(rate)) xfer = SimTime::from_seconds(req.wire_bytes / rate);
  const SimTime end = now + req.latency + xfer;
  heap_.push(Entry{end, seq_++, id});
  if (record_ && req.wire_bytes > 0) {
    for (uint32_t ch : req.channels) usage_.push_back(LinkUsageSample{ch, now + req.latency, end, rate});
  }
}

void AnalyticalModel::split(uint64_t, SimTime, std::span<const uint64_t>, std::span<const TransferRequest>) {
  GENIE_ASSERT(false, "the analytical model has no contention, so a symmetry class is never split");
}

std::optional<SimTime> AnalyticalModel::next_event(SimTime now) {
  if (heap_.empty()) return std::nullopt;
  return max(SimTime::zero(), heap_.top().end - now);
}

void AnalyticalModel::advance(SimTime now, SimTime dt) {
  const SimTime t = now + dt;
  done_.clear();
  while (!heap_.empty() && heap_.top().end <= t) {
    done_.push_back(heap_.top().id);
    heap_.pop();
  }
  for (uint64_t id : done_) notify_complete(id, t);
}

}  // namespace genie::netsim
