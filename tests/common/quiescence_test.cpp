// SPDX-License-Identifier: Apache-2.0
// Tests of QuiescenceProbe: whether every other thread of the process is asleep.
#include "genie/common/quiescence.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace genie {
namespace {

// Asks until the answer is true (at most `tries` times, 5 ms apart): a first look at a thread always says awake.
bool asleep_within(QuiescenceProbe& p, int tries) {
  for (int i = 0; i < tries; ++i) {
    if (p.all_asleep()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(QuiescenceProbe, ThreadsBlockedOutsideOrWaitingInsideGenieAreAsleepABusyOneIsNot) {
  // System: thread A blocked on a condition variable (outside Genie); thread B in a GenieWait scope that wakes every
  // millisecond (as a wait for the coordinator does); then thread C spinning.
  // Expectation: with A and B, the probe reports asleep within a few looks; the first look at a new thread says
  // awake; with C spinning it never reports asleep; once C stops and blocks, asleep again.
  QuiescenceProbe probe;
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread a([&] {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return stop; });
  });
  std::atomic<bool> b_stop{false};
  std::thread b([&] {
    GenieWait waiting;
    while (!b_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  EXPECT_TRUE(asleep_within(probe, 200));
  std::atomic<bool> c_spin{true}, c_stop{false};
  std::thread c([&] {
    while (c_spin.load()) {
    }
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return c_stop.load(); });
  });
  EXPECT_FALSE(probe.all_asleep()) << "a thread seen for the first time";
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(probe.all_asleep()) << "look " << i << ": a spinning thread";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  c_spin = false;
  EXPECT_TRUE(asleep_within(probe, 200));
  {
    std::lock_guard lk(mu);
    stop = true;
    c_stop = true;
  }
  cv.notify_all();
  b_stop = true;
  a.join();
  b.join();
  c.join();
}

TEST(QuiescenceProbe, AGenieServiceThreadIsNotLookedAtEvenWhileItSpins) {
  // System: thread S spinning inside a GenieService scope (the coordinator's poll loop hosted in rank 0's process),
  // then, after the scope ends, spinning outside it.
  // Expectation: while S is a service the probe reports asleep within a few looks; once it is not, never.
  QuiescenceProbe probe;
  std::atomic<bool> in_service{true}, stop{false};
  std::thread s([&] {
    {
      GenieService service;
      while (in_service.load()) {
      }
    }
    while (!stop.load()) {
    }
  });
  EXPECT_TRUE(asleep_within(probe, 200));
  in_service = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(probe.all_asleep()) << "look " << i << ": a spinning thread, no longer a service";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop = true;
  s.join();
}

TEST(QuiescenceProbe, AThreadWokenBetweenTwoLooksFromAnUntimedWaitIsAwake) {
  // System: a thread waiting on a condition variable without a timeout, woken between two looks by a notify; it
  // does a little work and waits again.
  // Expectation: the second look sees its CPU time moved while it is back in an untimed wait: not asleep (what woke
  // it may go on).
  QuiescenceProbe probe;
  std::mutex mu;
  std::condition_variable cv;
  int wakes = 0;
  bool stop = false;
  std::thread t([&] {
    std::unique_lock lk(mu);
    for (;;) {
      const int seen = wakes;
      cv.wait(lk, [&] { return stop || wakes != seen; });
      if (stop) return;
      volatile unsigned x = 0;
      for (unsigned i = 0; i < 2000000; ++i) x = x + i;
    }
  });
  ASSERT_TRUE(asleep_within(probe, 200));
  {
    std::lock_guard lk(mu);
    ++wakes;
  }
  cv.notify_all();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(probe.all_asleep());
  {
    std::lock_guard lk(mu);
    stop = true;
  }
  cv.notify_all();
  t.join();
}

TEST(QuiescenceProbe, APeriodicWakerInATimedWaitIsAsleep) {
  // System: threads that wake by themselves and wait again, using a little CPU each time, as gloo's 10 ms epoll
  // loop, torch's NCCL watchdog (a condition variable waited with a timeout) and sleeps do; looks 30 ms apart, so
  // every pair spans wake-ups.
  // Expectation: caught in their timed waits, they count as asleep: the probe reports asleep within a few looks.
  QuiescenceProbe probe;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  auto work = [] {
    volatile unsigned x = 0;
    for (unsigned i = 0; i < 20000; ++i) x = x + i;
  };
  std::thread sleeper([&] {
    while (!stop.load()) {
      work();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::thread timed_cv([&] {
    std::unique_lock lk(mu);
    while (!stop.load()) {
      work();
      cv.wait_for(lk, std::chrono::milliseconds(7));
    }
  });
  bool asleep = false;
  for (int i = 0; i < 100 && !asleep; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    asleep = probe.all_asleep();
  }
  EXPECT_TRUE(asleep) << probe.awake();
  stop = true;
  cv.notify_all();
  sleeper.join();
  timed_cv.join();
}

}  // namespace
}  // namespace genie
