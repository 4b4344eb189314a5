// SPDX-License-Identifier: Apache-2.0
// EventQueue: a deterministic timed queue of engine events; ties break on (time, insertion sequence).
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "genie/common/sim_time.hpp"

namespace genie {

/// One queued event: a time, a monotonically increasing sequence number and an opaque payload.
struct QueuedEvent {
  SimTime time;
  uint64_t seq = 0;
  uint64_t payload = 0;
};

/// Min-queue ordered by (time, seq), so events at equal times pop in insertion order and every run is
/// deterministic. Not thread-safe.
class EventQueue {
 public:
  /// Queues `payload` at `time`; returns the sequence number it was given.
  uint64_t push(SimTime time, uint64_t payload);
  /// Earliest event, if any.
  std::optional<QueuedEvent> peek() const;
  /// Removes and returns the earliest event; nullopt when empty.
  std::optional<QueuedEvent> pop();
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  struct Later {
    bool operator()(const QueuedEvent& a, const QueuedEvent& b) const {
      if (a.time != b.time) return a.time > b.time;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<QueuedEvent, std::vector<QueuedEvent>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace genie
