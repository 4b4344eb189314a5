// SPDX-License-Identifier: Apache-2.0
// FlowModel: flows are lmm variables over link constraints; max-min fair sharing with a latency phase.
#pragma once

#include <queue>
#include <unordered_map>
#include <vector>

#include "genie/netsim/topology.hpp"
#include "lmm/lmm_system.hpp"
#include "models/network_model.hpp"

namespace genie::netsim {

/// Every directed link channel is a constraint (capacity = bandwidth). A flow is a variable crossing the
/// constraints of its route; while it pays its latency it is a disabled variable (weight 0), enabled when
/// the latency has elapsed. Rates come from the incremental lmm::System, re-solved only where a flow
/// started, finished or was enabled.
///
/// Lazy updates (SimGrid's "lazy" action heap): a flow stores (remaining at t0, t0, rate) and one entry
/// in a completion heap keyed by its predicted end. Only flows whose rate the solver changed are touched,
/// so an event costs O(changed x log n), not O(active flows).
class FlowModel final : public NetworkModel {
 public:
  FlowModel(const Topology& topo, bool record_usage);
  void start(uint64_t id, const TransferRequest& req, SimTime now) override;
  void split(uint64_t id, SimTime now, std::span<const uint64_t> ids,
             std::span<const TransferRequest> members) override;
  std::optional<SimTime> next_event(SimTime now) override;
  void advance(SimTime now, SimTime dt) override;
  size_t active() const override { return live_; }
  const std::vector<LinkUsageSample>& usage() const override { return usage_; }
  void stop_recording() override { record_ = false; }

 private:
  struct Flow {
    uint64_t id = 0;
    lmm::Id var = lmm::kNoId;
    double rem0 = 0;       // wire bytes remaining at t0
    SimTime t0;            // when rem0 and rate were last set
    SimTime lat_end;       // end of the latency phase
    SimTime end_pred;      // predicted end of the data phase (valid while active with rate > 0)
    double rate = 0;       // bytes/s since t0
    uint32_t version = 0;  // bumps whenever the predicted end changes (stale heap entries are skipped)
    bool active = false;   // past its latency phase
    bool live = false;
    std::vector<uint32_t> channels;
  };
  struct HeapEntry {
    SimTime t;
    uint64_t seq;
    uint32_t slot;
    uint32_t version;
    bool operator>(const HeapEntry& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  using MinHeap = std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<>>;
  void resolve(SimTime now);
  uint32_t alloc_slot();
  /// New flow in slot `slot` over `req`'s links; its variable is enabled when `active`.
  void add_flow(uint32_t slot, uint64_t id, const TransferRequest& req, bool active);
  void finish(uint32_t slot, SimTime t);
  void record(const Flow& f, SimTime until);
  bool valid(const HeapEntry& e) const;          // completion entry still current
  bool latency_valid(const HeapEntry& e) const;  // latency entry still current

  bool record_;
  lmm::System sys_;
  std::vector<Flow> flows_;  // slot-indexed
  std::vector<uint32_t> free_slots_;
  std::vector<uint32_t> slot_of_var_;  // lmm variable id -> flow slot
  std::unordered_map<uint64_t, uint32_t> slot_of_;
  MinHeap latency_q_;     // latency phase ends
  MinHeap completion_q_;  // predicted data-phase ends
  uint64_t seq_ = 0;
  size_t live_ = 0;
  bool dirty_ = false;
  std::vector<LinkUsageSample> usage_;
  std::vector<std::pair<uint64_t, SimTime>> done_;
};

}  // namespace genie::netsim
