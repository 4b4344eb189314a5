// SPDX-License-Identifier: Apache-2.0
// SimEngine implementation.
#include "engine/sim_engine.hpp"

#include "genie/common/status.hpp"

namespace genie::netsim {

std::optional<SimTime> SimEngine::next_event_time() {
  std::optional<SimTime> dt;
  for (Model* m : models_) {
    if (auto d = m->next_event(now_)) {
      if (!dt || *d < *dt) dt = *d;
    }
  }
  if (auto e = queue_.peek()) {
    const SimTime d = e->time - now_;
    GENIE_ASSERT(d >= SimTime::zero(), "event queued in the past");
    if (!dt || d < *dt) dt = d;
  }
  if (!dt) return std::nullopt;
  return now_ + *dt;
}

uint64_t SimEngine::run_until(SimTime limit) {
  uint64_t iterations = 0;
  while (auto next = next_event_time()) {
    if (*next > limit) break;
    ++iterations;
    if (watch_ && ++since_watch_ >= watch_every_) {
      since_watch_ = 0;
      if (!watch_()) break;
    }
    const SimTime dt = *next - now_;
    for (Model* m : models_) m->advance(now_, dt);
    now_ = *next;
    while (auto e = queue_.peek()) {
      if (e->time > now_) break;
      queue_.pop();
      if (handler_) handler_(e->payload, now_);
    }
  }
  return iterations;
}

uint64_t SimEngine::run() { return run_until(SimTime::max()); }

}  // namespace genie::netsim
