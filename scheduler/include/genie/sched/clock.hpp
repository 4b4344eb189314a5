// SPDX-License-Identifier: Apache-2.0
// Clock: host time of each application thread, in realtime or virtual mode (see DESIGN.md "Time").
#pragma once

#include <atomic>
#include <cstdint>

#include "genie/common/sim_time.hpp"

namespace genie::sched {

enum class ClockMode { kVirtual, kRealtime };

/// Parses "virtual" / "realtime".
bool parse_clock_mode(const char* text, ClockMode* out);
const char* clock_mode_name(ClockMode m);

/// Host clock options.
struct ClockOptions {
  ClockMode mode = ClockMode::kVirtual;
  /// Virtual mode: thread CPU time is sampled (CLOCK_THREAD_CPUTIME_ID costs ~0.36 us here, measured) at
  /// most once per this much wall time; CPU used in between is charged at the next sample.
  SimTime cpu_sample_interval = SimTime::us(20);
  /// Realtime mode only: time dilation D >= 1 (GENIE_DILATION). The clock runs D times slower than the wall
  /// clock: a modelled duration d is slept for d x D of wall time, and a measured wall interval w reads as
  /// w / D, so a fabric D times slower than the modelled one stands in for it (docs/fabric.md).
  double dilation = 1.0;
};

/// Host time for the calling thread. Realtime: wall time since the clock's epoch. Virtual: each thread
/// has its own virtual time that advances by the thread's CPU time (so many ranks on few cores do not
/// inflate each other), by modelled API overheads, and jumps forward when a blocking call completes.
/// A thread first seen by the clock starts at the largest host time any thread has reached.
/// Thread-safe; per-thread state lives in thread-local storage.
class Clock {
 public:
  explicit Clock(ClockOptions options = {});
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  ClockMode mode() const { return options_.mode; }
  bool is_virtual() const { return options_.mode == ClockMode::kVirtual; }

  /// The calling thread's host time (virtual: after charging CPU time used since the last sample).
  SimTime now();
  /// An API call of modelled cost `overhead`: charges it (virtual mode) and returns the new host time.
  SimTime api_call(SimTime overhead);
  /// A blocking call has seen work complete at `t`: virtual host time becomes max(now, t).
  void wait_until(SimTime t);
  /// Forgets CPU time used since the last sample (the thread was only polling for unresolved work, or
  /// doing the emulator's own work).
  void discard_cpu_time();
  /// Excludes `dt` of the calling thread's CPU time from its host time (the emulator's own work, timed
  /// by the caller with wall_now(); on one thread wall time bounds CPU time). Applied at the next sample.
  void exclude_cpu_time(SimTime dt);
  /// The calling thread's host time without sampling or charging anything (for log lines).
  SimTime peek();
  /// Wall time since this clock's epoch (steady clock), divided by the dilation in realtime mode.
  SimTime wall_now() const;
  /// Realtime: sleeps until wall_now() reaches `t` (t - now of clock time is (t - now) x D of wall time).
  void sleep_until(SimTime t) const;
  double dilation() const { return options_.dilation; }
  /// Largest host time reached by any thread.
  SimTime max_host_time() const { return SimTime::ns(max_host_ns_.load(std::memory_order_relaxed)); }

 private:
  struct ThreadState;
  ThreadState& thread_state();
  void publish(SimTime t);

  ClockOptions options_;
  uint64_t id_;
  int64_t epoch_wall_ns_;
  std::atomic<int64_t> max_host_ns_{0};
};

}  // namespace genie::sched
