// SPDX-License-Identifier: Apache-2.0
// Tests of Status, Result and the GENIE_TRY / GENIE_ASSIGN_OR_RETURN propagation macros.
#include "genie/common/status.hpp"

#include <gtest/gtest.h>

namespace genie {
namespace {

Result<int> half(int x) {
  if (x % 2 != 0) return invalid_argument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> quarter(int x) {
  GENIE_ASSIGN_OR_RETURN(int h, half(x));
  GENIE_ASSIGN_OR_RETURN(int q, half(h));
  return q;
}

Status check_quarter(int x) {
  GENIE_TRY(quarter(x));
  return Status::ok();
}

TEST(Status, PropagatesTheFirstError) {
  EXPECT_EQ(quarter(8).value(), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "odd: 3");
  EXPECT_TRUE(check_quarter(4).is_ok());
  EXPECT_EQ(check_quarter(5).to_string(), "InvalidArgument: odd: 5");
}

TEST(Status, ResultFromOkStatusIsAnInternalError) {
  Result<int> r{Status::ok()};
  EXPECT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kInternal);
}

TEST(StatusDeathTest, AssertAbortsWithLocation) {
  EXPECT_DEATH(GENIE_ASSERT(1 + 1 == 3, "math is broken"), "math is broken");
}

}  // namespace
}  // namespace genie
