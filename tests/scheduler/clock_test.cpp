// SPDX-License-Identifier: Apache-2.0
// Tests of the host clock: virtual time advances by charged overheads and jumps on waits.
#include "genie/sched/clock.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace genie::sched {
namespace {

TEST(Clock, VirtualTimeAdvancesByOverheadAndWaits) {
  Clock c({ClockMode::kVirtual, SimTime::ms(1000)});  // sampling interval long: CPU time not charged here
  SimTime t0 = c.now();
  SimTime t1 = c.api_call(SimTime::us(5));
  EXPECT_EQ(t1 - t0, SimTime::us(5));
  c.wait_until(t1 + SimTime::ms(3));
  EXPECT_EQ(c.now(), t1 + SimTime::ms(3));
  c.wait_until(t1);  // waiting for the past does not move time back
  EXPECT_EQ(c.now(), t1 + SimTime::ms(3));
}

TEST(Clock, VirtualTimeChargesThreadCpuTimeNotWallTime) {
  Clock c({ClockMode::kVirtual, SimTime::zero()});  // sample on every call
  SimTime t0 = c.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // sleeping uses no CPU
  SimTime t1 = c.now();
  EXPECT_LT((t1 - t0).count_ns(), SimTime::ms(5).count_ns());
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;  // burn CPU
  SimTime t2 = c.now();
  EXPECT_GT((t2 - t1).count_ns(), SimTime::ms(1).count_ns());
}

// System: one thread burns the same CPU under three clocks that differ only in cpu_time_scale.
// Expectations: scale 0 charges nothing (host time = api_call overheads only); scale 0.5 charges half of what
// scale 1 charges for the same work (measured on its own clock, so a ratio within 25%: the two burns are separate).
TEST(Clock, CpuTimeScaleChargesAFractionOfCpuTime) {
  auto burn_and_measure = [](double scale) {
    ClockOptions o{ClockMode::kVirtual, SimTime::zero()};
    o.cpu_time_scale = scale;
    Clock c(o);
    SimTime t0 = c.now();
    volatile double x = 0;
    for (int i = 0; i < 20000000; ++i) x = x + i * 0.5;  // burn CPU
    SimTime t1 = c.api_call(SimTime::us(3));
    return (t1 - t0).count_ns();
  };
  EXPECT_EQ(burn_and_measure(0.0), SimTime::us(3).count_ns());
  const int64_t full = burn_and_measure(1.0) - SimTime::us(3).count_ns();
  const int64_t half = burn_and_measure(0.5) - SimTime::us(3).count_ns();
  ASSERT_GT(full, SimTime::ms(1).count_ns());
  constexpr double kRatioTolerance = 0.25;
  EXPECT_NEAR(static_cast<double>(half) / static_cast<double>(full), 0.5, 0.5 * kRatioTolerance);
}

TEST(Clock, ResumeNoEarlierRaisesEveryThreadOnceAndNeverLowers) {
  // System: a virtual clock with CPU time not charged (scale 0); a thread at 2 us; another thread, parked, whose
  // host time another thread estimates; then resume_no_earlier(10 us), then resume_no_earlier(4 us).
  // Expectation: both threads read 10 us (the parked one in the estimate too, before it runs again), later
  // overheads add to it, and the lower bound of 4 us changes nothing.
  ClockOptions o{ClockMode::kVirtual, SimTime::us(20)};
  o.cpu_time_scale = 0.0;
  Clock c(o);
  c.api_call(SimTime::us(2));
  Clock::ThreadState* other = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  SimTime other_after;
  std::thread t([&] {
    {
      std::unique_lock lk(mu);
      other = c.current_thread_state();
      cv.notify_all();
      cv.wait(lk, [&] { return go; });
    }
    other_after = c.now();
  });
  {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return other != nullptr; });
  }
  c.resume_no_earlier(SimTime::us(10));
  EXPECT_EQ(c.estimate(other, 0), SimTime::us(10));
  EXPECT_EQ(c.now(), SimTime::us(10));
  EXPECT_EQ(c.api_call(SimTime::us(1)), SimTime::us(11));
  c.resume_no_earlier(SimTime::us(4));
  EXPECT_EQ(c.now(), SimTime::us(11));
  {
    std::lock_guard lk(mu);
    go = true;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(other_after, SimTime::us(10));
}

TEST(Clock, NewThreadStartsAtLargestHostTime) {
  Clock c({ClockMode::kVirtual, SimTime::ms(1000)});
  c.wait_until(SimTime::ms(7));
  SimTime seen;
  std::thread([&] { seen = c.now(); }).join();
  EXPECT_GE(seen, SimTime::ms(7));
}

TEST(Clock, RealtimeFollowsWallClock) {
  Clock c({ClockMode::kRealtime});
  SimTime t0 = c.now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GE((c.now() - t0).count_ns(), SimTime::ms(19).count_ns());
}

TEST(Clock, ParsesModes) {
  ClockMode m;
  EXPECT_TRUE(parse_clock_mode("realtime", &m));
  EXPECT_EQ(m, ClockMode::kRealtime);
  EXPECT_FALSE(parse_clock_mode("fast", &m));
}

}  // namespace
}  // namespace genie::sched
