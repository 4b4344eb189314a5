// SPDX-License-Identifier: Apache-2.0
// Test-only references for the narrow float formats (half, bfloat16, OFP8 e4m3/e5m2), written from the
// specifications, and adapters to the library's conversions; shared by float_formats_test and reduce_kernels_test.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "reduce/float_formats.hpp"

namespace genie::shim::testref {

// ============================================================================================================
// Conversion references
// ============================================================================================================

/// A narrow binary format as the specifications describe it (IEEE 754 binary16; bfloat16; OCP OFP8 rev 1.0).
struct FormatSpec {
  const char* name;
  int bits;             ///< total width
  int man_bits;         ///< fraction bits
  int bias;             ///< exponent bias
  bool ieee_special;    ///< all-ones exponent = inf (fraction 0) / NaN; otherwise only S.1111.111 is NaN (e4m3)
  uint32_t max_finite;  ///< magnitude code of the largest finite value
  bool saturate;        ///< overflow gives max_finite (fp8, __NV_SATFINITE) instead of inf
  uint32_t nan_code;    ///< canonical NaN the conversion produces
};

// inline: one object per format across test files (lib_decode/lib_encode compare addresses).
inline constexpr FormatSpec kHalf = {"half", 16, 10, 15, true, 0x7BFF, false, 0x7FFF};
inline constexpr FormatSpec kBf16 = {"bfloat16", 16, 7, 127, true, 0x7F7F, false, 0x7FFF};
inline constexpr FormatSpec kE4m3 = {"e4m3", 8, 3, 7, false, 0x7E, true, 0x7F};
inline constexpr FormatSpec kE5m2 = {"e5m2", 8, 2, 15, true, 0x7B, true, 0x7F};

/// Value of a code from its fields, in double: (-1)^s 2^(e-bias) (1 + f/2^M), subnormal (-1)^s 2^(1-bias) f/2^M.
inline double ref_decode(const FormatSpec& f, uint32_t code) {
  const uint32_t sign = code >> (f.bits - 1);
  const uint32_t mag = code & ((1u << (f.bits - 1)) - 1);
  const uint32_t exp = mag >> f.man_bits;
  const uint32_t frac = mag & ((1u << f.man_bits) - 1);
  const uint32_t exp_all_ones = (1u << (f.bits - 1 - f.man_bits)) - 1;
  double v;
  if (f.ieee_special && exp == exp_all_ones) {
    v = frac == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.ieee_special && mag == (1u << (f.bits - 1)) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(frac), 1 - f.bias - f.man_bits);
  } else {
    v = std::ldexp(static_cast<double>(frac + (1u << f.man_bits)), static_cast<int>(exp) - f.bias - f.man_bits);
  }
  return sign ? -v : v;
}

/// Round to nearest even by search: the finite magnitude code nearest |x|, where one more code above the max
/// stands for the next value an unbounded exponent range would have (IEEE 754 overflow rule); ties go to the
/// even code. Positive codes are ordered like their values, so a binary search finds the neighbours.
inline uint32_t ref_round_magnitude(const FormatSpec& f, double ax) {
  const double top =
      ref_decode(f, f.max_finite) + std::ldexp(1.0, static_cast<int>(f.max_finite >> f.man_bits) - f.bias - f.man_bits);
  auto value = [&](uint32_t c) { return c > f.max_finite ? top : ref_decode(f, c); };
  if (ax >= top) return f.max_finite + 1;
  uint32_t lo = 0, hi = f.max_finite + 1;  // value(lo) <= ax < value(hi)
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= ax ? lo : hi) = mid;
  }
  const double dlo = ax - value(lo), dhi = value(hi) - ax;
  if (dlo < dhi) return lo;
  if (dhi < dlo) return hi;
  return (lo & 1) == 0 ? lo : hi;
}

/// float -> code reference: NaN -> canonical NaN; overflow -> inf or (saturate) max finite; sign kept.
inline uint32_t ref_encode(const FormatSpec& f, float x) {
  if (std::isnan(x)) return f.nan_code;
  uint32_t mag = ref_round_magnitude(f, std::fabs(static_cast<double>(x)));
  if (mag > f.max_finite) mag = f.saturate ? f.max_finite : f.max_finite + 1;  // max + 1 is inf when not saturating
  return (std::signbit(x) ? 1u << (f.bits - 1) : 0u) | mag;
}

inline float lib_decode(const FormatSpec& f, uint32_t code) {
  if (&f == &kHalf) return half_to_float(static_cast<uint16_t>(code));
  if (&f == &kBf16) return bfloat16_to_float(static_cast<uint16_t>(code));
  if (&f == &kE4m3) return fp8_e4m3_to_float(static_cast<uint8_t>(code));
  return fp8_e5m2_to_float(static_cast<uint8_t>(code));
}
inline uint32_t lib_encode(const FormatSpec& f, float x) {
  if (&f == &kHalf) return float_to_half(x);
  if (&f == &kBf16) return float_to_bfloat16(x);
  if (&f == &kE4m3) return float_to_fp8_e4m3(x);
  return float_to_fp8_e5m2(x);
}

}  // namespace genie::shim::testref
