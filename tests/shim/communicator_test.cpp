// SPDX-License-Identifier: Apache-2.0
// The NCCL part of a Communicator (issue order across streams, call numbers, chaining of a communicator's calls,
// failures held until abort, p2p message numbering, split, groups), built in one process on a fake Transport and a
// fake CallTimer over a real fakecuda runtime: no peers, no sockets, no processes.
#include "communicator.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "group.hpp"

namespace genie::shim {
namespace {

using namespace std::chrono_literals;

fakecuda::RuntimeOptions test_options() {
  fakecuda::RuntimeOptions o;
  o.spec = fakecuda::load_device_spec("h200").value();
  o.device_count = 2;
  // Host time advances only by modelled API costs and waits, whatever this machine's speed.
  o.clock = {sched::ClockMode::kVirtual, SimTime::ms(100000)};
  o.api_overhead = SimTime::ns(500);
  return o;
}

// What the fakes saw, shared by a communicator's transport and timer (and those of its sub-communicators).
struct Seen {
  std::mutex mu;
  struct Coll {
    uint64_t count;
    uint64_t seq;
    SimTime ready;
  };
  std::vector<Coll> colls;                     // collectives in the order the transport ran them
  std::vector<std::vector<uint64_t>> batches;  // p2p: each batch's message numbers
  std::vector<SimTime> ends;                   // what the timer answered, in order
  std::vector<int> sub_members;                // the last sub() call's members
  int sub_index = -1;
  int skipped = 0, transport_wakes = 0, timer_wakes = 0;
  std::atomic<bool> fail{false};  // the transport's next calls fail (a peer died)
  SimTime skew = SimTime::us(3);  // the last peer arrives this long after this rank
  /// The payloads the other ranks contribute to a gather (this rank's own is `mine`).
  std::function<std::vector<uint8_t>(int rank, const void* mine, size_t len)> payload;
};

std::vector<RankInfo> table_of(int nranks) {
  std::vector<RankInfo> t(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    t[static_cast<size_t>(r)].rank = r;
    t[static_cast<size_t>(r)].cuda_dev = r % 2;
    t[static_cast<size_t>(r)].pid = static_cast<int32_t>(getpid());
    t[static_cast<size_t>(r)].process_rank = r;
    std::snprintf(t[static_cast<size_t>(r)].host, sizeof(t[0].host), "host");
    std::snprintf(t[static_cast<size_t>(r)].node, sizeof(t[0].node), "host");
  }
  return t;
}

class FakeTransport final : public Transport {
 public:
  FakeTransport(int nranks, int rank, std::shared_ptr<Seen> seen)
      : peers_(table_of(nranks)), rank_(rank), seen_(std::move(seen)) {}
  uint64_t id() const override { return 0x1d; }
  const std::vector<RankInfo>& peers() const override { return peers_; }
  const std::string& provider() const override { return provider_; }
  bool cross_process() const override { return false; }
  Result<SimTime> collective(const CollCall& c, uint64_t seq, SimTime ready) override {
    std::lock_guard lk(seen_->mu);
    seen_->colls.push_back({c.count, seq, ready});
    if (seen_->fail) return Status(Errc::kRemote, "peer rank 1 exited");
    return ready + seen_->skew;
  }
  Status p2p(std::vector<P2PMessage>& msgs, SimTime ready) override {
    std::lock_guard lk(seen_->mu);
    std::vector<uint64_t> idx;
    for (P2PMessage& m : msgs) {
      idx.push_back(m.index);
      m.moved = m.call.bytes;
      m.peer_ready = ready + seen_->skew;
    }
    seen_->batches.push_back(idx);
    return Status::ok();
  }
  Result<std::vector<std::vector<uint8_t>>> gather(const std::vector<int>& members, const void* mine,
                                                   size_t len) override {
    std::vector<std::vector<uint8_t>> out;
    for (int r : members) {
      if (r == rank_) {
        const auto* p = static_cast<const uint8_t*>(mine);
        out.emplace_back(p, p + len);
      } else {
        out.push_back(seen_->payload(r, mine, len));
      }
    }
    return out;
  }
  void skip_sub_exchanges() override { ++seen_->skipped; }
  Result<std::unique_ptr<Transport>> sub(const std::vector<int>& members, int my_index) override {
    seen_->sub_members = members;
    seen_->sub_index = my_index;
    return std::unique_ptr<Transport>(
        std::make_unique<FakeTransport>(static_cast<int>(members.size()), my_index, seen_));
  }
  void wake() override { ++seen_->transport_wakes; }

