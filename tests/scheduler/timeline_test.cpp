// SPDX-License-Identifier: Apache-2.0
// Tests of Lane/Timeline: stream order, cross-lane dependencies, blocking ops, realtime sleeping.
#include "genie/sched/timeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace genie::sched {
namespace {

ClockOptions virtual_clock() { return {ClockMode::kVirtual, SimTime::ms(100000)}; }

OpSpec timed(SimTime d) {
  OpSpec s;
  s.duration = d;
  return s;
}

// A host op of `d` run on its lane's worker that blocks until `release` is set.
OpSpec blocked_host_op(std::atomic<bool>& release, SimTime d) {
  OpSpec s;
  s.may_run_inline = false;
  s.duration = d;
  s.action = [&release] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  return s;
}

// An external op (a collective handed to the coordinator) of `d` on its lane's worker: it gates itself, sets `gated`,
// waits until `release` is set and resolves itself at its ready time + `d`.
OpSpec gated_external_op(std::atomic<bool>& gated, std::atomic<bool>& release, SimTime d) {
  OpSpec coll;
  coll.external = true;
  coll.may_run_inline = false;
  coll.run = [&gated, &release, d](SimTime ready, const ExternalOp& lane) -> Result<SimTime> {
    lane.gate();
    gated = true;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lane.resolve(ready + d);
    return ready + d;
  };
  return coll;
}

TEST(Lane, OpsRunBackToBackInStreamOrder) {
  // System: ops of 10 us, 20 us, 5 us submitted at host time 0 on one lane.
  // Expectation: they end at 10, 30, 35 us (each starts when the previous ends).
  Timeline tl(virtual_clock());
  Lane lane(tl);
  Dep a = lane.submit(timed(SimTime::us(10)), SimTime::zero());
  Dep b = lane.submit(timed(SimTime::us(20)), SimTime::zero());
  Dep c = lane.submit(timed(SimTime::us(5)), SimTime::zero());
  ASSERT_TRUE(a.resolved() && b.resolved() && c.resolved());
  EXPECT_EQ(a.time(), SimTime::us(10));
  EXPECT_EQ(b.time(), SimTime::us(30));
  EXPECT_EQ(c.time(), SimTime::us(35));
}

TEST(Lane, IdleLaneStartsAtHostTime) {
  // An op submitted at host time 100 us on an idle lane starts at 100 us, not at the lane's last end.
  Timeline tl(virtual_clock());
  Lane lane(tl);
  lane.submit(timed(SimTime::us(10)), SimTime::zero());
  Dep d = lane.submit(timed(SimTime::us(1)), SimTime::us(100));
  EXPECT_EQ(d.time(), SimTime::us(101));
}

TEST(Lane, DependencyOnAnotherLaneDelaysStart) {
  // Lane A: 50 us op. Lane B: a 5 us op that depends on A's op. Expectation: B's op ends at 55 us.
  Timeline tl(virtual_clock());
  Lane a(tl), b(tl);
  Dep da = a.submit(timed(SimTime::us(50)), SimTime::zero());
  OpSpec s = timed(SimTime::us(5));
  s.deps.push_back(da);
  EXPECT_EQ(b.submit(std::move(s), SimTime::zero()).time(), SimTime::us(55));
}

TEST(Lane, RecordsSayWhenAndByWhomEachOpWasSubmittedAndWhatItWaitedFor) {
  // System: lane A runs a 50 us op submitted at 0; lane B an op of 5 us submitted at 10 us that depends on A's op
  // (inline), and one of 1 us submitted at 100 us from another host thread (on B's worker: may_run_inline off).
  // Expectation: the records carry submit 0 / 10 / 100 us, deps_end 0 / 50 / 0 us, the flag kRecordSubmitted, and
  // the second thread's number differs from the first's (Chakra traces rebuild host time and waits from them).
  Timeline tl(virtual_clock(), /*record_trace=*/true);
  Lane a(tl), b(tl);
  a.set_identity(0, 1);
  b.set_identity(0, 2);
  Dep da = a.submit(timed(SimTime::us(50)), SimTime::zero());
  OpSpec s = timed(SimTime::us(5));
  s.deps.push_back(da);
  b.submit(std::move(s), SimTime::us(10));
  std::thread other([&] {
    OpSpec q = timed(SimTime::us(1));
    q.may_run_inline = false;
    b.submit(std::move(q), SimTime::us(100));
  });
  other.join();
  ASSERT_TRUE(b.synchronize().is_ok());
  std::vector<std::pair<uint32_t, OpRecord>> recs;
  tl.drain_records([&](int, uint32_t stream, const OpRecord& r) { recs.emplace_back(stream, r); });
  ASSERT_EQ(recs.size(), 3u);
  std::sort(recs.begin(), recs.end(), [](const auto& x, const auto& y) { return x.second.start < y.second.start; });
  for (const auto& [stream, r] : recs) EXPECT_TRUE(r.flags & kRecordSubmitted);
  EXPECT_EQ(recs[0].second.submit, SimTime::zero());
  EXPECT_EQ(recs[0].second.deps_end, SimTime::zero());
  EXPECT_EQ(recs[1].first, 2u);
  EXPECT_EQ(recs[1].second.submit, SimTime::us(10));
  EXPECT_EQ(recs[1].second.deps_end, SimTime::us(50));
  EXPECT_EQ(recs[1].second.start, SimTime::us(50));
  EXPECT_EQ(recs[2].second.submit, SimTime::us(100));
  EXPECT_EQ(recs[2].second.deps_end, SimTime::zero());
  EXPECT_EQ(recs[0].second.thread, recs[1].second.thread);
  EXPECT_NE(recs[2].second.thread, recs[1].second.thread);
}

TEST(Lane, BlockingOpQueuesLaterWorkUntilResolved) {
  // A `run` op resolved by another thread (as a collective is by its peers): later ops queue behind it,
  // the lane is not drained until it resolves, and times chain from its end (1 ms).
  Timeline tl(virtual_clock());
  Lane lane(tl);
  std::atomic<bool> release{false};
  OpSpec coll;
  coll.may_run_inline = false;
  coll.run = [&](SimTime ready, const ExternalOp&) -> Result<SimTime> {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ready + SimTime::ms(1);
  };
  lane.submit(std::move(coll), SimTime::zero());
  Dep after = lane.submit(timed(SimTime::us(10)), SimTime::zero());
  EXPECT_FALSE(after.resolved());
  EXPECT_FALSE(lane.wait_drained_for(std::chrono::milliseconds(20)));
  release = true;
  auto end = lane.synchronize();
  ASSERT_TRUE(end.is_ok());
  EXPECT_EQ(end.value(), SimTime::ms(1) + SimTime::us(10));
  EXPECT_TRUE(lane.complete_by(SimTime::ms(2)));
  EXPECT_FALSE(lane.complete_by(SimTime::ms(1)));
}

TEST(Lane, ActionsRunInStreamOrderEvenWhenQueued) {
  Timeline tl(virtual_clock());
  Lane lane(tl);
  std::vector<int> order;
  std::atomic<bool> release{false};
  OpSpec gate;
  gate.may_run_inline = false;
  gate.action = [&] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    order.push_back(1);
  };
  lane.submit(std::move(gate), SimTime::zero());
  OpSpec second;
  second.action = [&] { order.push_back(2); };
  lane.submit(std::move(second), SimTime::zero());
  release = true;
  ASSERT_TRUE(lane.synchronize().is_ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(Lane, ErrorOfARunOpIsReportedBySynchronize) {
  Timeline tl(virtual_clock());
  Lane lane(tl);
  OpSpec bad;
  bad.run = [](SimTime, const ExternalOp&) -> Result<SimTime> { return Status(Errc::kRemote, "peer died"); };
  Dep d = lane.submit(std::move(bad), SimTime::zero());
  EXPECT_EQ(d.status().code(), Errc::kRemote);
  auto r = lane.synchronize();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "peer died");
}

TEST(Lane, RealtimeOpsSleepForTheirDuration) {
  // Realtime: three 10 ms ops take at least 30 ms of wall time (tolerance: scheduling can only add).
  Timeline tl({ClockMode::kRealtime});
  Lane lane(tl);
  SimTime t0 = tl.clock().now();
  for (int i = 0; i < 3; ++i) lane.submit(timed(SimTime::ms(10)), tl.clock().now());
  auto end = lane.synchronize();
  ASSERT_TRUE(end.is_ok());
  SimTime wall = tl.clock().now() - t0;
  EXPECT_GE(wall.count_ns(), SimTime::ms(30).count_ns());
  EXPECT_LT(wall.count_ns(), SimTime::ms(300).count_ns());
}

TEST(Lane, DestroyingALaneLetsQueuedWorkFinish) {
  Timeline tl(virtual_clock());
  std::atomic<bool> ran{false};
  Dep d;
  {
    Lane lane(tl);
    OpSpec s;
    s.may_run_inline = false;
    s.action = [&] { ran = true; };
    d = lane.submit(std::move(s), SimTime::zero());
  }
  ASSERT_TRUE(tl.wait(d).is_ok());
  EXPECT_TRUE(ran);
}

TEST(Timeline, ADrainRightAfterALaneIsDestroyedHasItsRecords) {
  // System: a recording timeline; many times over, a lane runs one op on its worker, the op completes, the lane is
  // destroyed (its worker then moves the lane's records to the timeline) and a drain follows at once, racing that
  // move (a process that destroys its stream and exits: the drain at exit is the last).
  // Expectation: every drain has the op's record, wherever the worker is in the move.
  Timeline tl(virtual_clock(), /*record_trace=*/true);
  int missing = 0;
  for (int i = 0; i < 10000; ++i) {
    Dep d;
    {
      Lane lane(tl);
      OpSpec s;
      s.may_run_inline = false;
      s.duration = SimTime::ns(1);
      d = lane.submit(std::move(s), SimTime::zero());
      ASSERT_TRUE(tl.wait(d).is_ok());
    }
    // Drain 0-40 us after the destruction, so that some drains meet the worker in the middle of its move.
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(400 * (i % 100));
    while (std::chrono::steady_clock::now() < until) {
    }
    size_t drained = 0;
    tl.drain_records([&](int, uint32_t, const OpRecord&) { ++drained; });
    if (drained == 0) {
      // The record may only be later, never lost: a second drain must find it.
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      tl.drain_records([&](int, uint32_t, const OpRecord&) { ++drained; });
      ASSERT_EQ(drained, 1u) << "iteration " << i << ": the record is lost";
      ++missing;
    } else {
      ASSERT_EQ(drained, 1u);
    }
  }
  EXPECT_EQ(missing, 0) << "drains that missed a completed op's record";
}

TEST(Timeline, ALaneWaitingOnAnotherLanesOpIsBoundedByThatOp) {
  // System: lane B runs a host op (on its worker, ready at 5 us, 2 us long) that blocks until released; lane A's
  // external op (a collective the coordinator would time) waits on it; nothing else is queued.
  // Expectation: while B's op runs, the timeline's injection floor is 5 us (A injects no earlier than that op's end,
  // and the op started at 5 us) — neither lane's own floor says anything; once B's op ends at 7 us, A's op is
  // ready at 7 us and holds the floor there while it runs; afterwards nothing constrains.
  Timeline tl(virtual_clock());
  Lane a(tl), b(tl);
  std::atomic<bool> release_b{false}, release_a{false};
  Dep x = b.submit(blocked_host_op(release_b, SimTime::us(2)), SimTime::us(5));
  OpSpec coll;
  coll.external = true;
  coll.may_run_inline = false;
  coll.deps = {x};
  coll.run = [&](SimTime ready, const ExternalOp&) -> Result<SimTime> {
    while (!release_a.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ready + SimTime::us(1);
  };
  Dep e = a.submit(std::move(coll), SimTime::zero());
  // Let both workers reach their waits.
  for (int i = 0; i < 200 && tl.injection_floor() != SimTime::us(5); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tl.injection_floor(), SimTime::us(5));
  release_b = true;
  ASSERT_TRUE(tl.wait(x).is_ok());
  for (int i = 0; i < 200 && tl.injection_floor() != SimTime::us(7); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tl.injection_floor(), SimTime::us(7));
  release_a = true;
  auto end = tl.wait(e);
  ASSERT_TRUE(end.is_ok());
  EXPECT_EQ(end.value(), SimTime::us(8));
  for (int i = 0; i < 200 && tl.injection_floor() != SimTime::max(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tl.injection_floor(), SimTime::max());
}

TEST(Timeline, AnOpWaitingOnAnotherLaneStartsNoEarlierThanItsOwnEnqueueTime) {
  // System: lane B runs a host op ready at 5 us that blocks until released; an op enqueued on the idle lane A at host
  // time 20 us waits on it. Expectation: the waiting op's lower bound is 20 us (its enqueue time, the later of the
  // two bounds of its start), not the awaited op's 5 us; after the release it ends at 20 us + its 1 us.
  Timeline tl(virtual_clock());
  Lane a(tl), b(tl);
  std::atomic<bool> release{false};
  Dep x = b.submit(blocked_host_op(release, SimTime::us(1)), SimTime::us(5));
  OpSpec k = timed(SimTime::us(1));
  k.deps = {x};
  Dep y = a.submit(std::move(k), SimTime::us(20));
  for (int i = 0; i < 200 && y.lower_bound_ns() != 20000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(y.lower_bound_ns(), 20000);
  release = true;
  auto end = tl.wait(y);
  ASSERT_TRUE(end.is_ok());
  EXPECT_EQ(end.value(), SimTime::us(21));
}

TEST(Timeline, AQueryKnowsWhetherWorkEndedByItsTimeFromVirtualTimeOnly) {
  // System: lane A runs an external op (a collective) ready at 10 us: handed to the coordinator (gated), it waits
  // until released, then is resolved at 12 us. An injector thread asks at host time 50 us whether it has ended
  // (wait_until_known, 10 s timeout).
  // Expectation: while the answer is open the thread promises 50 us (the injection floor); the coordinator having
  // resolved everything before 40 us leaves it open, everything before 50 us closes it: kNotBy, long before the
  // timeout. A query at 5 us (before the op's ready time) is kNotBy at once, without the coordinator; after the
  // resolution, a query at 50 us is kResolved.
  Timeline tl(virtual_clock());
  Lane a(tl);
  std::atomic<bool> gated{false}, release{false};
  Dep e = a.submit(gated_external_op(gated, release, SimTime::us(2)), SimTime::us(10));
  while (!gated.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::atomic<int> answer{-1};
  std::thread q([&] {
    tl.register_injector();
    answer = static_cast<int>(tl.wait_until_known(e, SimTime::us(50), std::chrono::seconds(10)));
  });
  for (int i = 0; i < 2000 && tl.injection_floor() != SimTime::us(50); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tl.injection_floor(), SimTime::us(50)) << "the querying thread goes on at 50 us";
  tl.note_resolved_before(SimTime::us(40));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(answer.load(), -1) << "answered before the clock came up to the query";
  const auto t0 = std::chrono::steady_clock::now();
  tl.note_resolved_before(SimTime::us(50));
  q.join();
  EXPECT_EQ(answer.load(), static_cast<int>(Timeline::Known::kNotBy));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "it waited for the timeout";

  Lane b(tl);
  std::atomic<bool> release_b{false};
  Dep x = b.submit(blocked_host_op(release_b, SimTime::us(1)), SimTime::us(10));
  EXPECT_EQ(tl.wait_until_known(x, SimTime::us(5), std::chrono::seconds(10)), Timeline::Known::kNotBy);
  release_b = true;
  release = true;
  ASSERT_TRUE(tl.wait(e).is_ok());
  EXPECT_EQ(tl.wait_until_known(e, SimTime::us(50), std::chrono::seconds(10)), Timeline::Known::kResolved);
  EXPECT_EQ(e.time(), SimTime::us(12));
  ASSERT_TRUE(tl.wait(x).is_ok());
}

TEST(Timeline, TheCoordinatorsBoundOfAnExternalOpsEndAnswersEarlierQueriesAtOnceButNeverLowersThePromise) {
  // System: lane A runs an external op (a collective) ready at 10 us, handed to the coordinator (gated); lane B waits
  // on it (an event) and then runs a 1 us kernel. The coordinator says the collective ends no earlier than 30 us
  // (ExternalOp::bound_end), then a lower bound (20 us, ignored), and resolves it at 35 us.
  // Expectation: before the bound a query at 25 us waits (the 0.2 s timeout runs out: kUnknown); after it queries at
  // 25 us about the collective and about B's kernel behind it answer kNotBy at once, one at 30 us still waits; an
  // injector blocked on the collective promises nothing (the injection floor stays where it was: the coordinator
  // decides that end, and lowers the promise with the resolution). Once the op has ended its bound is gone: the next
  // external op on A is unbounded again.
  Timeline tl(virtual_clock());
  Lane a(tl), b(tl);
  std::atomic<bool> gated{false}, release{false}, bounded{false};
  OpSpec first;
  first.external = true;
  first.may_run_inline = false;
  first.run = [&](SimTime ready, const ExternalOp& lane) -> Result<SimTime> {
    lane.gate();
    gated = true;
    while (!bounded.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lane.bound_end(SimTime::us(30));
    lane.bound_end(SimTime::us(20));
    bounded = false;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lane.resolve(ready + SimTime::us(25));
    return ready + SimTime::us(25);
  };
  Dep e = a.submit(std::move(first), SimTime::us(10));
  OpSpec kernel = timed(SimTime::us(1));
  kernel.deps = {e};
  Dep k = b.submit(std::move(kernel), SimTime::zero());
  while (!gated.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Both lanes settle at "nothing before the coordinator resolves": A gated, B's worker waiting on A's op.
  for (int i = 0; i < 2000 && tl.injection_floor() != SimTime::ns(INT64_MAX); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const SimTime floor_before = tl.injection_floor();
  EXPECT_EQ(floor_before, SimTime::ns(INT64_MAX));
  EXPECT_EQ(tl.wait_until_known(e, SimTime::us(25), std::chrono::milliseconds(200)), Timeline::Known::kUnknown);
  bounded = true;
  while (bounded.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(tl.wait_until_known(e, SimTime::us(25), std::chrono::seconds(10)), Timeline::Known::kNotBy);
  EXPECT_EQ(tl.wait_until_known(k, SimTime::us(25), std::chrono::seconds(10)), Timeline::Known::kNotBy);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << "they waited";
  EXPECT_EQ(tl.wait_until_known(e, SimTime::us(30), std::chrono::milliseconds(200)), Timeline::Known::kUnknown)
      << "30 us is not before the bound";
  EXPECT_EQ(tl.injection_floor(), floor_before) << "the bound changed the promise";
  release = true;
  ASSERT_TRUE(tl.wait(k).is_ok());
  EXPECT_EQ(e.time(), SimTime::us(35));
  EXPECT_EQ(k.time(), SimTime::us(36));

  release = false;
  gated = false;
  Dep e2 = a.submit(gated_external_op(gated, release, SimTime::us(5)), SimTime::us(40));
  while (!gated.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(tl.wait_until_known(e2, SimTime::us(41), std::chrono::milliseconds(200)), Timeline::Known::kUnknown)
      << "the first op's bound still counted";
  release = true;
  ASSERT_TRUE(tl.wait(e2).is_ok());
}

TEST(Timeline, UndrainedTraceRecordsAreCappedAndCounted) {
  // System: a recording timeline nobody drains; 2^19 + 1000 inline ops on one lane.
  // Expectation: the lane keeps 2^19 records (the cap) and counts the other 1000 as dropped; after a drain it
  // records again.
  Timeline tl(virtual_clock(), /*record_trace=*/true);
  Lane lane(tl);
  const size_t cap = size_t{1} << 19;
  for (size_t i = 0; i < cap + 1000; ++i) lane.submit(timed(SimTime::ns(1)), SimTime::zero());
  EXPECT_EQ(lane.records().size(), cap);
  EXPECT_EQ(tl.dropped_records(), 1000u);
  size_t drained = 0;
  tl.drain_records([&](int, uint32_t, const OpRecord&) { ++drained; });
  EXPECT_EQ(drained, cap);
  lane.submit(timed(SimTime::ns(1)), SimTime::zero());
  EXPECT_EQ(lane.records().size(), 1u);
  EXPECT_EQ(tl.dropped_records(), 1000u);
}

}  // namespace
}  // namespace genie::sched

namespace genie::sched {
namespace {

OpSpec kernel_of(SimTime d, OpKind kind = OpKind::kKernel) {
  OpSpec s;
  s.duration = d;
  s.kind = kind;
  return s;
}

TEST(TimelineBusy, OverlappingLanesCountOncePerBucketAndClassesApart) {
  Timeline tl(virtual_clock());
  Lane a(tl), b(tl), other(tl), copies(tl);
  a.set_identity(0, 0);
  b.set_identity(0, 1);
  other.set_identity(1, 2);
  copies.set_identity(0, 3);
  // System: device 0 runs kernels on two streams over [0, 300 ms) and [100, 200 ms) (b inside a), a copy over
  // [0, 50 ms); device 1 a kernel over [0, 500 ms). Expectations in [0, 1 s): device 0 busy 300 ms with kernels
  // (the overlap counts once), 50 ms with copies; device 1 500 ms; in [200, 300 ms) device 0 100 ms.
  a.submit(kernel_of(SimTime::ms(300)), SimTime::zero());
  b.submit(kernel_of(SimTime::ms(100)), SimTime::ms(100));
  copies.submit(kernel_of(SimTime::ms(50), OpKind::kCopy), SimTime::zero());
  other.submit(kernel_of(SimTime::ms(500)), SimTime::zero());
  EXPECT_EQ(tl.busy_time(0, BusyClass::kCompute, SimTime::zero(), SimTime::ms(1000)), SimTime::ms(300));
  EXPECT_EQ(tl.busy_time(0, BusyClass::kMemory, SimTime::zero(), SimTime::ms(1000)), SimTime::ms(50));
  EXPECT_EQ(tl.busy_time(1, BusyClass::kCompute, SimTime::zero(), SimTime::ms(1000)), SimTime::ms(500));
  EXPECT_EQ(tl.busy_time(0, BusyClass::kCompute, SimTime::ms(200), SimTime::ms(300)), SimTime::ms(100));
  EXPECT_EQ(tl.busy_time(2, BusyClass::kCompute, SimTime::zero(), SimTime::ms(1000)), SimTime::zero());
  EXPECT_TRUE(tl.device_ran_ops(0));
  EXPECT_FALSE(tl.device_ran_ops(2));
}

TEST(TimelineBusy, OnlyTheLastHistoryIsKept) {
  Timeline tl(virtual_clock());
  Lane a(tl);
  a.set_identity(0, 0);
  // System: a 1 s kernel, then one of 10 ms starting 5 s later. Expectation: [0, 1 s) has left the history
  // (Timeline::kBusyHistory = 2.56 s), the recent kernel is all there is.
  a.submit(kernel_of(SimTime::ms(1000)), SimTime::zero());
  a.submit(kernel_of(SimTime::ms(10)), SimTime::ms(6000));
  EXPECT_EQ(tl.busy_time(0, BusyClass::kCompute, SimTime::zero(), SimTime::ms(1000)), SimTime::zero());
  EXPECT_EQ(tl.busy_time(0, BusyClass::kCompute, SimTime::ms(5500), SimTime::ms(6500)), SimTime::ms(10));
}

}  // namespace
}  // namespace genie::sched
