// SPDX-License-Identifier: Apache-2.0
// Doorbells: a sleeper wakes when rung (same process and across processes), and libfabric shm endpoints that
// sleep on theirs are woken by a peer's send, use little CPU while they wait, and stay awake while a large
// message (which rings no bell when it completes) is in flight.
#include "transport/fabric_bell.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "doorbell.hpp"
#include "transport/fabric_comm.hpp"

namespace genie::shim {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr long kTenSeconds = 10'000'000'000;

TEST(Doorbell, RingWakesASleeperLongBeforeItsTimeout) {
  Doorbell bell;
  std::atomic<bool> flag{false};
  double slept = 0;
  std::thread sleeper([&] {
    const auto t0 = Clock::now();
    while (!bell.sleep_unless([&] { return flag.load(); }, kTenSeconds)) {
    }
    slept = seconds_since(t0);
  });
  std::this_thread::sleep_for(100ms);
  flag.store(true);
  bell.ring();
  sleeper.join();
  EXPECT_GE(slept, 0.09);
  EXPECT_LT(slept, 5.0) << "the ring did not wake the sleeper: it slept until its timeout";
  EXPECT_EQ(bell.waiters.load(), 0u);
}

TEST(Doorbell, ReadyOnceAnnouncedReturnsWithoutSleeping) {
  Doorbell bell;
  const auto t0 = Clock::now();
  EXPECT_TRUE(bell.sleep_unless([] { return true; }, kTenSeconds));
  EXPECT_LT(seconds_since(t0), 5.0);
  // Not ready, and nobody rings: sleeps for the timeout, then reports not ready.
  const auto t1 = Clock::now();
  EXPECT_FALSE(bell.sleep_unless([] { return false; }, 50'000'000));
  EXPECT_GE(seconds_since(t1), 0.045);
}

TEST(FabricBell, APeerProcessRingsThroughThePageItMaps) {
  auto bell = FabricBell::acquire();
  ASSERT_NE(bell, nullptr);
  const BellAddress a = bell->address();
  EXPECT_LT(a.slot, FabricBell::kSlots);
  const uint32_t before = bell->bell().seq.load();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Another process: maps the page through /proc/<parent>/fd and rings the slot.
    Result<Doorbell*> b = resolve_bell(a);
    if (!b.is_ok() || b.value() == &bell->bell()) _exit(2);  // must be its own mapping of the page
    std::this_thread::sleep_for(100ms);
    b.value()->ring();
    _exit(0);
  }
  const auto t0 = Clock::now();
  while (!bell->bell().sleep_unless([&] { return bell->bell().seq.load() != before; }, kTenSeconds) &&
         seconds_since(t0) < 20) {
  }
  const double slept = seconds_since(t0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child could not map the bell page";
  EXPECT_LT(slept, 5.0);
  EXPECT_NE(bell->bell().seq.load(), before);
}

TEST(FabricBell, BadAddressesAreRefusedNamingTheSlot) {
  auto bell = FabricBell::acquire();
  ASSERT_NE(bell, nullptr);
  BellAddress a = bell->address();
  a.slot = FabricBell::kSlots;
  Result<Doorbell*> r = resolve_bell(a);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kRemote);
  EXPECT_NE(r.status().message().find("malformed bell address from a peer (slot 256)"), std::string::npos)
      << r.status().message();
}

TEST(FabricBell, SlotsAreReusedOnceFreed) {
  std::vector<std::unique_ptr<FabricBell>> held;
  for (;;) {
    auto b = FabricBell::acquire();
    if (!b) break;
    held.push_back(std::move(b));
    ASSERT_LE(held.size(), FabricBell::kSlots);
  }
  EXPECT_GE(held.size(), 1u);  // other tests of this process may hold some
  const uint32_t freed = held.back()->address().slot;
  held.pop_back();
  auto again = FabricBell::acquire();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->address().slot, freed);
}

// Two shm FabricComms in this process, connected and sealed (seal's gather runs on both at once).
std::vector<std::unique_ptr<FabricComm>> sealed_pair() {
  std::vector<std::unique_ptr<FabricComm>> fcs;
  std::vector<std::vector<uint8_t>> blobs;
  for (int r = 0; r < 2; ++r) {
    auto fc = FabricComm::open("shm", "");
    EXPECT_TRUE(fc.is_ok()) << fc.status().message();
    if (!fc.is_ok()) return {};
    blobs.push_back(fc.value()->local_blob());
    fcs.push_back(std::move(fc).value());
  }
  for (int r = 0; r < 2; ++r) EXPECT_TRUE(fcs[static_cast<size_t>(r)]->connect(r, blobs, {"h", "h"}).is_ok());
  Status st[2];
  std::thread t([&] { st[1] = fcs[1]->seal(nullptr, 10s); });
  st[0] = fcs[0]->seal(nullptr, 10s);
  t.join();
  EXPECT_TRUE(st[0].is_ok()) << st[0].message();
  EXPECT_TRUE(st[1].is_ok()) << st[1].message();
  return fcs;
}