 private:
  std::vector<RankInfo> peers_;
  int rank_;
  std::string provider_;
  std::shared_ptr<Seen> seen_;
};

// Collectives take 10 us from when every rank was ready; a p2p batch 5 us per message from this rank's ready time.
class FakeTimer final : public CallTimer {
 public:
  explicit FakeTimer(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
  Result<SimTime> end_collective(const CollCall&, SimTime, SimTime start, const WaitWhat&) override {
    std::lock_guard lk(seen_->mu);
    seen_->ends.push_back(start + SimTime::us(10));
    return seen_->ends.back();
  }
  Result<SimTime> end_p2p(const std::vector<P2PMessage>& msgs, SimTime ready) override {
    std::lock_guard lk(seen_->mu);
    seen_->ends.push_back(ready + SimTime::us(5) * static_cast<int64_t>(msgs.size()));
    return seen_->ends.back();
  }
  void wake() override { ++seen_->timer_wakes; }

 private:
  std::shared_ptr<Seen> seen_;
};

struct Fixture {
  fakecuda::Runtime rt{test_options()};
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  std::shared_ptr<Communicator> comm;
  explicit Fixture(int nranks = 2, int rank = 0) {
    std::vector<RankPlace> places;
    for (int r = 0; r < nranks; ++r) places.push_back({"host", r % 2});
    auto timing = CommTiming::create(places, "h200");
    EXPECT_TRUE(timing.is_ok()) << timing.status().to_string();
    comm = Communicator::create(rt, rank, 0, std::make_unique<FakeTransport>(nranks, rank, seen),
                                std::make_unique<FakeTimer>(seen), timing.value(), CommOptions{}, 0x4b);
  }
  ~Fixture() {
    if (comm) {
      comm->abort();  // releases anything a test left held
      (void)comm->drain();
    }
  }
  fakecuda::Stream& stream() { return *rt.create_stream(0, 0, 0); }
};

CollCall all_reduce(uint64_t count) {
  CollCall c;
  c.collective = netsim::Collective::kAllReduce;
  c.count = count;
  c.datatype = netsim::DataType::kFloat32;
  return c;
}

P2PCall p2p(bool is_send, int peer, uint64_t bytes) {
  P2PCall c;
  c.is_send = is_send;
  c.peer = peer;
  c.bytes = bytes;
  c.count = bytes;
  return c;
}

// An op that holds its stream until `release` is set (a kernel still running).
sched::OpSpec blocker(std::atomic<bool>& release) {
  sched::OpSpec spec;
  spec.may_run_inline = false;
  spec.run = [&release](SimTime ready, const sched::ExternalOp&) -> Result<SimTime> {
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return ready;
  };
  return spec;
}

// An op that records when it could start: the end of what was queued before it on its stream.
sched::OpSpec probe(SimTime* ready_out) {
  sched::OpSpec spec;
  spec.may_run_inline = false;
  spec.run = [ready_out](SimTime ready, const sched::ExternalOp&) -> Result<SimTime> {
    *ready_out = ready;
    return ready;
  };
  return spec;
}

TEST(Communicator, ACollectiveMeetsItsPeersThroughTheTransportAndEndsWhenTheTimerSays) {
  // System: 2 ranks; the transport reports the last peer ready 3 us after this rank; the timer ends a collective
  // 10 us after that. Expectation: the transport runs call #1 at this rank's ready time, and the next op on the
  // stream starts at the timer's end, ready + 13 us.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(1024), s).is_ok());
  SimTime after = SimTime::zero();
  ASSERT_TRUE(f.rt.submit(s, probe(&after)).is_ok());
  ASSERT_TRUE(f.rt.synchronize(s).is_ok());
  ASSERT_EQ(f.seen->colls.size(), 1u);
  EXPECT_EQ(f.seen->colls[0].count, 1024u);
  EXPECT_EQ(f.seen->colls[0].seq, 1u);
  ASSERT_EQ(f.seen->ends.size(), 1u);
  EXPECT_EQ(f.seen->ends[0], f.seen->colls[0].ready + SimTime::us(13));
  EXPECT_EQ(after, f.seen->ends[0]);
  EXPECT_EQ(f.comm->async_error(), Errc::kOk);
  // What a transport prints as the communicator ("comm %p") is the communicator's own address.
  EXPECT_EQ(static_cast<const void*>(static_cast<CommState*>(f.comm.get())), static_cast<const void*>(f.comm.get()));
}

TEST(Communicator, CallsRunInIssueOrderAcrossStreamsAndNeverOverlap) {
  // System: stream A is busy (a blocker); the program issues all-reduce X on A, then Y on idle stream B.
  // Expectation: Y waits for X (NCCL runs a communicator's calls in issue order, whatever their streams): the
  // transport sees nothing until A is released, then X (#1) before Y (#2), and Y starts no earlier than X ended.
  Fixture f;
  fakecuda::Stream& a = f.stream();
  fakecuda::Stream& b = f.stream();
  std::atomic<bool> release{false};
  ASSERT_TRUE(f.rt.submit(a, blocker(release)).is_ok());
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(1), a).is_ok());
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(2), b).is_ok());
  std::this_thread::sleep_for(50ms);
  {
    std::lock_guard lk(f.seen->mu);
    EXPECT_TRUE(f.seen->colls.empty()) << "Y ran before X, which was issued first";
  }
  release = true;
  ASSERT_TRUE(f.rt.synchronize(a).is_ok());
  ASSERT_TRUE(f.rt.synchronize(b).is_ok());
  ASSERT_EQ(f.seen->colls.size(), 2u);
  EXPECT_EQ(f.seen->colls[0].count, 1u);
  EXPECT_EQ(f.seen->colls[1].count, 2u);
  EXPECT_EQ(f.seen->colls[0].seq, 1u);
  EXPECT_EQ(f.seen->colls[1].seq, 2u);
  EXPECT_GE(f.seen->colls[1].ready, f.seen->ends[0]);
}

