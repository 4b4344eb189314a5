// SPDX-License-Identifier: Apache-2.0
// CoordClient: the rank side of the coordinator protocol. One connection per process, opened on first use
// from GENIE_COORDINATOR and GENIE_JOB_SECRET; a thread applies resolutions, answers the coordinator's
// wants with the process's promise (Timeline::injection_floor) and streams op records for the report.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "genie/common/status.hpp"
#include "genie/sched/coord_protocol.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::sched {

/// This process's rank in the job as its launcher says (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID),
/// or -1.
int32_t process_rank_from_environment();

class CoordClient {
 public:
  /// The process's client for `timeline`, connected on the first call (retrying while the coordinator
  /// comes up, up to GENIE_COORDINATOR_TIMEOUT). nullptr when no coordinator is configured or the
  /// connection or its handshake failed (status() says why, naming GENIE_COORDINATOR; the shim then fails
  /// every communicator's initialisation, since its peers would wait for it). A child created by
  /// fork() gets its own connection. Thread-safe.
  static CoordClient* get(Timeline& timeline);
  /// Why get() returned nullptr (ok when no coordinator is configured).
  static Status status();

  /// Announces one rank of a communicator.
  Status join_comm(const coord::CommJoin& j);

  /// The calls of one stream op (a collective, or the messages of one point-to-point batch). Its external
  /// op is resolved (Lane injection floor = the latest end) only when all of them are.
  class Batch {
   public:
    Batch() = default;
    explicit operator bool() const { return state_ != nullptr; }
    struct State;

   private:
    friend class CoordClient;
    std::shared_ptr<State> state_;
  };
  /// Sends the calls (Coll or P2p messages) of one op and gates `op` on their resolution.
  Result<Batch> submit(const std::vector<coord::Message>& calls, const ExternalOp& op);
  /// Waits (wall time) until every call of `b` is resolved; returns their outcomes in submission order.
  /// `should_stop` is polled every 50 ms and after wake_waiters() (abort, dead peers): when it returns an error the wait
  /// gives up with it. kRemote when the coordinator connection is lost.
  Result<std::vector<coord::Resolved>> wait(const Batch& b, const std::function<Status()>& should_stop);
  /// Makes every wait() look at its `should_stop` now (after an abort), not at its next poll.
  void wake_waiters();

  /// Sends Bye and the last records (at exit).
  void bye(int exit_code);

  ~CoordClient();
  CoordClient(const CoordClient&) = delete;
  CoordClient& operator=(const CoordClient&) = delete;

  struct Impl;

 private:
  explicit CoordClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace genie::sched
