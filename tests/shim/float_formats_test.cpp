// SPDX-License-Identifier: Apache-2.0
// Narrow float conversions (float_formats.hpp): exhaustive decoding, round-to-nearest-even encoding against a
// search-based reference, saturation and the edge cases of each format.
#include "reduce/float_formats.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "float_format_reference.hpp"

namespace genie::shim {
namespace {

using namespace testref;  // NOLINT

/// Every code decodes to its field value: bitwise (so -0 stays -0), NaN codes to a NaN.
void check_decode_all_codes(const FormatSpec& f) {
  for (uint32_t code = 0; code < (1u << f.bits); ++code) {
    const double want = ref_decode(f, code);
    const float got = lib_decode(f, code);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << f.name << " code 0x" << std::hex << code;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(static_cast<float>(want)))
          << f.name << " code 0x" << std::hex << code << " want " << want << " got " << got;
    }
  }
}

/// Inputs that exercise rounding: every value, every midpoint between neighbours (exact ties: a midpoint needs
/// one more bit than the format, which float has), the floats just either side of each midpoint, specials, and
/// random floats (both random bit patterns and values within the format's range).
std::vector<float> rounding_inputs(const FormatSpec& f) {
  std::vector<float> in;
  const float inf = std::numeric_limits<float>::infinity();
  for (uint32_t c = 0; c <= f.max_finite; ++c) {
    const double v = ref_decode(f, c);
    const double next = c < f.max_finite ? ref_decode(f, c + 1)
                                         : v + std::ldexp(1.0, static_cast<int>(c >> f.man_bits) - f.bias - f.man_bits);
    const auto mid = static_cast<float>((v + next) / 2);
    for (float x : {static_cast<float>(v), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, inf)}) {
      in.push_back(x);
      in.push_back(-x);
    }
  }
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), 1e30f, -1e30f}) {
    in.push_back(x);
  }
  std::mt19937 rng(1234);
  const double range =
      std::min(2 * ref_decode(f, f.max_finite), static_cast<double>(std::numeric_limits<float>::max()));
  std::uniform_real_distribution<double> in_range(-range, range);
  for (int i = 0; i < 200000; ++i) {
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
    in.push_back(static_cast<float>(in_range(rng)));
    // Small magnitudes, log-uniform, to hit the subnormal range of every format.
    in.push_back(static_cast<float>(std::ldexp(in_range(rng) / range, -static_cast<int>(rng() % 30))));
  }
  return in;
}

void check_encode(const FormatSpec& f) {
  for (float x : rounding_inputs(f)) {
    ASSERT_EQ(lib_encode(f, x), ref_encode(f, x))
        << f.name << " input " << x << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(x) << ")";
  }
}

// ------------------------------------------------------------------------------------------------------------

TEST(FloatFormats, ConversionsAreConstexpr) {
  // System: the conversions evaluated at compile time. Expectation: 1.0 is 0x3C00 (half), 0x3F80 (bfloat16),
  // 0x38 (e4m3: exponent 7 = bias), 0x3C (e5m2: exponent 15 = bias), and decoding inverts it.
  static_assert(float_to_half(1.0f) == 0x3C00 && half_to_float(0x3C00) == 1.0f);
  static_assert(float_to_bfloat16(1.0f) == 0x3F80 && bfloat16_to_float(0x3F80) == 1.0f);
  static_assert(float_to_fp8_e4m3(1.0f) == 0x38 && fp8_e4m3_to_float(0x38) == 1.0f);
  static_assert(float_to_fp8_e5m2(1.0f) == 0x3C && fp8_e5m2_to_float(0x3C) == 1.0f);
  SUCCEED();
}

TEST(FloatFormats, HalfDecodesEveryCodeExactly) {
  // System: half_to_float over all 65536 codes. Expectation: the IEEE binary16 field value, bit for bit.
  check_decode_all_codes(kHalf);
}