TEST(Communicator, AFailedCallSetsTheAsyncErrorAndHoldsItsStreamUntilAbort) {
  // System: the transport fails the call (a peer exited). Expectation: ncclCommGetAsyncError turns to a remote
  // error, the stream stays busy as a GPU kernel waiting on a dead peer would, and ncclCommAbort wakes the
  // transport and the timer and lets the stream go; the timer never timed the failed call.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  f.seen->fail = true;
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(8), s).is_ok());
  for (int i = 0; i < 2000 && f.comm->async_error() == Errc::kOk; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(f.comm->async_error(), Errc::kRemote);
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(f.rt.query(s).code(), Errc::kNotReady);
  f.comm->abort();
  EXPECT_EQ(f.seen->transport_wakes, 1);
  EXPECT_EQ(f.seen->timer_wakes, 1);
  EXPECT_TRUE(f.rt.synchronize(s).is_ok());
  EXPECT_TRUE(f.seen->ends.empty());
  // Later calls fail at once, without reaching the transport.
  f.seen->fail = false;
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(8), s).is_ok());
  (void)f.rt.synchronize(s);
  EXPECT_EQ(f.seen->colls.size(), 1u);
}

TEST(Communicator, PointToPointMessagesAreNumberedPerOrderedPairOfRanks) {
  // System: 3 ranks; this rank (0) sends twice to 1 and once to 2 and receives from 1 in one batch, then sends to 1
  // again. Expectation: message numbers count per (sender, receiver): 1, 2, 1, 1 in the first batch, then 3; the
  // timer times the batch from this rank's ready time (5 us per message).
  Fixture f(3, 0);
  fakecuda::Stream& s = f.stream();
  ASSERT_TRUE(
      f.comm->enqueue_p2p({p2p(true, 1, 64), p2p(true, 1, 64), p2p(true, 2, 64), p2p(false, 1, 64)}, s).is_ok());
  ASSERT_TRUE(f.comm->enqueue_p2p({p2p(true, 1, 8)}, s).is_ok());
  SimTime after = SimTime::zero();
  ASSERT_TRUE(f.rt.submit(s, probe(&after)).is_ok());
  ASSERT_TRUE(f.rt.synchronize(s).is_ok());
  ASSERT_EQ(f.seen->batches.size(), 2u);
  EXPECT_EQ(f.seen->batches[0], (std::vector<uint64_t>{1, 2, 1, 1}));
  EXPECT_EQ(f.seen->batches[1], (std::vector<uint64_t>{3}));
  ASSERT_EQ(f.seen->ends.size(), 2u);
  EXPECT_EQ(f.seen->ends[1] - f.seen->ends[0], SimTime::us(5));  // the second batch starts when the first ended
  EXPECT_EQ(after, f.seen->ends[1]);
}

// A split's first exchange carries each rank's (colour, key).
std::function<std::vector<uint8_t>(int, const void*, size_t)> colours(std::vector<std::pair<int32_t, int32_t>> ck) {
  return [ck](int r, const void*, size_t len) {
    std::vector<uint8_t> b(len);
    std::memcpy(b.data(), &ck[static_cast<size_t>(r)], std::min(len, sizeof(ck[0])));
    return b;
  };
}

