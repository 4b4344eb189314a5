// SPDX-License-Identifier: Apache-2.0
// Tests of siphash24 against the SipHash paper's vectors, and of the constant-time comparison.
#include "genie/common/siphash.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace genie {
namespace {

std::array<uint8_t, 16> paper_key() {
  std::array<uint8_t, 16> k{};
  std::iota(k.begin(), k.end(), uint8_t{0});  // 00 01 .. 0f
  return k;
}

TEST(SipHash, PaperAppendixVector) {
  // Appendix A of the paper: key 00..0f, message 00..0e (15 bytes) -> a129ca6149be45e5.
  std::vector<uint8_t> msg(15);
  std::iota(msg.begin(), msg.end(), uint8_t{0});
  EXPECT_EQ(siphash24(paper_key(), msg.data(), msg.size()), 0xa129ca6149be45e5ull);
}

TEST(SipHash, EmptyMessageVector) {
  // First entry of the reference implementation's vectors_sip64 table: key 00..0f, empty input.
  EXPECT_EQ(siphash24(paper_key(), nullptr, 0), 0x726fdb47dd0e0e31ull);
}

TEST(SipHash, EveryKeyAndMessageBitMatters) {
  std::vector<uint8_t> msg(24, 0x5a);
  const uint64_t base = siphash24(paper_key(), msg.data(), msg.size());
  for (size_t byte = 0; byte < msg.size(); ++byte) {
    auto m = msg;
    m[byte] ^= 1;
    EXPECT_NE(siphash24(paper_key(), m.data(), m.size()), base) << byte;
  }
  for (size_t byte = 0; byte < 16; ++byte) {
    auto k = paper_key();
    k[byte] ^= 0x80;
    EXPECT_NE(siphash24(k, msg.data(), msg.size()), base) << byte;
  }
  // Length is part of the input: a trailing zero byte changes the result.
  msg.push_back(0);
  EXPECT_NE(siphash24(paper_key(), msg.data(), msg.size()), base);
}

TEST(SipHash, ConstantTimeEquality) {
  const char a[] = "genie-secret-0001";
  const char b[] = "genie-secret-0002";
  EXPECT_TRUE(equal_constant_time(a, a, sizeof(a)));
  EXPECT_FALSE(equal_constant_time(a, b, sizeof(a)));
  EXPECT_TRUE(equal_constant_time(a, b, 15));
}

}  // namespace
}  // namespace genie
