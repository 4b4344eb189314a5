// SPDX-License-Identifier: Apache-2.0
// Model: the interface every timed resource model implements; the engine alone moves the clock (STYLE §7).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "genie/common/sim_time.hpp"

namespace genie {

/// A resource model driven by an engine (SimGrid's Model/EngineImpl split). The model owns actions
/// (transfers, kernels) and knows their rates; it never moves the clock. The engine repeatedly asks every
/// model for its next event, advances the clock to the earliest one and calls advance() on every model,
/// which reports finished actions through the completion callback.
///
/// Thread-safety: none; a model is driven by exactly one engine thread.
class Model {
 public:
  /// Called once per finished action, from inside advance(): (action id, completion time).
  using CompletionCallback = std::function<void(uint64_t action_id, SimTime when)>;

  virtual ~Model() = default;

  /// Delay from `now` until this model's next internal event (an action finishing or changing phase),
  /// or nullopt when it has nothing in flight. Must not change the model's state.
  virtual std::optional<SimTime> next_event(SimTime now) = 0;

  /// Moves the model from `now` to `now + dt` (dt never exceeds the last next_event()), updating the
  /// remaining work of every action and firing completions that fall at or before `now + dt`.
  virtual void advance(SimTime now, SimTime dt) = 0;

  /// Installs the completion callback (replaces any previous one).
  void set_completion_callback(CompletionCallback cb) { on_complete_ = std::move(cb); }

 protected:
  void notify_complete(uint64_t action_id, SimTime when) const {
    if (on_complete_) on_complete_(action_id, when);
  }

 private:
  CompletionCallback on_complete_;
};

}  // namespace genie
