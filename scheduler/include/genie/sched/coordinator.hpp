// SPDX-License-Identifier: Apache-2.0
// The coordinator: one global virtual clock and one network simulation for a whole job. Rank processes
// report collectives with their ready times; the coordinator resolves them conservatively in netsim, so
// concurrent collectives of different communicators contend on shared links, and records the job for
// the report.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/link_usage.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"
#include "genie/sched/coord_protocol.hpp"

namespace genie::sched {

struct CoordinatorOptions {
  std::shared_ptr<const netsim::Topology> topology;
  std::string topology_name;                      ///< for the report
  netsim::EngineKind engine = netsim::EngineKind::kFlow;
  netsim::NcclEnv nccl_env;                       ///< NCCL_ALGO, NCCL_PROTO, ... of the job
  int gpus_per_node = 8;                          ///< GPUs of one emulated node of `topology`
  /// Processes the job has (`genie run -n`): nothing is resolved before this many have said Hello, since
  /// one not yet connected could still inject traffic at any time. 0: do not wait.
  int expected_processes = 0;
  bool record_link_usage = true;                  ///< netsim link-utilisation samples for the report
  size_t max_records = 2000000;                   ///< op records kept for the trace (beyond: counted only)
  /// Resolved calls kept with every detail for the report; later ones are kept as totals per communicator and
  /// collective only (JobRecord::collectives_beyond), so the coordinator's memory does not grow with the job's
  /// length: ~0.4 KB per call kept (docs/BENCHMARKS.md, soak).
  size_t max_collective_records = 1000000;
};

/// One process (connection) as the coordinator sees it.
struct ProcessInfo {
  int index = 0;
  int32_t pid = 0;
  int32_t process_rank = -1;
  int32_t gpus = 0;
  std::string node, host;
  int node_index = -1;   ///< emulated node of device 0 (assigned when placement is fixed)
  bool alive = true;
  bool said_bye = false;
  bool realtime = false;
  int64_t record_offset_ns = 0;  ///< added to its records: realtime processes' clocks start at different times
  int exit_code = 0;
};

/// A resolved collective (or point-to-point message), as the report shows it.
struct CollectiveRecord {
  uint64_t comm = 0;
  uint64_t seq = 0;      ///< collective: call number; p2p: message index on (src, dst)
  bool p2p = false;
  int src = 0, dst = 0;  ///< p2p: communicator ranks
  netsim::Collective collective = netsim::Collective::kAllReduce;
  netsim::DataType datatype = netsim::DataType::kFloat32;
  netsim::RedOp redop = netsim::RedOp::kSum;
  int root = 0;
  uint64_t count = 0;
  int min_ctas = 0, max_ctas = 0;  ///< the call's own configuration (ncclCollConfig_t; 0: none)
  std::string algo;                ///< its algorithm selection (NCCL_ALGO syntax; "" : none)
  uint64_t bytes = 0;    ///< payload bytes, as nccl-tests prints size
  int nranks = 0;
  netsim::Tuning tuning;
  SimTime start, end;
  std::vector<int64_t> ready_ns;  ///< per communicator rank (p2p: sender, receiver)
  SimTime clamped_by;             ///< > 0 when the start was later than the ranks said (a late arrival)
  std::string error;              ///< non-empty when the call failed
};

/// A communicator as the coordinator sees it.
struct CommInfo {
  uint64_t key = 0;
  uint64_t parent = 0;
  int nranks = 0;
  std::vector<int> process;   ///< per comm rank: process index (-1 until joined)
  std::vector<int> cuda_dev;  ///< per comm rank
  std::vector<int> gpu;       ///< per comm rank: global GPU on the topology (-1 until placed)
  int joined = 0;
  std::string placement_error;
};

/// One op record of a process, with the label resolved.
struct ProcessOpRecord {
  coord::OpRecord op;
};

/// Everything the report needs, owned by the coordinator.
struct JobRecord {
  std::vector<ProcessInfo> processes;
  std::map<uint64_t, CommInfo> comms;
  std::vector<CollectiveRecord> collectives;  ///< in resolution order, the first max_collective_records calls
  /// Totals of the calls resolved after `collectives` was full, per (communicator, collective, nranks).
  struct CallTotals {
    uint64_t calls = 0, bytes = 0, failed = 0;
    double time_us = 0;          ///< sum of call durations
    double algbw_sum_gbps = 0;   ///< sum of bytes / duration (the report scales it to bus bandwidth)
    SimTime last_end;
  };
  std::map<std::tuple<uint64_t, netsim::Collective, int>, CallTotals> collectives_beyond;
  uint64_t resolved_calls = 0;  ///< every resolved call, kept in `collectives` or not
  /// Link usage covers the job up to here once calls are no longer kept in detail (zero: the whole job).
  SimTime link_usage_until;
  std::vector<std::vector<std::string>> labels;           ///< per process
  std::vector<std::vector<coord::OpRecord>> op_records;   ///< per process
  uint64_t dropped_op_records = 0;
  std::vector<netsim::LinkUsageSample> link_usage;
  uint64_t relaxed_steps = 0;     ///< times the stall rule advanced the clock without every promise
  uint64_t asleep_steps = 0;      ///< times the clock advanced past held promises because the whole job slept
  uint64_t bounds_sent = 0;       ///< calls whose lower bound of the end was sent to their ranks (coord::Bound)
  uint64_t late_arrivals = 0;     ///< collectives whose start was clamped to the global clock
  SimTime max_lateness;
  uint64_t protocol_errors = 0;   ///< malformed / unauthenticated frames dropped
};

/// The coordinator's logic, without sockets: feed it messages, it emits messages through `send`.
/// Deterministic: the same messages (in any interleaving that respects each process's own order) give
/// the same resolutions, because collectives are submitted to netsim in (start, comm, seq) order and only
/// once no process can inject anything earlier (the safe time). Not thread-safe.
class CoordinatorCore {
 public:
  using Send = std::function<void(int conn, const coord::Message&)>;
  CoordinatorCore(CoordinatorOptions options, Send send);
  ~CoordinatorCore();

