// SPDX-License-Identifier: Apache-2.0
// ShmTransport: the ranks of one host meet in a shared control segment (each rank's posted call, progress counters,
// point-to-point mailboxes) and move bytes through peer memory: every rank reads its peers' buffers where they are
// and writes its part of the result straight into theirs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "shared_segment.hpp"
#include "transport/transport.hpp"

namespace genie::shim {

class ShmTransport final : public Transport {
 public:
  /// Rank `rank` of the communicator whose control segment `seg` is (mapped by every rank); `peers` from the bootstrap.
  ShmTransport(std::unique_ptr<SharedSegment> seg, std::vector<RankInfo> peers, int rank);
  ~ShmTransport() override;

  uint64_t id() const override { return seg_->header().id; }
  const std::vector<RankInfo>& peers() const override { return peers_; }
  const std::string& provider() const override { return provider_; }
  bool cross_process() const override { return cross_process_; }

  Result<SimTime> collective(const CollCall& c, uint64_t seq, SimTime ready) override;
  Status p2p(std::vector<P2PMessage>& msgs, SimTime ready) override;
  Result<std::vector<std::vector<uint8_t>>> gather(const std::vector<int>& members, const void* mine,
                                                   size_t len) override;
  void skip_sub_exchanges() override;
  Result<std::unique_ptr<Transport>> sub(const std::vector<int>& members, int my_index) override;
  void wake() override { seg_->ring(); }

 private:
  /// Every rank gives up: the communicator's error becomes `why` here and, through the segment, on every rank.
  void fail_all(const Status& why);
  /// Waits until `counter` of every rank in `members` (nullptr: all ranks) is at least `target`, with the
  /// abort / dead-peer / hang checks; the ranks still below it are the missing ones.
  Status wait_all_reach(std::atomic<uint64_t> RankSlot::*counter, uint64_t target, const std::vector<int>* members,
                        const WaitWhat& what);
  Status barrier(uint64_t seq, int phase, const WaitWhat& what);
  /// Checks run while waiting: abort, a failed communicator, dead peers, the hang timeout. `missing()` lists the
  /// ranks this wait still needs; only their deaths fail it. `since`: when the wait's hang timer started; an unset
  /// one (the epoch) starts now.
  Status wait_check(const std::function<std::vector<int>()>& missing, const WaitWhat& what,
                    std::chrono::steady_clock::time_point& since);
  Status move_data(const CollCall& c, uint64_t seq);

  std::unique_ptr<SharedSegment> seg_;
  std::vector<RankInfo> peers_;
  int rank_ = 0;
  int nranks_ = 0;
  std::vector<int> pidfds_;  ///< pidfd of each peer in another process (-1: this process or unavailable)
  bool cross_process_ = false;
  std::string provider_;  ///< empty: shared memory
  /// One lane of small all-gathers: its counters and payload in the rank slots, this rank's count of them, and who
  /// took part in its previous one. The main lane serves the exchanges every rank makes (split entries, grow, window
  /// registration); the sub lane those a split's or shrink's members make among themselves.
  struct GatherLane {
    GatherLane(std::atomic<uint64_t> RankSlot::*s, std::atomic<uint64_t> RankSlot::*d,
               uint8_t (RankSlot::*p)[kGatherBytes])
        : seq_field(s), done_field(d), payload(p) {}
    std::atomic<uint64_t> RankSlot::*seq_field;
    std::atomic<uint64_t> RankSlot::*done_field;
    uint8_t (RankSlot::*payload)[kGatherBytes];
    uint64_t seq = 0;
    std::vector<int> prev_members;
  };
  Result<std::vector<std::vector<uint8_t>>> gather_on(GatherLane& lane, const std::vector<int>& members,
                                                      const void* mine, size_t len);
  GatherLane main_lane_{&RankSlot::gather_seq, &RankSlot::gather_done, &RankSlot::gather};
  GatherLane sub_lane_{&RankSlot::sub_gather_seq, &RankSlot::sub_gather_done, &RankSlot::sub_gather};
};

}  // namespace genie::shim
