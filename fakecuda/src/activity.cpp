// SPDX-License-Identifier: Apache-2.0
// The process's activity sink (activity.hpp): registered with the runtime, read by every API guard.
#include "genie/fakecuda/activity.hpp"

#include <atomic>

#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

namespace {
// The guards of every drop-in library read it: one copy, in libgenie_runtime.so.
std::atomic<ActivitySink*> g_sink{nullptr};
}  // namespace

ActivitySink* activity_sink() noexcept { return g_sink.load(std::memory_order_acquire); }

void Runtime::set_activity_sink(ActivitySink* sink) {
  activity_sink_.store(sink, std::memory_order_release);
  timeline_.set_op_observer(sink);
  g_sink.store(sink, std::memory_order_release);
}

}  // namespace genie::fakecuda
