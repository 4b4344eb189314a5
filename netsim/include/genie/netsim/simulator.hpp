// SPDX-License-Identifier: Apache-2.0
// Simulator: times Schedules on a Topology with the analytical or the flow engine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/link_usage.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {

/// Which network model times transfers.
enum class EngineKind {
  kAnalytical,  ///< closed-form alpha-beta per transfer, congestion-unaware (divides links by channel count)
  kFlow,        ///< max-min fair sharing of every link among all active flows, incremental solver
};
Result<EngineKind> parse_engine(const std::string& s);
const char* engine_name(EngineKind e) noexcept;

/// How far a running simulation is (SimulatorOptions::progress).
struct SimProgress {
  uint64_t done = 0;   ///< units (ops, or symmetry classes of compact schedules) finished
  uint64_t total = 0;  ///< units of every submitted collective not yet released
  SimTime now;         ///< simulated time
  double wall_s = 0;   ///< wall seconds since the first run()/run_until() of this Simulator
};

struct SimulatorOptions {
  EngineKind engine = EngineKind::kFlow;
  /// Apply NCCL protocol costs: per-step latency of the protocol on the path's link class (instead of the
  /// bare path latency, when larger), wire overhead (LL x2, LL128 128/120), per-channel bandwidth caps and
  /// the algorithm's base latency. Off: transfers cost exactly path latency + bytes / rate.
  bool protocol_overheads = true;
  /// Record per-link utilisation samples (costs memory proportional to events x links touched).
  bool record_link_usage = false;
  /// kAnalytical only: every transfer has its route to itself (links not divided among the channels). No transfer
  /// of either engine goes faster (a flow's rate is at most its bottleneck link's capacity and its rate bound), and a
  /// later predecessor never makes an op end earlier, so this times a schedule no later than it can end in any
  /// traffic (duration_lower_bound).
  bool alone = false;
  /// Memory this simulation may use, in bytes (0: no limit). Before a collective's per-op state is built its
  /// size is estimated (estimate_state_bytes), and while the engine runs the process's resident set is
  /// checked every few thousand events: past the limit, submit() or run() fail with OutOfMemory naming the
  /// collective, the estimate and what helps, instead of the process meeting the OOM killer.
  uint64_t max_memory_bytes = 0;
  /// Called from run()/run_until() about every `progress_interval_s` seconds of wall time while ops remain
  /// (an interval <= 0: at every check), for long simulations.
  std::function<void(const SimProgress&)> progress;
  double progress_interval_s = 1.0;
};

/// Start and end of one Step of a schedule.
struct StepTiming {
  SimTime start;
  SimTime end;
};

/// Timing of one submitted collective.
struct CollectiveTiming {
  SimTime start;                ///< submission time
  SimTime end;                  ///< when its last op finished
  std::vector<StepTiming> ops;  ///< indexed like Schedule::ops (of expand_schedule() for a compact schedule)
  /// A compact schedule timed by symmetry (`period` > 0, `ops` empty): member p of compact op k, i.e. op
  /// k * members + p of the explicit form, has the timing classes[k * period + p % period].
  std::vector<StepTiming> classes;
  uint32_t period = 0;   ///< symmetry period (divides `members`); 0 when `ops` holds every op
  uint32_t members = 0;  ///< positions per compact op (ranks)
  SimTime duration() const { return end - start; }
  /// Number of ops of the explicit form.
  size_t num_ops() const { return period > 0 ? classes.size() / period * members : ops.size(); }
  /// Timing of op `i` of the explicit form, however the collective was timed.
  StepTiming op(size_t i) const { return period > 0 ? classes[i / members * period + i % members % period] : ops[i]; }
};

/// Owns a clock, an engine and one network model; times any number of schedules, which contend for links
/// in the flow engine (different collectives, communicators and jobs alike). Not thread-safe; several
/// Simulators may live in one process.
///
/// Compact schedules (ScheduleForm::kCompact) are timed by symmetry: one transfer per symmetry class and
/// step instead of one per rank, with the same times as their explicit form (engine/quotient_plan.hpp
/// states when two members are interchangeable). In the flow engine a compact collective whose links
/// another running collective also uses is expanded at that moment (each class continues as its members,
/// from the same state), so contention stays exact. With record_link_usage compact schedules run explicit.
class Simulator {
 public:
  Simulator(std::shared_ptr<const Topology> topo, SimulatorOptions opts);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// Queues `schedule` to start at `start` (>= now()). Returns a handle for timing(). Errors:
  /// InvalidArgument when a rank is placed on a GPU the topology lacks or an NVLS op has no NVSwitch.
  Result<int> submit(std::shared_ptr<const Schedule> schedule, SimTime start);
  /// Runs until every submitted schedule has finished.
  Status run();
  /// Incremental use (the coordinator's global clock): processes every event at or before `limit`, so
  /// each collective whose end is <= `limit` finishes (and its finish callback runs). Work submitted later
  /// must start at or after now(), which never passes `limit`.
  Status run_until(SimTime limit);
  /// Absolute time of the next event (a transfer finishing or changing phase, a submitted collective
  /// starting), or nullopt when nothing is pending.
  std::optional<SimTime> next_event_time();
  /// Called once per collective, from inside run()/run_until(), when its last op finishes.
  using FinishCallback = std::function<void(int handle, SimTime end)>;
  void set_finish_callback(FinishCallback cb);
  /// True once the collective's last op finished.
  bool finished(int handle) const;
  /// Frees the per-op state of a finished collective (its timing() is gone afterwards; start and end stay
  /// in finish callbacks and the caller's records), so long runs keep flat memory; a later submit() may
  /// reuse the handle. InvalidArgument when it has not finished.
  Status release(int handle);
  /// Timing of a finished (or running) collective that has not been released.
  const CollectiveTiming& timing(int handle) const;
  /// Link utilisation samples recorded so far (SimulatorOptions::record_link_usage).
  const std::vector<LinkUsageSample>& link_usage() const;
  /// Stops recording link usage (the samples so far stay; compact schedules submitted later run compact):
  /// a long run's samples, a few per transfer, would otherwise grow without bound.
  void stop_link_usage();
  SimTime now() const;
  const Topology& topology() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Bytes the Simulator's per-op state for `schedule` takes (dependency lists, states, timings, model entries):
/// what SimulatorOptions::max_memory_bytes is checked against. `period`: the symmetry period a compact
/// schedule is timed with (0: it runs explicit, i.e. expanded, and the explicit DAG is counted too).
uint64_t estimate_state_bytes(const Schedule& schedule, uint32_t period);

/// Times one schedule alone from t = 0. Convenience over Simulator.
Result<CollectiveTiming> simulate_schedule(std::shared_ptr<const Topology> topo, const Schedule& schedule,
                                           SimulatorOptions opts);

/// A duration `schedule` cannot beat under either engine, whatever other traffic shares its links: its time with
/// every transfer alone on its route (SimulatorOptions::alone), less a margin of 1 us + 0.1% for the engines'
/// rounding of event times. What the coordinator tells a call's ranks as soon as the call is complete, so that
/// their queries before it answer at once (docs/coordinator.md, "Bound").
Result<SimTime> duration_lower_bound(std::shared_ptr<const Topology> topo, const Schedule& schedule,
                                     bool protocol_overheads = true);

}  // namespace genie::netsim
