// SPDX-License-Identifier: Apache-2.0
// SharedSegment: waiting wakes on a peer's update and gives up when the check says so.
#include "shared_segment.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>

namespace genie::shim {
namespace {

TEST(SharedSegment, AWaiterWakesWhenThePeerPublishes) {
  auto s = SharedSegment::create(2, 42);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  std::unique_ptr<SharedSegment> seg(s.value());
  std::thread peer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    seg->slot(1).arrived.store(7, std::memory_order_release);
    seg->ring();
  });
  Status st =
      seg->wait([&] { return seg->slot(1).arrived.load(std::memory_order_acquire) == 7; }, [] { return Status::ok(); });
  peer.join();
  EXPECT_TRUE(st.is_ok()) << st.to_string();
}

TEST(SharedSegment, TheCheckEndsAWaitThatCannotComplete) {
  auto s = SharedSegment::create(2, 43);
  ASSERT_TRUE(s.is_ok());
  std::unique_ptr<SharedSegment> seg(s.value());
  int checks = 0;
  Status st = seg->wait([] { return false; },
                        [&] { return ++checks >= 3 ? Status(Errc::kRemote, "peer gone") : Status::ok(); });
  EXPECT_EQ(st.code(), Errc::kRemote);
  EXPECT_EQ(checks, 3);
}

TEST(SharedSegment, OpeningChecksTheIdAndMapsTheSamePages) {
  auto s = SharedSegment::create(3, 44);
  ASSERT_TRUE(s.is_ok());
  std::unique_ptr<SharedSegment> seg(s.value());
  seg->mailbox(2, 1).posted.store(5);
  auto bad = SharedSegment::open(getpid(), seg->fd(), 45, 3);
  ASSERT_FALSE(bad.is_ok());
  auto good = SharedSegment::open(getpid(), seg->fd(), 44, 3);
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();
  std::unique_ptr<SharedSegment> other(good.value());
  EXPECT_EQ(other->mailbox(2, 1).posted.load(), 5u);
}

}  // namespace
}  // namespace genie::shim
