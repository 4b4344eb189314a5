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
  /// The op this point waits for, as a number unique in the process (0 for a known time): two points are the same
  /// pending work when equal.
  uint64_t identity() const;
  /// Lower bound of this point's time in ns: time() once resolved, else what the lane its op is queued on gives:
  /// its injection floor, the start of the op its worker runs, or the lower bound of the op on another lane its
  /// worker waits for (INT64_MAX when all it waits on is an external resolution).
  /// Waits across lanes are followed at most `depth` levels deep (past that only a lane's floor counts).
  int64_t lower_bound_ns(int depth = kWaitDepth) const;
  /// lower_bound_ns, and also what the coordinator said of the external op its lane runs (ExternalOp::bound_end):
  /// for a query's answer, not for an injection floor (the coordinator decides that end, and lowers the promise of
  /// the process it wakes with the resolution).
  int64_t end_lower_bound_ns(int depth = kWaitDepth) const;
  static constexpr int kWaitDepth = 4;

 private:
  std::shared_ptr<Op> op_;
  SimTime time_ = SimTime::zero();
};

/// What a stream op is, for the report and trace. kRange: a host thread's annotated range (an NVTX push/pop or
/// start/end), attributed to the thread's current device.
enum class OpKind : uint8_t {
  kKernel = 0, kCopy = 1, kMemset = 2, kCollective = 3, kP2p = 4, kHostWait = 5, kOther = 6, kRange = 7
};

class ExternalOp;

/// What a device was busy with, for utilization (NVML's utilization.gpu and utilization.memory): kernels, memsets
/// (a kernel on a GPU) and collectives (kCompute, as the report's compute), copies (kMemory: the copy engines). Host
/// waits, host functions and annotated ranges count as neither.
enum class BusyClass : uint8_t { kCompute = 0, kMemory = 1 };

/// Record of a completed op, for the trace.
struct OpRecord {
  const char* label;
  SimTime start, end;
  OpKind kind = OpKind::kOther;
  uint32_t activity = 0;  ///< OpSpec::activity (in the padding after `kind`)
  uint64_t bytes = 0, comm = 0, seq = 0;
  /// What a replay needs to rebuild the op's dependencies (Chakra execution traces, docs/chakra.md), valid with
  /// kRecordSubmitted: the host time it was submitted at (Lane::submit's `host_now`), the latest end among its
  /// cross-lane dependencies (OpSpec::deps; zero when none) and the submitting host thread (numbered as
  /// Timeline::record_host numbers threads). Its start is max(the lane's previous end, submit, deps_end).
  SimTime submit, deps_end;
  uint32_t thread = 0;
  uint8_t flags = 0;  ///< kRecordSubmitted | kRecordPart
};
/// OpRecord::flags: submit, deps_end and thread are known.
inline constexpr uint8_t kRecordSubmitted = 1;
/// OpRecord::flags: a part (OpSpec::parts) of the op recorded just before it on the same lane.
inline constexpr uint8_t kRecordPart = 2;

/// Watches ops as they complete, for profilers (fakecuda's ActivitySink, which the CUPTI drop-in implements). Only
/// ops submitted with a non-zero OpSpec::activity are reported. Called on the thread that completes the op (the
/// enqueuing thread for an op completed inline, else the lane's worker) with the lane's lock held: it must return
/// quickly and never call into the timeline or its lanes.
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  /// `op` ended on the lane of (`device`, `stream_id`) (Lane::set_identity); `parts` (`n_parts` records, null when
  /// none) are its parts (OpSpec::parts), each with its own times and its own `activity`.
  virtual void op_completed(int device, uint32_t stream_id, const OpRecord& op, const OpRecord* parts,
                            size_t n_parts) noexcept = 0;
};

