// SPDX-License-Identifier: Apache-2.0
// Tests of SimEngine: clock ownership, queued events and model events interleave in time order.
#include "engine/sim_engine.hpp"

#include <gtest/gtest.h>

namespace genie::netsim {
namespace {

/// A model with fixed completion times.
class FixedModel : public Model {
 public:
  explicit FixedModel(std::vector<SimTime> ends) : ends_(std::move(ends)) {}
  std::optional<SimTime> next_event(SimTime now) override {
    if (next_ >= ends_.size()) return std::nullopt;
    return ends_[next_] - now;
  }
  void advance(SimTime now, SimTime dt) override {
    while (next_ < ends_.size() && ends_[next_] <= now + dt) notify_complete(next_++, now + dt);
  }

 private:
  std::vector<SimTime> ends_;
  size_t next_ = 0;
};

TEST(SimEngine, InterleavesModelAndQueuedEvents) {
  // Model completions at 10 and 30 ns, queued events at 20 and 30 ns. Expectation: order m0@10, q@20,
  // m1@30, q@30 (model completions of an instant fire before queued events of that instant).
  FixedModel m({SimTime::ns(10), SimTime::ns(30)});
  SimEngine e;
  e.add_model(&m);
  std::vector<std::pair<std::string, int64_t>> log;
  m.set_completion_callback([&](uint64_t id, SimTime t) { log.emplace_back("m" + std::to_string(id), t.count_ns()); });
  e.set_event_handler([&](uint64_t p, SimTime t) { log.emplace_back("q" + std::to_string(p), t.count_ns()); });
  e.schedule(SimTime::ns(30), 2);
  e.schedule(SimTime::ns(20), 1);
  e.run();
  const std::vector<std::pair<std::string, int64_t>> want = {{"m0", 10}, {"q1", 20}, {"m1", 30}, {"q2", 30}};
  EXPECT_EQ(log, want);
  EXPECT_EQ(e.now().count_ns(), 30);
}

}  // namespace
}  // namespace genie::netsim