TEST(FloatFormats, HalfEncodeRoundsToNearestEven) {
  // System: float_to_half over every half value, midpoint, near-midpoint and random floats. Expectation: the
  // nearest half by search, ties to even, overflow to inf, NaN to 0x7FFF.
  check_encode(kHalf);
}

#if defined(__FLT16_MAX__)
TEST(FloatFormats, HalfAgreesWithCompilerFloat16) {
  // System: our half conversions against the compiler's _Float16 (GCC >= 12 on x86-64: libgcc's correctly
  // rounded __truncsfhf2/__extendhfsf2), an independent implementation. Expectation: identical bits for every
  // half code and every rounding input, except that NaNs only need to stay NaN.
  for (uint32_t code = 0; code < 65536; ++code) {
    const auto h = std::bit_cast<_Float16>(static_cast<uint16_t>(code));
    const auto want = static_cast<float>(h);
    const float got = half_to_float(static_cast<uint16_t>(code));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << code;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << std::hex << code;
    }
  }
  for (float x : rounding_inputs(kHalf)) {
    const auto want = std::bit_cast<uint16_t>(static_cast<_Float16>(x));
    if (std::isnan(x)) continue;
    ASSERT_EQ(float_to_half(x), want) << x;
  }
}
#endif

TEST(FloatFormats, HalfEdgeCases) {
  // System: float_to_half / half_to_float at the edges of binary16.
  // Expectation: 65504 is the max finite (0x7BFF); 65519.99 still rounds down to it, 65520 (the midpoint to the
  // next power of two, 65536) rounds to even = overflow = inf; 2^-24 is the min subnormal (0x0001), 2^-25 (tie
  // between 0 and it) rounds to even 0, 3 * 2^-25 (tie between 1 and 2 ulps) to even 2; 2^-14 is the min normal
  // (0x0400); 1 + 2^-11 (tie) -> 1.0, 1 + 3 * 2^-11 (tie) -> 1 + 2^-9; +-inf stay inf; NaN -> canonical 0x7FFF.
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_half(-65520.0f), 0xFC00);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -26)), 0x8000);  // underflow keeps the sign
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400);
  EXPECT_EQ(float_to_half(std::ldexp(1023.0f, -24)), 0x03FF);  // max subnormal
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(3.0f, -11)), 0x3C02);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()), 0x7FFF);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7C01)));  // signaling NaN pattern
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
}

TEST(FloatFormats, Bfloat16DecodesEveryCodeExactly) {
  // System: bfloat16_to_float over all 65536 codes. Expectation: the field value (8-bit exponent, bias 127).
  check_decode_all_codes(kBf16);
}

TEST(FloatFormats, Bfloat16EncodeRoundsToNearestEven) {
  // System: float_to_bfloat16 over every bfloat16 value, midpoint, near-midpoint and random floats.
  // Expectation: the nearest bfloat16 by search, ties to even, overflow to inf, NaN to 0x7FFF.
  check_encode(kBf16);
}

TEST(FloatFormats, Bfloat16EdgeCases) {
  // System: float_to_bfloat16 at ties and limits. Expectation: 1 + 2^-8 (tie) -> 1.0 (0x3F80, even);
  // 1 + 3 * 2^-8 (tie) -> 1 + 2^-6 (0x3F82); FLT_MAX rounds past the max bfloat16 (0x7F7F) to inf; the float
  // subnormal tie 0x00008000 rounds to +0 and 0x00018000 to 0x0002; NaN -> 0x7FFF; inf stays inf.
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(3.0f, -8)), 0x3F82);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7F7F7FFFu)), 0x7F7F);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x00008000u)), 0x0000);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x00018000u)), 0x0002);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::quiet_NaN()), 0x7FFF);
  EXPECT_EQ(float_to_bfloat16(-std::numeric_limits<float>::infinity()), 0xFF80);
  EXPECT_EQ(bfloat16_to_float(0x3F82), 1.0f + std::ldexp(1.0f, -6));
}

