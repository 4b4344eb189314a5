// SPDX-License-Identifier: Apache-2.0
// CallTimer: when a communicator's call ends, chosen once when the communicator is made: netsim in this process
// (NetsimTimer), the job's coordinator on the global virtual clock (CoordinatorTimer), or the wall clock while real
// bytes cross the real fabric (WallClockTimer). The Communicator holds one and never asks which.
#pragma once

#include <memory>
#include <vector>

#include "comm_call.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/sched/clock.hpp"
#include "genie/sched/coord_client.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::shim {

class CallTimer {
 public:
  virtual ~CallTimer() = default;

  /// The communicator this timer serves; called once, before any call below. `owner` outlives the timer.
  void attach(CommState& owner) { owner_ = &owner; }

  /// Calls are timed outside this process (the coordinator): their stream ops are external ops of their lane
  /// (sched::OpSpec::external), and the enqueuing thread injects traffic (Timeline::register_injector).
  virtual bool external() const { return false; }
  /// Announces the communicator where its calls are timed (the coordinator), once, when it is made.
  virtual Status join(const sched::coord::CommJoin& /*j*/) { return Status::ok(); }
  /// A collective is about to meet its peers with this rank ready at `ready` (`lane`: its stream op's handle). The
  /// coordinator learns of it here. One call of a communicator is timed at a time (begin, then end).
  virtual Status begin_collective(const CollCall& /*c*/, uint64_t /*seq*/, SimTime /*ready*/,
                                  const sched::ExternalOp& /*lane*/) {
    return Status::ok();
  }
  /// The collective has moved its bytes; this rank was ready at `ready`, every rank by `start`. Returns its end.
  virtual Result<SimTime> end_collective(const CollCall& c, SimTime ready, SimTime start, const WaitWhat& what) = 0;
  /// As begin_collective, for a point-to-point batch (its messages numbered, not yet delivered).
  virtual Status begin_p2p(const std::vector<P2PMessage>& /*msgs*/, SimTime /*ready*/,
                           const sched::ExternalOp& /*lane*/) {
    return Status::ok();
  }
  /// The batch has been delivered (each message's `moved` and `peer_ready` set). Returns its end.
  virtual Result<SimTime> end_p2p(const std::vector<P2PMessage>& msgs, SimTime ready) = 0;
  /// The communicator was aborted: waits look at once.
  virtual void wake() {}

 protected:
  CommState* owner_ = nullptr;
};

/// Times calls with netsim in this process (CommTiming: the call's Schedule on the job's topology). With the
/// realtime clock it also sleeps until the modelled end.
class NetsimTimer final : public CallTimer {
 public:
  explicit NetsimTimer(sched::Clock& clock) : clock_(clock) {}
  Result<SimTime> end_collective(const CollCall& c, SimTime ready, SimTime start, const WaitWhat& what) override;
  Result<SimTime> end_p2p(const std::vector<P2PMessage>& msgs, SimTime ready) override;

 private:
  /// Virtual clock: start + duration. Realtime: `duration` after every rank arrived (now, or `start` if later),
  /// unless moving the bytes took longer than the modelled fabric would; sleeps until then.
  SimTime finish_time(SimTime start, SimTime duration);
  sched::Clock& clock_;
};

/// Times calls on the job's global virtual clock: each call is sent to the coordinator when it starts and its end
/// is what the coordinator resolves once every rank's call has reached it.
class CoordinatorTimer final : public CallTimer {
 public:
  explicit CoordinatorTimer(sched::CoordClient& coord) : coord_(coord) {}
  bool external() const override { return true; }
  Status join(const sched::coord::CommJoin& j) override { return coord_.join_comm(j); }
  Status begin_collective(const CollCall& c, uint64_t seq, SimTime ready, const sched::ExternalOp& lane) override;
  Result<SimTime> end_collective(const CollCall& c, SimTime ready, SimTime start, const WaitWhat& what) override;
  Status begin_p2p(const std::vector<P2PMessage>& msgs, SimTime ready, const sched::ExternalOp& lane) override;
  Result<SimTime> end_p2p(const std::vector<P2PMessage>& msgs, SimTime ready) override;
  void wake() override { coord_.wake_waiters(); }

 private:
  /// Waits for the coordinator's outcome of the pending batch (abort and the hang timeout end the wait); returns the
  /// latest end. NCCL_DEBUG=INFO shows what the coordinator chose for each new shape.
  Result<SimTime> wait(const WaitWhat& what);
  sched::CoordClient& coord_;
  sched::CoordClient::Batch batch_;  ///< the call between begin and end
};

/// The real fabric: a call ends when its bytes have crossed it (wall-clock time, realtime mode).
class WallClockTimer final : public CallTimer {
 public:
  explicit WallClockTimer(sched::Clock& clock) : clock_(clock) {}
  Result<SimTime> end_collective(const CollCall&, SimTime ready, SimTime, const WaitWhat&) override {
    return max(clock_.wall_now(), ready);
  }
  Result<SimTime> end_p2p(const std::vector<P2PMessage>&, SimTime ready) override {
    return max(clock_.wall_now(), ready);
  }

 private:
  sched::Clock& clock_;
};

}  // namespace genie::shim