  /// An authenticated process joined on connection `conn` (the server checked its MAC).
  void on_hello(int conn, const coord::Hello& h);
  /// Any later message of `conn`.
  void on_message(int conn, const coord::Message& m);
  /// The connection closed; `clean` after a Bye. A process that vanished fails its pending collectives.
  void on_disconnect(int conn);
  /// Advances the global simulation as far as every process's promise allows, sends Resolved for every
  /// call that finished and Want to the processes that hold the clock back. Call after each batch of
  /// messages.
  void pump();
  /// The clock has not moved for the stall grace while work waits: every process holding it back is
  /// assumed to inject nothing before the next event (logged, counted in the report). Returns whether
  /// that let the clock advance.
  bool relax_stall();
  /// The clock is held although work waits: asks every process whether all its threads are asleep (Probe). If
  /// every answer says so, nothing can happen before the clock's next event, so the processes holding it resume
  /// no earlier than that event (Resume) and the clock moves on: exact, and counted as an asleep step. False when
  /// a round is already out (unless `restart`: a new round voids it) or nothing holds the clock.
  bool start_probe(bool restart = false);
  /// True when something waits to be resolved (a pending collective, a running simulation).
  bool has_pending_work() const;
  /// Processes holding the clock back right now, with their promises (for the stall warning).
  std::string blockers() const;
  /// Their pids, for those on this host (the others' pids mean nothing here).
  std::vector<int32_t> local_blocker_pids() const;
  /// Global clock: everything before it is resolved.
  SimTime safe_time() const;
  /// The job's records (after the job ended: complete). Link usage is collected here (a copy of every
  /// sample so far: not for per-message use).
  JobRecord& record();
  /// record().asleep_steps without gathering the record (its link usage is copied): for the server's polling loop.
  uint64_t asleep_steps() const;
  /// Counts a malformed or unauthenticated frame (JobRecord::protocol_errors) without collecting the record.
  void note_protocol_error();
  /// Calls resolved so far.
  uint64_t resolved_calls() const;
  /// Processes still in the job: connected and not yet said Bye.
  int live_processes() const;
  int registered_processes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The coordinator behind a TCP listener: a thread runs one poll loop over every connection, checks each
/// connection's MAC before anything else, drops malformed, oversized, replayed or unauthenticated frames
/// (logged; the job goes on) and drives a CoordinatorCore.
class CoordinatorServer {
 public:
  struct Options {
    CoordinatorOptions core;
    std::array<uint8_t, 16> secret{};
    std::string bind_addr = "127.0.0.1";
    uint16_t port = 0;  ///< 0: any free port
    std::chrono::milliseconds stall_grace{2000};
    bool show_progress = false;  ///< one updating line on stderr (terminals only)
  };
  /// Binds and starts serving. Errors: kSystem (cannot bind).
  static Result<std::unique_ptr<CoordinatorServer>> start(Options options);
  ~CoordinatorServer();  ///< stops the thread
  /// "127.0.0.1:PORT"
  std::string address() const;
  uint16_t port() const;
  /// Waits (wall time, at most `timeout`) until the job is over: at least the expected number of processes
  /// joined and every one of them has left. True when it is.
  bool wait_done(std::chrono::milliseconds timeout);
  /// Stops serving and returns the job's records (call once, after the ranks exited).
  JobRecord finish();

 private:
  CoordinatorServer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// 32 hex digits <-> 16 bytes (GENIE_JOB_SECRET).
std::string secret_to_hex(const std::array<uint8_t, 16>& s);
Result<std::array<uint8_t, 16>> secret_from_hex(const std::string& hex);
/// 16 random bytes from getrandom().
Result<std::array<uint8_t, 16>> random_secret();

}  // namespace genie::sched
