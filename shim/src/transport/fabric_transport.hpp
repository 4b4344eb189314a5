// SPDX-License-Identifier: Apache-2.0
// FabricTransport: the ranks of a communicator meet and move bytes over libfabric (tcp, shm, verbs, efa): each call
// starts with a header exchange (arrival and the cross-rank check), then the CPU executor runs the call's Schedule;
// point-to-point calls are tagged messages; split and shrink open endpoints of their own.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "genie/sched/clock.hpp"
#include "transport/fabric_comm.hpp"
#include "transport/schedule_executor.hpp"
#include "transport/transport.hpp"

namespace genie::shim {

class FabricTransport final : public Transport {
 public:
  /// Rank `rank` of the communicator `id` over `fc`'s connected endpoints; `peers` from the bootstrap; `clock` gives
  /// the wall-clock times of the per-collective records.
  FabricTransport(std::unique_ptr<FabricComm> fc, std::vector<RankInfo> peers, int rank, uint64_t id,
                  sched::Clock& clock);
  ~FabricTransport() override;

  /// Opens this rank's endpoints and exchanges addresses with every rank through the bootstrap `session`.
  static Result<std::unique_ptr<FabricTransport>> connect(int rank, std::vector<RankInfo> table, uint64_t id,
                                                          BootstrapSession& session, sched::Clock& clock);

  uint64_t id() const override { return id_; }
  const std::vector<RankInfo>& peers() const override { return peers_; }
  const std::string& provider() const override { return fab_->provider(); }
  bool cross_process() const override { return false; }  // it sends from local buffers: nothing to share

  Result<SimTime> collective(const CollCall& c, uint64_t seq, SimTime ready) override;
  Status p2p(std::vector<P2PMessage>& msgs, SimTime ready) override;
  Result<std::vector<std::vector<uint8_t>>> gather(const std::vector<int>& members, const void* mine,
                                                   size_t len) override;
  void skip_sub_exchanges() override {}  // exchanges are numbered per member list: a rank outside one skips nothing
  Result<std::unique_ptr<Transport>> sub(const std::vector<int>& members, int my_index) override;
  void wake() override {}  // exchanges poll the communicator's state every 50 ms

 private:
  /// The wait policy of an exchange for `what`: abort, dead peers on this host, GENIE_HANG_TIMEOUT.
  FabricWait fabric_wait(std::string what);

  std::unique_ptr<FabricComm> fab_;
  std::vector<RankInfo> peers_;
  int rank_ = 0;
  uint64_t id_ = 0;
  sched::Clock& clock_;
  std::vector<int> pidfds_;  ///< pidfd of each peer in another process on this host (-1 otherwise)
  /// Peers may read a call's buffers in place (shm provider, GENIE_SHIM_FABRIC_SHM_DIRECT; ExecCall::direct): each
  /// call does when every rank's buffers are on memfds (CollCall::shared).
  bool direct_ = false;
  bool direct_logged_[2] = {false, false};  ///< NCCL_DEBUG=INFO said how shm transfers go (messages, in place)
  ScheduleExecutor executor_;               ///< runs each collective's Schedule
  /// Numbers the next control exchange among `members`. Counted per member list, because every member of a list takes
  /// part in each of its exchanges in the same order while other ranks do not (the ranks ncclCommShrink excludes, a
  /// split's other colours); one counter for the whole communicator fell out of step after a shrink.
  std::pair<uint64_t, uint32_t> next_exchange(const std::vector<int>& members);
  std::map<std::vector<int>, uint64_t> exchange_seqs_;
};

/// IPv4 address the real fabric's IP providers bind to (GENIE_SHIM_FABRIC_ADDR, else the bootstrap's).
std::string fabric_addr();
/// GENIE_SHIM_FABRIC_SHM_DIRECT: whether shm transfers may be read in place.
bool fabric_shm_direct();

}  // namespace genie::shim
