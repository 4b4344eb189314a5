// SPDX-License-Identifier: Apache-2.0
// AnalyticalModel: closed-form alpha-beta time per transfer, congestion-unaware.
#pragma once

#include <queue>
#include <vector>

#include "genie/netsim/topology.hpp"
#include "models/network_model.hpp"

namespace genie::netsim {

/// end = start + latency + wire_bytes / min(bottleneck / share_divisor, bound); with `alone`, the bottleneck is
/// not divided (SimulatorOptions::alone). Each action is one heap entry, so cost is O(log n) per transfer and
/// memory O(in-flight).
class AnalyticalModel final : public NetworkModel {
 public:
  AnalyticalModel(const Topology& topo, bool record_usage, bool alone = false)
      : topo_(topo), record_(record_usage), alone_(alone) {}
  void start(uint64_t id, const TransferRequest& req, SimTime now) override;
  /// Never needed: without contention a symmetry class never has to be split. Aborts.
  void split(uint64_t id, SimTime now, std::span<const uint64_t> ids,
             std::span<const TransferRequest> members) override;
  std::optional<SimTime> next_event(SimTime now) override;
  void advance(SimTime now, SimTime dt) override;
  size_t active() const override { return heap_.size(); }
  const std::vector<LinkUsageSample>& usage() const override { return usage_; }
  void stop_recording() override { record_ = false; }

 private:
  struct Entry {
    SimTime end;
    uint64_t seq;
    uint64_t id;
    bool operator>(const Entry& o) const { return end != o.end ? end > o.end : seq > o.seq; }
  };
  const Topology& topo_;
  bool record_;
  bool alone_;
  uint64_t seq_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  std::vector<LinkUsageSample> usage_;
  std::vector<uint64_t> done_;
};

}  // namespace genie::netsim
