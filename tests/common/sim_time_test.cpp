// SPDX-License-Identifier: Apache-2.0
// Tests of SimTime: integer arithmetic and explicit rounding from doubles.
#include "genie/common/sim_time.hpp"

#include <gtest/gtest.h>

namespace genie {
namespace {

TEST(SimTime, UnitsAndArithmetic) {
  EXPECT_EQ(SimTime::us(3).count_ns(), 3000);
  EXPECT_EQ((SimTime::ms(1) - SimTime::us(1)).count_ns(), 999000);
  EXPECT_EQ(max(SimTime::ns(5), SimTime::ns(7)), SimTime::ns(7));
  EXPECT_LT(SimTime::ns(-1), SimTime::zero());
}

TEST(SimTime, RoundsDoublesToNearestNanosecond) {
  EXPECT_EQ(SimTime::from_ns_double(1.4).count_ns(), 1);
  EXPECT_EQ(SimTime::from_ns_double(1.5).count_ns(), 2);
  EXPECT_EQ(SimTime::from_seconds(2.5e-6).count_ns(), 2500);
}

}  // namespace
}  // namespace genie