/// What to execute. `run`, when set, replaces `action` + `duration`: it receives the ready time and the lane's
/// external-op handle (empty unless `external`) and returns the end time (a collective resolved by the coordinator,
/// a copy timed by the fabric).
struct OpSpec {
  const char* label = "op";                      ///< for traces and logs (static string, or a kernel's name)
  SimTime duration = SimTime::zero();            ///< modelled duration (ignored when `run` is set)
  std::vector<Dep> deps;                         ///< cross-lane dependencies (events, legacy stream)
  std::function<void()> action;                  ///< moves bytes; runs in stream order
  std::function<Result<SimTime>(SimTime ready, const ExternalOp& lane)> run;
  bool may_run_inline = true;                    ///< false: always on the lane's worker (host functions)
  /// The op's end is decided outside this process (a collective resolved by the coordinator): until it
  /// reaches the coordinator, the lane's injection floor holds its ready time (see ExternalOp).
  bool external = false;
  OpKind kind = OpKind::kOther;
  /// Non-zero: an OpObserver follows this op (an id it gave at submission, e.g. a CUPTI correlation), and the
  /// timeline reports its completion to the observer (Timeline::set_op_observer).
  uint32_t activity = 0;
  uint64_t bytes = 0;  ///< copies, memsets, collectives
  uint64_t comm = 0;   ///< collectives: communicator key
  uint64_t seq = 0;    ///< collectives: call number
  /// An op made of parts (a CUDA graph launch runs its nodes): `run` appends one record per part (a kernel, a copy,
  /// a collective of the graph) with its own start and end, and the lane records and counts them like ops of its
  /// own after the op itself, so the trace shows a graph's kernels and the report counts them as compute.
  std::shared_ptr<std::vector<OpRecord>> parts;
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
  /// Moves the completed-op records out (oldest first); later calls return only newer ones.
  std::vector<OpRecord> take_records();
  /// Who this lane is, for records: the CUDA device and a per-process stream number.
  void set_identity(int device, uint32_t stream_id);
  /// Lower bound of when this lane could next put traffic on the network (SimTime::max(): not before
  /// something the coordinator resolves). Only lanes that carried external ops have a finite floor.
  SimTime injection_floor() const;

  struct State;

 private:
  Timeline& timeline_;
  std::shared_ptr<State> state_;
};

/// The external op (OpSpec::external) the calling lane worker is running, for whoever resolves it. The
/// lane's injection floor says when this lane could next put traffic on the network: the op's ready time
/// until gate(), nothing (gated on the resolution) after, and `end` once resolve(end) is called — which
/// the resolver must do before it lets the op finish, so the floor never claims more than is known.
class ExternalOp {
 public:
  /// Empty: every call does nothing (the handle a non-external op's run() receives).
  ExternalOp() = default;
  /// The handle of the external op `lane` runs (made by the lane's worker; Lane::State is private to it).
  explicit ExternalOp(std::shared_ptr<Lane::State> lane) : state_(std::move(lane)) {}
  explicit operator bool() const { return state_ != nullptr; }
  /// The op has been handed to the coordinator: its traffic is the coordinator's to time.
  void gate() const;
  /// The coordinator resolved the op at `end`: later ops of the lane start no earlier.
  void resolve(SimTime end) const;
  /// The coordinator knows the op ends no earlier than `lb` (coord::Bound): a query about it or a later op of the
  /// lane at an earlier time answers not-ready at once (Dep::end_lower_bound_ns). The largest bound given counts,
  /// until the op ends.
  void bound_end(SimTime lb) const;
  /// The op will inject no earlier than `t` (its ready time, known again after it waited outside the
  /// timeline, e.g. for its turn in a communicator's issue order while gate()d).
  void hold(SimTime t) const;

 private:
  std::shared_ptr<Lane::State> state_;
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
  /// Waits until `d` is resolved; returns its time or its error. An injector thread (register_injector)
  /// waiting here puts no traffic on the network until `d` resolves, which injection_floor() accounts for.
  Result<SimTime> wait(const Dep& d);
  /// Waits at most `timeout` until it is known whether `d` ends by `t` (a non-blocking query at host time `t`):
  /// kResolved when `d` resolved (its time answers), kNotBy when it cannot end by `t` (its lower bound is past `t`;
  /// for work only the coordinator can resolve, once the coordinator has resolved everything ending before `t`:
  /// note_resolved_before, so work it ends exactly at `t` counts as not ended), kUnknown after `timeout`.
  /// An injector thread promises `t` meanwhile: it goes on at `t` whatever the answer.
  enum class Known { kResolved, kNotBy, kUnknown };
  Known wait_until_known(const Dep& d, SimTime t, std::chrono::milliseconds timeout);
  /// The coordinator has resolved every op of this process that ends before `t` (called in order with the
  /// resolutions, after those it sent before telling so).
  void note_resolved_before(SimTime t);

