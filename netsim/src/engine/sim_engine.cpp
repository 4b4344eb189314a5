// SPDX-License-Identifier: Apache-2.0
// SimEngine implementation.
#include "engine/sim_engine.hpp"

#include "genie/common/status.hpp"

namespace genie::netsim {

uint64_t SimEngine::run() {
  uint64_t iterations = 0;
  while (true) {
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
    if (!dt) break;
    ++iterations;
    for (Model* m : models_) m->advance(now_, *dt);
    now_ += *dt;
    while (auto e = queue_.peek()) {
      if (e->time > now_) break;
      queue_.pop();
      if (handler_) handler_(e->payload, now_);
    }
  }
  return iterations;
}

}  // namespace genie::netsim
