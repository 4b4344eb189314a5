// SPDX-License-Identifier: Apache-2.0
// Timeline: stream-ordered execution of timed operations on the host clock (realtime or virtual).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/sched/clock.hpp"

namespace genie::sched {

class Timeline;

/// One queued operation. Created only when an op cannot complete at submission.
struct Op;

/// A point in a lane's history that later work can depend on: either a finished time or a pending op.
class Dep {
 public:
  Dep() = default;
  static Dep at(SimTime t) { Dep d; d.time_ = t; return d; }
  static Dep on(std::shared_ptr<Op> op);

  /// True when the time of this point is known (its op, if any, has completed).
  bool resolved() const;
  /// End time; valid only when resolved().
  SimTime time() const;
  /// Error of the op this point waits for (ok when none or when it succeeded).
  Status status() const;
  bool empty() const { return !op_ && time_ == SimTime::zero(); }

 private:
  std::shared_ptr<Op> op_;
  SimTime time_ = SimTime::zero();
};

/// What to execute. `run`, when set, replaces `action` + `duration`: it receives the ready time and
/// returns the end time (a collective resolved by the coordinator, a copy timed by the fabric).
struct OpSpec {
  const char* label = "op";                      ///< for traces and logs (static string)
  SimTime duration = SimTime::zero();            ///< modelled duration (ignored when `run` is set)
  std::vector<Dep> deps;                         ///< cross-lane dependencies (events, legacy stream)
  std::function<void()> action;                  ///< moves bytes; runs in stream order
  std::function<Result<SimTime>(SimTime ready)> run;
  bool may_run_inline = true;                    ///< false: always on the lane's worker (host functions)
};

/// Record of a completed op, for the trace.
struct OpRecord {
  const char* label;
  SimTime start, end;
};

/// A stream's execution order. In virtual mode an op whose inputs are all known completes inside
/// submit() (no thread hand-off, no allocation); otherwise it is queued to the lane's worker thread,
/// which waits for its dependencies, runs it and computes its times. In realtime mode every op goes to
/// the worker, which sleeps for modelled durations. Thread-safe.
class Lane {
 public:
  explicit Lane(Timeline& timeline);
  ~Lane();  ///< returns at once; queued work still completes (the worker owns its state)
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;

  /// Submits an op at host time `host_now`; returns the point at which it completes.
  Dep submit(OpSpec spec, SimTime host_now);
  /// The point after everything submitted so far.
  Dep tail() const;
  /// True when all submitted work is complete and (virtual mode) ended by `host_now`.
  bool complete_by(SimTime host_now) const;
  /// True when all submitted work has completed (its times are known).
  bool drained() const;
  /// Blocks (wall time) until all work submitted so far completes; returns its end time or the first error.
  Result<SimTime> synchronize();
  /// Blocks (wall time) at most `timeout` for all submitted work to complete; true if it did.
  bool wait_drained_for(std::chrono::milliseconds timeout);
  /// Completed ops, oldest first (kept only when the timeline records a trace).
  std::vector<OpRecord> records() const;

  struct State;

 private:
  Timeline& timeline_;
  std::shared_ptr<State> state_;
};

/// Shared by the lanes of one process: the clock and the completion signal. No globals: tests build
/// several timelines in one process.
class Timeline {
 public:
  explicit Timeline(ClockOptions clock_options, bool record_trace = false);
  Clock& clock();
  bool record_trace() const;

  /// Waits (wall time) until `pred()` holds; `pred` is re-evaluated after every op completion.
  void wait_for(const std::function<bool()>& pred);
  bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout);
  /// Waits until `d` is resolved; returns its time or its error.
  Result<SimTime> wait(const Dep& d);

  /// The clock and the completion signal, shared with lane workers so they stay valid while a worker
  /// finishes an op even if the Timeline object is gone.
  struct Core;

 private:
  friend class Lane;
  std::shared_ptr<Core> core_;
};

}  // namespace genie::sched
