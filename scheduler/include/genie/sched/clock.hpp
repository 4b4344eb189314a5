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
  /// Virtual mode: host time charged per unit of the thread's CPU time. 1: this machine's CPU stands for the
  /// modelled host's; 0.5: a host twice as fast; 0: CPU time is not charged at all, host time is the modelled
  /// API costs and waits only, so a run's times do not depend on this machine (deterministic).
  double cpu_time_scale = 1.0;
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
  /// CLOCK_MONOTONIC at this clock's epoch (wall_now() is measured from it), in ns.
  int64_t epoch_monotonic_ns() const { return epoch_wall_ns_; }
  /// Virtual mode: every thread's host time is at least `t` from now on (a job that slept as a whole resumes at
  /// the global clock's next event: CoordinatorCore::start_probe). Never lowers an earlier bound.
  void resume_no_earlier(SimTime t);
  /// Largest host time reached by any thread.
  SimTime max_host_time() const { return SimTime::ns(max_host_ns_.load(std::memory_order_relaxed)); }

  /// Per-thread state of this clock (opaque); stable for the thread's lifetime.
  struct ThreadState;
  /// The calling thread's state (created on first use).
  ThreadState* current_thread_state() { return &thread_state(); }
  /// Another thread's host time as it stands now, read without its cooperation (the coordinator client
  /// asks how far a busy thread has got): its last sample plus the CPU time it used since, as read from
  /// `cpu_now_ns` (that thread's CLOCK_THREAD_CPUTIME). A lower bound of the thread's next host time:
  /// while the thread is inside emulator work whose CPU will be excluded, only the last sample counts.
  SimTime estimate(const ThreadState* ts, int64_t cpu_now_ns) const;
  /// Marks emulator work on the calling thread whose CPU time is left out of its host time, up to
  /// end_excluded_work: the region's wall time is excluded (exclude_cpu_time), estimate() does not count it
  /// meanwhile and now() returns the host time at its start. Returns that time (now()). Nests: only the
  /// outermost region excludes. One clock read at each end (virtual mode).
  SimTime begin_excluded_work();
  /// Ends the region; charges `overhead` (the modelled cost of the API call the work was, as api_call does) and
  /// returns the host time.
  SimTime end_excluded_work(SimTime overhead = SimTime::zero());

 private:
  ThreadState& thread_state();
  /// Raises the calling thread's host time to the resume floor.
  void apply_resume_floor(ThreadState& ts);
  /// Charges the CPU time used since the last sample if the sample interval has passed at wall time `wall`
  /// (CLOCK_MONOTONIC); returns the host time.
  SimTime sample(ThreadState& ts, int64_t wall);
  void publish(SimTime t);
  /// Host time charged for `cpu_ns` of thread CPU time (cpu_time_scale, rounded to the nanosecond).
  int64_t charge(int64_t cpu_ns) const;

  ClockOptions options_;
  uint64_t id_;
  int64_t epoch_wall_ns_;
  std::atomic<int64_t> resume_floor_ns_{0};  ///< resume_no_earlier()
  /// Written by every thread whose host time advances, on every call: on a line of its own, away from the options
  /// stream workers read per op (is_virtual()), and from what follows the clock.
  alignas(64) std::atomic<int64_t> max_host_ns_{0};
  char pad_after_max_host_[64 - sizeof(std::atomic<int64_t>)] = {};
};

}  // namespace genie::sched
