// SPDX-License-Identifier: Apache-2.0
// EventQueue implementation: a binary heap keyed on (time, seq).
#include "genie/common/event_queue.hpp"

namespace genie {

uint64_t EventQueue::push(SimTime time, uint64_t payload) {
  const uint64_t seq = next_seq_++;
  heap_.push(QueuedEvent{time, seq, payload});
  return seq;
}

std::optional<QueuedEvent> EventQueue::peek() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.top();
}

std::optional<QueuedEvent> EventQueue::pop() {
  if (heap_.empty()) return std::nullopt;
  QueuedEvent e = heap_.top();
  heap_.pop();
  return e;
}

}  // namespace genie
