// SPDX-License-Identifier: Apache-2.0
// Transport: how the ranks of one communicator meet at a call and move its bytes, chosen once when the communicator
// is made (NCCL's ncclTransport): shared memory and peer memory between the processes of one host
// (ShmTransport), or libfabric endpoints (FabricTransport). The Communicator holds one and never asks which.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "comm_call.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"

namespace genie::shim {

class Transport {
 public:
  virtual ~Transport() = default;

  /// The communicator this transport serves; called once, before any call below. `owner` outlives the transport.
  void attach(CommState& owner) { owner_ = &owner; }

  /// The communicator's id in messages (random, the same on every rank).
  virtual uint64_t id() const = 0;
  /// The communicator's ranks as the bootstrap found them (index = rank).
  virtual const std::vector<RankInfo>& peers() const = 0;
  /// The libfabric provider carrying the bytes, or "" for shared memory.
  virtual const std::string& provider() const = 0;
  /// True when a peer in another process reads this rank's buffers where they are (peer memory): buffers must be
  /// published as peers map them.
  virtual bool cross_process() const = 0;

  /// Collective call number `seq` of this communicator, this rank ready at `ready`: meets every rank, checks that
  /// they all made the same call, then moves and reduces its bytes (unless GENIE_DATA=none). Returns when every
  /// rank was ready (the call's start). Errors: kInvalidUsage (the ranks made different calls), kRemote (a peer
  /// failed or exited, the communicator was aborted, the hang timeout passed).
  virtual Result<SimTime> collective(const CollCall& c, uint64_t seq, SimTime ready) = 0;
  /// Delivers a point-to-point batch (sends and receives in any order; never blocks on one message), setting each
  /// message's `moved` and `peer_ready`. Errors as collective(); kInvalidUsage when a peer sent more than a receive
  /// posted.
  virtual Status p2p(std::vector<P2PMessage>& msgs, SimTime ready) = 0;
  /// Small all-gather among `members` (ranks of this communicator, the same list on each): each member's `len`
  /// bytes (<= kGatherBytes), in `members` order. For split and shrink.
  virtual Result<std::vector<std::vector<uint8_t>>> gather(const std::vector<int>& members, const void* mine,
                                                           size_t len) = 0;
  /// This rank takes part in a split's first exchange but gets no communicator (NCCL_SPLIT_NOCOLOR): it keeps its
  /// exchange numbering in step with the members' two sub-exchanges (sub()).
  virtual void skip_sub_exchanges() = 0;
  /// The transport of the sub-communicator of `members` (parent ranks; this rank is members[my_index]). Every
  /// member calls it; it exchanges twice through this transport.
  virtual Result<std::unique_ptr<Transport>> sub(const std::vector<int>& members, int my_index) = 0;
  /// The communicator was aborted or failed: waits look at once.
  virtual void wake() = 0;

 protected:
  CommState* owner_ = nullptr;
};

/// A pidfd for each peer in another process on this host (-1: this process, another host, or none to be had).
std::vector<int> open_peer_pidfds(const std::vector<RankInfo>& peers, int rank);
/// Closes what open_peer_pidfds opened.
void close_peer_pidfds(std::vector<int>& fds);

}  // namespace genie::shim