TEST(Communicator, SplitGroupsTheRanksOfAColourByKeyAndAsksTheTransportForTheirCommunicator) {
  // System: 4 ranks with (colour, key) = (1, 0), (0, 5), (1, 0), (0, 2); this is rank 1. Expectation: colour 0 is
  // ranks {3, 1} ordered by key, so this rank is index 1 of members [3, 1], and the new communicator has 2 ranks.
  Fixture f(4, 1);
  f.seen->payload = colours({{1, 0}, {0, 5}, {1, 0}, {0, 2}});
  auto sub = f.comm->split(0, 5, CommOptions{});
  ASSERT_TRUE(sub.is_ok()) << sub.status().to_string();
  ASSERT_NE(sub.value(), nullptr);
  EXPECT_EQ(f.seen->sub_members, (std::vector<int>{3, 1}));
  EXPECT_EQ(f.seen->sub_index, 1);
  EXPECT_EQ(sub.value()->nranks(), 2);
  EXPECT_EQ(sub.value()->rank(), 1);
  EXPECT_EQ(f.seen->skipped, 0);
}

TEST(Communicator, SplitWithNoColourGivesNoCommunicatorAndKeepsTheExchangesInStep) {
  Fixture f(2, 0);
  f.seen->payload = colours({{-1, 0}, {0, 0}});
  auto sub = f.comm->split(-1, 0, CommOptions{});
  ASSERT_TRUE(sub.is_ok());
  EXPECT_EQ(sub.value(), nullptr);
  EXPECT_EQ(f.seen->skipped, 1);
  EXPECT_TRUE(f.seen->sub_members.empty());
}

TEST(Communicator, LettingGoKeepsTheCommunicatorUntilItsQueuedCallsHaveRun) {
  // System: a call queued behind a busy stream when the handle lets go (ncclCommDestroy). Expectation: the
  // communicator lives until the call has run, then goes.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  std::atomic<bool> release{false};
  ASSERT_TRUE(f.rt.submit(s, blocker(release)).is_ok());
  ASSERT_TRUE(f.comm->enqueue_collective(all_reduce(4), s).is_ok());
  std::weak_ptr<Communicator> weak = f.comm;
  Communicator* raw = f.comm.get();
  raw->let_go(std::move(f.comm));
  EXPECT_FALSE(weak.expired());
  release = true;
  ASSERT_TRUE(f.rt.synchronize(s).is_ok());
  for (int i = 0; i < 1000 && !weak.expired(); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(f.seen->colls.size(), 1u);
}

TEST(CommunicatorGroup, SendsAndReceivesOfAGroupReachTheTransportAsOneBatch) {
  // System: ncclGroupStart; send to 1, receive from 1, send to 1; ncclGroupEnd. Expectation: one p2p batch of the
  // three messages (NCCL fuses a group's p2p per communicator and stream), numbered 1, 1, 2.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  ASSERT_TRUE(group_start().is_ok());
  ASSERT_TRUE(submit_p2p(*f.comm, p2p(true, 1, 16), s).is_ok());
  ASSERT_TRUE(submit_p2p(*f.comm, p2p(false, 1, 16), s).is_ok());
  ASSERT_TRUE(submit_p2p(*f.comm, p2p(true, 1, 16), s).is_ok());
  EXPECT_TRUE(f.seen->batches.empty());
  ASSERT_TRUE(group_end().is_ok());
  ASSERT_TRUE(f.rt.synchronize(s).is_ok());
  ASSERT_EQ(f.seen->batches.size(), 1u);
  EXPECT_EQ(f.seen->batches[0].size(), 3u);
}

TEST(CommunicatorGroup, AGroupWithAFailedCallLaunchesNothing) {
  // System: a group with one all-reduce and one call that failed its checks. Expectation: ncclGroupEnd returns that
  // error and the all-reduce never reaches the transport.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  ASSERT_TRUE(group_start().is_ok());
  ASSERT_TRUE(submit_collective(*f.comm, all_reduce(4), s).is_ok());
  (void)note_call_error(Status(Errc::kInvalidArgument, "invalid datatype 99"));
  Status end = group_end();
  EXPECT_EQ(end.code(), Errc::kInvalidArgument);
  (void)f.rt.synchronize(s);
  EXPECT_TRUE(f.seen->colls.empty());
}

TEST(CommunicatorGroup, SimulateEndAnswersFromNetsimWithoutRunningTheCalls) {
  // System: ncclGroupSimulateEnd of a 64 MiB all-reduce over 2 GPUs of an H200 server. Expectation: a positive
  // estimate, and the transport and the timer are never called.
  Fixture f;
  fakecuda::Stream& s = f.stream();
  ASSERT_TRUE(group_start().is_ok());
  ASSERT_TRUE(submit_collective(*f.comm, all_reduce(16 << 20), s).is_ok());
  float us = -1.0f;
  ASSERT_TRUE(group_end(&us).is_ok());
  EXPECT_GT(us, 0.0f);
  (void)f.rt.synchronize(s);
  EXPECT_TRUE(f.seen->colls.empty());
  EXPECT_TRUE(f.seen->ends.empty());
}

}  // namespace
}  // namespace genie::shim
