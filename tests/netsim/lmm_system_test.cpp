// SPDX-License-Identifier: Apache-2.0
// Tests of lmm::System: max-min fairness, bounds, weights, disabled variables and incremental solving.
#include "lmm/lmm_system.hpp"

#include <gtest/gtest.h>

namespace genie::netsim::lmm {
namespace {

constexpr double kRateTol = 1e-6;  // relative to capacities of order 1..100

TEST(LmmSystem, TwoFlowsShareOneBottleneckEqually) {
  // System: x1 + x2 <= 10.  Expectations: x1 = x2 = 5.
  System s;
  const Id c = s.add_constraint(10);
  const Id x1 = s.add_variable(1), x2 = s.add_variable(1);
  s.expand(x1, c);
  s.expand(x2, c);
  s.solve();
  EXPECT_NEAR(s.rate(x1), 5, kRateTol);
  EXPECT_NEAR(s.rate(x2), 5, kRateTol);
}

TEST(LmmSystem, IncastOfKSendersGetsOneKthEach) {
  // System: k senders x_i each on their own uplink (cap 10) and all on one downlink (cap 10).
  // Expectations: x_i = 10 / k.
  for (int k : {2, 3, 7}) {
    System s;
    const Id down = s.add_constraint(10);
    std::vector<Id> xs;
    for (int i = 0; i < k; ++i) {
      const Id up = s.add_constraint(10);
      const Id x = s.add_variable(1);
      s.expand(x, up);
      s.expand(x, down);
      xs.push_back(x);
    }
    s.solve();
    for (Id x : xs) EXPECT_NEAR(s.rate(x), 10.0 / k, kRateTol) << "k=" << k;
  }
}

TEST(LmmSystem, MaxMinGivesLeftoverToUnconstrainedFlow) {
  // System: x1 + x2 <= 10 (link A), x2 + x3 <= 4 (link B).
  // Expectations: B saturates first: x2 = x3 = 2; then x1 takes the rest of A: x1 = 8.
  System s;
  const Id a = s.add_constraint(10), b = s.add_constraint(4);
  const Id x1 = s.add_variable(1), x2 = s.add_variable(1), x3 = s.add_variable(1);
  s.expand(x1, a);
  s.expand(x2, a);
  s.expand(x2, b);
  s.expand(x3, b);
  s.solve();
  EXPECT_NEAR(s.rate(x1), 8, kRateTol);
  EXPECT_NEAR(s.rate(x2), 2, kRateTol);
  EXPECT_NEAR(s.rate(x3), 2, kRateTol);
}

TEST(LmmSystem, BoundAndWeightAreHonoured) {
  // System: x1 + x2 + x3 <= 12, x1 <= 1, weight(x3) = 2 * weight(x2).
  // Expectations: x1 = 1, x2 = 11/3, x3 = 22/3.
  System s;
  const Id c = s.add_constraint(12);
  const Id x1 = s.add_variable(1, 1.0), x2 = s.add_variable(1), x3 = s.add_variable(2);
  for (Id x : {x1, x2, x3}) s.expand(x, c);
  s.solve();
  EXPECT_NEAR(s.rate(x1), 1, kRateTol);
  EXPECT_NEAR(s.rate(x2), 11.0 / 3, kRateTol);
  EXPECT_NEAR(s.rate(x3), 22.0 / 3, kRateTol);
}

TEST(LmmSystem, DisabledVariableConsumesNothingUntilEnabled) {
  // System: x1 + x2 <= 10 with x2 disabled (latency phase). Expectations: x1 = 10, x2 = 0; after enabling
  // x2: 5 and 5.
  System s;
  const Id c = s.add_constraint(10);
  const Id x1 = s.add_variable(1), x2 = s.add_variable(0);
  s.expand(x1, c);
  s.expand(x2, c);
  s.solve();
  EXPECT_NEAR(s.rate(x1), 10, kRateTol);
  EXPECT_EQ(s.rate(x2), 0);
  s.set_weight(x2, 1);
  s.solve();
  EXPECT_NEAR(s.rate(x1), 5, kRateTol);
  EXPECT_NEAR(s.rate(x2), 5, kRateTol);
}

TEST(LmmSystem, ResolvesOnlyTheTouchedComponent) {
  // System: 100 independent links, each with one flow. Changing one flow must re-solve only its component
  // (1 variable visited) and report only that variable as changed.
  System s;
  std::vector<Id> xs;
  for (int i = 0; i < 100; ++i) {
    const Id c = s.add_constraint(10);
    const Id x = s.add_variable(1);
    s.expand(x, c);
    xs.push_back(x);
  }
  EXPECT_EQ(s.solve(), 100u);
  EXPECT_EQ(s.solve(), 0u);  // nothing modified
  // Add a second flow on link 42: its component is {old flow 42, new flow}.
  const Id extra = s.add_variable(1);
  s.expand(extra, 42);
  EXPECT_EQ(s.solve(), 2u);
  EXPECT_NEAR(s.rate(xs[42]), 5, kRateTol);
  EXPECT_NEAR(s.rate(xs[41]), 10, kRateTol);
  ASSERT_EQ(s.changed().size(), 2u);
  // Removing it restores the old rate, again touching only that component.
  s.remove_variable(extra);
  EXPECT_EQ(s.solve(), 1u);
  EXPECT_NEAR(s.rate(xs[42]), 10, kRateTol);
}

TEST(LmmSystem, ReusesRemovedVariableSlots) {
  System s;
  const Id c = s.add_constraint(8);
  const Id x1 = s.add_variable(1);
  s.expand(x1, c);
  s.remove_variable(x1);
  const Id x2 = s.add_variable(1);
  s.expand(x2, c);
  s.solve();
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(s.variable_count(), 1u);
  EXPECT_NEAR(s.rate(x2), 8, kRateTol);
  EXPECT_NEAR(s.usage(c), 8, kRateTol);
}

}  // namespace
}  // namespace genie::netsim::lmm
