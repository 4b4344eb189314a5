// SPDX-License-Identifier: Apache-2.0
// SimEngine: netsim's own event loop for pure simulation; owns the clock and the event queue.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "genie/common/event_queue.hpp"
#include "genie/common/model.hpp"

namespace genie::netsim {

/// Each iteration: dt = min(every model's next_event, next queued event); advance the clock by dt; call
/// advance() on every model (which fires completions); then fire queued events that are due, in
/// (time, seq) order. The engine never computes rates; models never move the clock.
class SimEngine {
 public:
  using EventHandler = std::function<void(uint64_t payload, SimTime now)>;
  void add_model(Model* m) { models_.push_back(m); }
  void set_event_handler(EventHandler h) { handler_ = std::move(h); }
  /// Queues a timed event (payload is opaque to the engine). `t` must be >= now().
  void schedule(SimTime t, uint64_t payload) { queue_.push(t, payload); }
  SimTime now() const { return now_; }
  /// Runs until no model has an event and the queue is empty. Returns the number of iterations.
  uint64_t run();
  /// Processes every event at or before `limit`, in time order; the clock stops at the last event
  /// processed (never beyond `limit`). Returns the number of iterations.
  uint64_t run_until(SimTime limit);
  /// Calls `watch` every `every` iterations of run_until(); when it returns false, run_until() returns at once
  /// (the clock stays at the last event processed). For progress reports and resource limits.
  void set_watch(std::function<bool()> watch, uint64_t every) {
    watch_ = std::move(watch);
    watch_every_ = every > 0 ? every : 1;
  }
  /// Absolute time of the next event (model or queue), or nullopt when nothing is pending.
  std::optional<SimTime> next_event_time();

 private:
  std::vector<Model*> models_;
  EventQueue queue_;
  EventHandler handler_;
  SimTime now_;
  std::function<bool()> watch_;
  uint64_t watch_every_ = 1;
  uint64_t since_watch_ = 0;
};

}  // namespace genie::netsim