  /// The calling thread may inject traffic (it enqueues collectives or creates communicators). Cheap after
  /// the first call on a thread.
  void register_injector();
  /// Whether the calling thread has called register_injector() on this timeline.
  bool is_injector() const;
  /// Lower bound of the virtual time at which any injector thread or lane of this timeline could next put
  /// traffic on the network: min over injector threads (one blocked in wait(): the time it will wake at, or
  /// nothing while that is unresolved; one in wait_until_known(): no later than the query's time; any other, running or asleep outside Genie: its host time as it
  /// stands, read from its CPU clock) and lanes (Lane::injection_floor). SimTime::max() when nothing constrains.
  SimTime injection_floor();
  /// The earliest host time of a query waiting in wait_until_known (SimTime::max() when none): when the process
  /// sleeps as a whole, the earliest time one of its threads goes on before the clock's next event, and a thread
  /// asleep outside Genie may be waiting for it (CoordinatorCore::start_probe).
  SimTime query_floor();
  /// Called whenever the injection floor may have risen without a thread running: an injector thread starts a wait
  /// (called from it), a lane's external op is handed to the coordinator or held (ExternalOp::gate, hold), so a
  /// reporter can tell the coordinator promptly. Set once, before traffic starts.
  void set_wait_listener(std::function<void()> listener);
  /// Records a host-side span of the calling thread (an API call, a blocking wait, an annotated range) when the
  /// timeline records a trace; drained with the lanes' records as `device` (-1: none, the process's first
  /// rank), stream kHostStreamBase + the thread's number. `label` must outlive the drain (a static or
  /// interned string: labels are keyed by address).
  void record_host(const char* label, SimTime start, SimTime end, OpKind kind, int device = -1);
  static constexpr uint32_t kHostStreamBase = 0x80000000u;
  /// Drains every lane's completed-op records: fn(device, stream id, record).
  void drain_records(const std::function<void(int, uint32_t, const OpRecord&)>& fn);
  /// Sets (nullptr: clears) the observer told of every completed op that carries an OpSpec::activity. It must
  /// outlive every lane of this timeline (the CUPTI drop-in's lives for the process). Thread-safe.
  void set_op_observer(OpObserver* observer);
  /// Time within [from, to) during which at least one op of class `cls` ran on a lane of `device` (ops that have
  /// completed; overlapping ops on different lanes count once per bucket). Kept in buckets of kBusyBucket for
  /// the last kBusyBuckets of them per lane, so the answer is exact to a bucket's resolution and only for windows
  /// within kBusyHistory of the lanes' latest op. Thread-safe; takes each lane's lock briefly.
  SimTime busy_time(int device, BusyClass cls, SimTime from, SimTime to) const;
  /// Whether any op of any class has run on a lane of `device` (a live lane: destroyed streams are forgotten).
  bool device_ran_ops(int device) const;
  static constexpr SimTime kBusyBucket = SimTime::ms(10);
  static constexpr int kBusyBuckets = 256;
  /// kBusyBucket x kBusyBuckets.
  static constexpr SimTime kBusyHistory = SimTime::ms(10 * 256);
  /// Undrained records are capped (2^19 per stream and for the host spans, so a trace nobody collects cannot
  /// grow without bound); how many were counted instead of kept.
  uint64_t dropped_records() const;

  /// The clock and the completion signal, shared with lane workers so they stay valid while a worker
  /// finishes an op even if the Timeline object is gone.
  struct Core;

 private:
  friend class Lane;
  std::shared_ptr<Core> core_;
};


}  // namespace genie::sched