TEST(FloatFormats, E4m3DecodesEveryCodeExactly) {
  // System: fp8_e4m3_to_float over all 256 codes. Expectation: OFP8 E4M3 field values (bias 7, exponent 15 is
  // a normal binade), 0x7F and 0xFF NaN.
  check_decode_all_codes(kE4m3);
}

TEST(FloatFormats, E4m3EncodeRoundsToNearestEvenAndSaturates) {
  // System: float_to_fp8_e4m3 over every e4m3 value, midpoint, near-midpoint and random floats.
  // Expectation: the nearest e4m3 by search, ties to even, anything rounding above 448 -> +-448, NaN -> 0x7F.
  check_encode(kE4m3);
}

TEST(FloatFormats, E4m3EdgeCases) {
  // System: float_to_fp8_e4m3 / fp8_e4m3_to_float at the edges of OFP8 E4M3 (E4M3FN).
  // Expectation: 448 is the max (0x7E); 464 (tie between 448 and the would-be 480, code 0x7F) rounds to even
  // 448; 1e6 saturates to 448 (__NV_SATFINITE); +-inf also saturate to +-448: CUDA's __nv_cvt_float_to_fp8 with
  // __NV_SATFINITE returns MAXNORM for inf (its NaN test is `absx > inf`, so inf takes the overflow branch), and
  // we do the same; NaN -> 0x7F; 2^-9 is the min subnormal (0x01); 2^-10 (tie with 0) -> 0; 1.5 * 2^-10 -> 0x01;
  // 2^-6 is the min normal (0x08).
  EXPECT_EQ(float_to_fp8_e4m3(448.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(464.0f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(1e6f), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-1e6f), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(float_to_fp8_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.0f, -9)), 0x01);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.5f, -10)), 0x01);
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.0f, -6)), 0x08);
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(fp8_e4m3_to_float(0x78), 256.0f);  // exponent 15 is finite in E4M3FN
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0xFF)));
}

TEST(FloatFormats, E5m2DecodesEveryCodeExactly) {
  // System: fp8_e5m2_to_float over all 256 codes. Expectation: OFP8 E5M2 field values (bias 15), 0x7C inf,
  // 0x7D..0x7F NaN.
  check_decode_all_codes(kE5m2);
}

TEST(FloatFormats, E5m2EncodeRoundsToNearestEvenAndSaturates) {
  // System: float_to_fp8_e5m2 over every e5m2 value, midpoint, near-midpoint and random floats.
  // Expectation: the nearest e5m2 by search, ties to even, anything rounding above 57344 -> +-57344 (inf
  // included), NaN -> 0x7F.
  check_encode(kE5m2);
}

TEST(FloatFormats, E5m2EdgeCases) {
  // System: float_to_fp8_e5m2 / fp8_e5m2_to_float at the edges of OFP8 E5M2.
  // Expectation: 57344 is the max (0x7B); 61440 (tie between 57344, odd, and 65536) rounds to even = overflow,
  // which saturates to 57344; 1e6 and +-inf saturate to +-57344 (SATFINITE, as for e4m3); NaN -> 0x7F; 2^-16 is
  // the min subnormal (0x01); decoding 0x7C gives inf and 0x7D NaN.
  EXPECT_EQ(float_to_fp8_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(61440.0f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(1e6f), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_EQ(float_to_fp8_e5m2(-std::numeric_limits<float>::infinity()), 0xFB);
  EXPECT_EQ(float_to_fp8_e5m2(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(float_to_fp8_e5m2(std::ldexp(1.0f, -16)), 0x01);
  EXPECT_EQ(float_to_fp8_e5m2(std::ldexp(1.0f, -17)), 0x00);
  EXPECT_EQ(fp8_e5m2_to_float(0x7B), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(fp8_e5m2_to_float(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp8_e5m2_to_float(0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_float(0x7D)));
}

}  // namespace
}  // namespace genie::shim