TEST(FabricComm, ShmRanksThatCanRingEachOtherSleepOnTheirBells) {
  auto fcs = sealed_pair();
  ASSERT_EQ(fcs.size(), 2u);
  EXPECT_TRUE(fcs[0]->sleeps_on_bells());
  EXPECT_TRUE(fcs[1]->sleeps_on_bells());
}

TEST(FabricEndpoint, APollAsleepOnItsBellReturnsWhenAPeerSends) {
  // Rank 1 waits for rank 0's message in one poll that may block for 5 s; rank 0 sends after 200 ms. Woken by
  // the ring, the poll returns with the completion at once, and the wait used little of rank 1's CPU.
  auto fcs = sealed_pair();
  ASSERT_EQ(fcs.size(), 2u);
  FabricEndpoint& rx = fcs[1]->data();
  uint64_t got = 0;
  FabricOpContext rctx;
  ASSERT_TRUE(rx.recv(fcs[1]->data_addr(0), &got, sizeof(got), 7, &rctx).value());
  const uint64_t word = 0x5eed;
  FabricOpContext sctx;
  std::thread sender([&] {
    std::this_thread::sleep_for(200ms);
    // The first message of a pair of shm endpoints waits for the receiver to accept the connection: not posted
    // until then, and each try rings the receiver.
    FabricCompletion c[4];
    bool posted = false;
    for (int i = 0; i < 5000 && !posted; ++i) {
      posted = fcs[0]->data().send(fcs[0]->data_addr(1), &word, sizeof(word), 7, &sctx).value();
      if (!posted) (void)fcs[0]->data().poll(c, 4, 0);
    }
    ASSERT_TRUE(posted);
    for (int i = 0; i < 100 && fcs[0]->data().poll(c, 4, 0).value() == 0; ++i) std::this_thread::sleep_for(1ms);
  });
  const auto t0 = Clock::now();
  const double cpu0 = thread_cpu_s();
  FabricCompletion c[4];
  size_t n = 0;
  while (n == 0 && seconds_since(t0) < 20) n = rx.poll(c, 4, 5000, 0).value();
  const double waited = seconds_since(t0), cpu = thread_cpu_s() - cpu0;
  sender.join();
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(c[0].ctx, &rctx);
  EXPECT_EQ(got, word);
  EXPECT_LT(waited, 2.5) << "the send did not wake the sleeping poll";
  EXPECT_LT(cpu, 0.1) << "the poll spun instead of sleeping (" << cpu << " s of CPU in " << waited << " s)";
}

TEST(FabricEndpoint, ALargeMessageInFlightKeepsBothSidesFromSleeping) {
  // A message larger than the inject size completes at the sender only after the receiver has copied it, which
  // rings no bell: a sender asleep on its bell would wait out its 5 s poll.
  auto fcs = sealed_pair();
  ASSERT_EQ(fcs.size(), 2u);
  const size_t bytes = 4 << 20;
  std::vector<char> src(bytes, 'x'), dst(bytes, 0);
  FabricOpContext sctx, rctx;
  double sender_s = 0, receiver_s = 0;
  std::thread receiver([&] {
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(100ms);  // the sender posts first and polls (must not sleep) until this copies
    ASSERT_TRUE(fcs[1]->data().recv(fcs[1]->data_addr(0), dst.data(), bytes, 9, &rctx).value());
    FabricCompletion c[4];
    size_t n = 0;
    while (n == 0 && seconds_since(t0) < 20) n = fcs[1]->data().poll(c, 4, 5000, 0).value();
    receiver_s = seconds_since(t0);
  });
  const auto t0 = Clock::now();
  bool posted = false;
  FabricCompletion c[4];
  while (!posted && seconds_since(t0) < 5) {
    posted = fcs[0]->data().send(fcs[0]->data_addr(1), src.data(), bytes, 9, &sctx).value();
    if (!posted) (void)fcs[0]->data().poll(c, 4, 0);
  }
  ASSERT_TRUE(posted);
  size_t n = 0;
  while (n == 0 && seconds_since(t0) < 20) n = fcs[0]->data().poll(c, 4, 5000, 0).value();
  sender_s = seconds_since(t0);
  receiver.join();
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(c[0].ctx, &sctx);
  EXPECT_TRUE(c[0].status.is_ok()) << c[0].status.message();
  EXPECT_EQ(dst, src);
  EXPECT_LT(sender_s, 2.5) << "the sender slept through the completion of its large send";
  EXPECT_LT(receiver_s, 2.5);
}

}  // namespace
}  // namespace genie::shim
