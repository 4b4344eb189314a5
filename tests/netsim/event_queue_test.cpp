// SPDX-License-Identifier: Apache-2.0
// Tests of common's EventQueue (used by netsim's engine): ordering and (time, seq) tie-breaking.
#include "genie/common/event_queue.hpp"

#include <gtest/gtest.h>

namespace genie {
namespace {

TEST(EventQueue, PopsByTimeThenInsertionOrder) {
  // Events at t=5 (a), t=1 (b), t=5 (c), t=1 (d). Expectation: b, d, a, c.
  EventQueue q;
  q.push(SimTime::ns(5), 'a');
  q.push(SimTime::ns(1), 'b');
  q.push(SimTime::ns(5), 'c');
  q.push(SimTime::ns(1), 'd');
  std::string order;
  while (auto e = q.pop()) order.push_back(static_cast<char>(e->payload));
  EXPECT_EQ(order, "bdac");
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.peek().has_value());
}

}  // namespace
}  // namespace genie
