// SPDX-License-Identifier: Apache-2.0
// Bit-level conversions between float and the narrow NCCL floating types: half, bfloat16, fp8 e4m3 and e5m2.
//
// Formats (all sign-magnitude binary floating point, sign in the top bit):
//   half     IEEE 754-2008 binary16: 5 exponent bits (bias 15), 10 fraction bits, inf/NaN at exponent 31;
//            max finite 65504, min subnormal 2^-24.
//   bfloat16 the top 16 bits of an IEEE binary32 (8 exponent bits, bias 127, 7 fraction bits).
//   e4m3     OCP 8-bit Floating Point Specification (OFP8) rev 1.0, E4M3 ("E4M3FN", CUDA __nv_fp8_e4m3): bias 7,
//            3 fraction bits, no infinities, S.1111.111 is NaN, so exponent 15 holds normals up to
//            1.75 * 2^8 = 448; min subnormal 2^-9.
//   e5m2     OFP8 rev 1.0 E5M2 (CUDA __nv_fp8_e5m2): bias 15, 2 fraction bits, IEEE-like inf (S.11111.00) and
//            NaN (S.11111.xx, xx != 0); max finite 1.75 * 2^15 = 57344, min subnormal 2^-16.
//
// float -> narrow rounds to nearest, ties to even, as CUDA's __float2half_rn / __float2bfloat16_rn /
// __nv_cvt_float_to_fp8(.., __NV_SATFINITE, ..) do. half and bfloat16 overflow to inf as IEEE requires. fp8
// saturates to the max finite value (NCCL's __nv_fp8_e4m3/__nv_fp8_e5m2 constructors use __NV_SATFINITE), and
// so does an infinite input: CUDA's host path (cuda_fp8.hpp, __nv_cvt_double_to_fp8, CUDA 12.2) tests NaN with
// `absx > DP_INF_BITS`, so inf falls into the next case, `absx > FP8_OVERFLOW_THRESHOLD`, which returns
// MAXNORM | sign under __NV_SATFINITE; the device path, PTX `cvt.rn.satfinite.e4m3x2.f32`, likewise gives the
// sign-preserved MAX_NORM for any |input| > MAX_NORM. So +-inf -> +-448 (e4m3), +-57344 (e5m2). NaN stays NaN,
// as the canonical code CUDA produces: 0x7FFF (half, bfloat16), 0x7F (fp8), sign dropped. narrow -> float is
// exact (every narrow value is a float); a NaN becomes a quiet float NaN.
//
// The functions are branch-free selects on 32-bit integers, without tables, so that GCC vectorizes loops over
// them with plain SSE2; they are forced inline because GCC otherwise leaves the generic ones out of line, and a
// call per element blocks vectorization. Rounding to a narrow subnormal uses one float addition (a "magic
// number" whose ulp is the narrow subnormal step), so it assumes the default round-to-nearest-even
// floating-point environment, like every other float operation in the reduction kernels. Flush-to-zero and
// denormals-are-zero modes do not matter: no intermediate is a float subnormal, and a subnormal float input
// rounds to zero in every narrow format anyway.
#pragma once

#include <bit>
#include <cstdint>

namespace genie::shim {

namespace float_formats_detail {

constexpr uint32_t bits_of(float f) noexcept { return std::bit_cast<uint32_t>(f); }
constexpr float float_of(uint32_t u) noexcept { return std::bit_cast<float>(u); }

/// c ? a : b with masks. A plain ?: lets GCC turn the selects into branches and sink the float operation that
/// only one arm needs into them; under the default -ftrapping-math it will not then execute that operation
/// for every element, so the branch stays and the loop is not vectorized. (Executing it for every element is
/// harmless: at worst it raises a floating-point status flag for a lane whose result is discarded.)
[[gnu::always_inline]] constexpr uint32_t select_bits(bool c, uint32_t a, uint32_t b) noexcept {
  return b ^ ((a ^ b) & (0u - static_cast<uint32_t>(c)));
}

/// Describes a narrow format to the generic conversions below. Codes without a sign are magnitudes (sign bit
/// cleared); kOverflowCode and kNanCode are whole encodings.
template <int kBitsT, int kManBitsT, int kBiasT, bool kHasInfT, uint32_t kMaxFiniteT, uint32_t kOverflowCodeT,
          uint32_t kNanCodeT>
struct NarrowFormat {
  static constexpr int kBits = kBitsT;                       ///< total width
  static constexpr int kManBits = kManBitsT;                 ///< fraction bits
  static constexpr int kExpBits = kBits - 1 - kManBits;      ///< exponent bits
  static constexpr int kBias = kBiasT;                       ///< exponent bias
  static constexpr bool kHasInf = kHasInfT;                  ///< IEEE-like: all-ones exponent is inf/NaN
  static constexpr uint32_t kMaxFinite = kMaxFiniteT;        ///< magnitude code of the largest finite value
  static constexpr uint32_t kOverflowCode = kOverflowCodeT;  ///< what a too-large magnitude becomes (inf or max)
  static constexpr uint32_t kNanCode = kNanCodeT;            ///< the canonical NaN produced from a float NaN
};

// Without inf (e4m3) the only NaN magnitude is all ones, which is also kMaxFinite + 1.
using HalfFormat = NarrowFormat<16, 10, 15, true, 0x7BFF, 0x7C00, 0x7FFF>;
using E4m3Format = NarrowFormat<8, 3, 7, false, 0x7E, 0x7E, 0x7F>;
using E5m2Format = NarrowFormat<8, 2, 15, true, 0x7B, 0x7B, 0x7F>;

/// float -> narrow code, round to nearest even; overflow gives F::kOverflowCode, NaN gives F::kNanCode.
template <class F>
[[gnu::always_inline]] constexpr uint32_t encode(float f) noexcept {
  constexpr int kShift = 23 - F::kManBits;  // float fraction bits dropped
  constexpr uint32_t kMinNormalBits = static_cast<uint32_t>(127 + 1 - F::kBias) << 23;  // 2^(1-bias)
  // A float whose ulp is the narrow subnormal step 2^(1-bias-M): 2^(24-bias-M) (a float's ulp is 2^-23 of
  // its power of two).
  constexpr uint32_t kMagicBits = static_cast<uint32_t>(127 + 24 - F::kBias - F::kManBits) << 23;
  // Rebias the exponent from 127 to F::kBias and add half an ulp minus one, in one constant (mod 2^32).
  constexpr uint32_t kRebiasRound = ((1u << (kShift - 1)) - 1u) - (static_cast<uint32_t>(127 - F::kBias) << 23);

  const uint32_t x = bits_of(f);
  const uint32_t sign = x & 0x80000000u;
  const uint32_t a = x ^ sign;  // |f|; NaNs are above 0x7F800000
  // Comparisons are done as int32: the operands are below 2^31, and SSE2 only has signed vector comparisons
  // (an unsigned one costs two extra operations).
  const auto sa = static_cast<int32_t>(a);
  // Normal result: rebias the exponent and drop kShift fraction bits, after adding half an ulp minus one plus
  // the lowest kept bit, which rounds to nearest with ties to even. A carry out of the fraction bumps the
  // exponent, which is the correct result (next binade, or past the max finite value: overflow below). Cannot
  // wrap for |f| >= 2^(1-bias); below that it wraps harmlessly, the subnormal result being used instead.
  const uint32_t odd = (a >> kShift) & 1u;
  const uint32_t normal = (a + kRebiasRound + odd) >> kShift;
  // Subnormal result: adding the magic number aligns the narrow subnormal step with the float's last bit, so the
  // FPU rounds (to nearest even); the low bits of the sum are then the code, up to 2^M = the min normal.
  const uint32_t sub = bits_of(float_of(a) + float_of(kMagicBits)) - kMagicBits;
  uint32_t r = select_bits(sa < static_cast<int32_t>(kMinNormalBits), sub, normal);
  // r < 2^(32-kShift): normal was shifted down, and sub is at most 2^M.
  r = select_bits(static_cast<int32_t>(r) > static_cast<int32_t>(F::kMaxFinite), F::kOverflowCode, r);  // inf, NaN too
  r |= sign >> (32 - F::kBits);
  return select_bits(sa > 0x7F800000, F::kNanCode, r);
}

/// narrow code -> float, exact.
template <class F>
[[gnu::always_inline]] constexpr float decode(uint32_t code) noexcept {
  constexpr int kShift = 23 - F::kManBits;
  // Subnormal m * 2^(1-bias-M) = (2^(24-bias-M) + m * 2^(1-bias-M)) - 2^(24-bias-M): m goes into the low
  // fraction bits of the magic number used by encode(); the subtraction is exact and its result normal.
  constexpr uint32_t kMagicBits = static_cast<uint32_t>(127 + 24 - F::kBias - F::kManBits) << 23;
  const uint32_t sign = (code >> (F::kBits - 1)) << 31;
  const uint32_t mag = code & ((1u << (F::kBits - 1)) - 1u);
  const uint32_t aligned = mag << kShift;  // exponent and fraction fields at their float positions
  uint32_t normal;
  if constexpr (F::kHasInf) {
    // Move the exponent field up so that the all-ones field becomes float's 255 (inf/NaN), then scale by a power
    // of two down to the true exponent: exact for finite values, and inf and NaN pass through the multiply
    // (a NaN comes out quiet). Saves two selects over testing for inf and NaN.
    constexpr int kOffset = 255 - ((1 << F::kExpBits) - 1);
    constexpr float kScale = float_of(static_cast<uint32_t>(127 + 127 - F::kBias - kOffset) << 23);
    normal = bits_of(float_of(aligned + (static_cast<uint32_t>(kOffset) << 23)) * kScale);
  } else {
    normal = aligned + (static_cast<uint32_t>(127 - F::kBias) << 23);
    normal = select_bits(mag > F::kMaxFinite, 0x7FC00000u | aligned, normal);  // the NaN: a quiet float NaN
  }
  const uint32_t sub = bits_of(float_of(mag | kMagicBits) - float_of(kMagicBits));
  return float_of(select_bits(mag < (1u << F::kManBits), sub, normal) | sign);
}

}  // namespace float_formats_detail

/// IEEE binary16 bits -> float (exact).
[[gnu::always_inline]] constexpr float half_to_float(uint16_t h) noexcept {
  return float_formats_detail::decode<float_formats_detail::HalfFormat>(h);
}
/// float -> IEEE binary16 bits, round to nearest even; overflow -> +-inf; NaN -> 0x7FFF.
[[gnu::always_inline]] constexpr uint16_t float_to_half(float f) noexcept {
  return static_cast<uint16_t>(float_formats_detail::encode<float_formats_detail::HalfFormat>(f));
}

/// bfloat16 bits -> float (exact: bfloat16 is the top half of a binary32).
[[gnu::always_inline]] constexpr float bfloat16_to_float(uint16_t b) noexcept {
  return std::bit_cast<float>(uint32_t{b} << 16);
}
/// float -> bfloat16 bits, round to nearest even; overflow -> +-inf (the carry runs into the exponent);
/// NaN -> 0x7FFF. Float subnormals round like any other value (bfloat16 has the same exponent range).
[[gnu::always_inline]] constexpr uint16_t float_to_bfloat16(float f) noexcept {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;  // no wrap: only NaNs exceed 0xFF800000
  return static_cast<uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : rounded);
}

/// fp8 e4m3 (OFP8 E4M3FN) bits -> float (exact); 0x7F/0xFF -> NaN.
[[gnu::always_inline]] constexpr float fp8_e4m3_to_float(uint8_t v) noexcept {
  return float_formats_detail::decode<float_formats_detail::E4m3Format>(v);
}
/// float -> fp8 e4m3 bits, round to nearest even, saturating (|x| > 448, inf included -> +-448, as
/// __NV_SATFINITE); NaN -> 0x7F.
[[gnu::always_inline]] constexpr uint8_t float_to_fp8_e4m3(float f) noexcept {
  return static_cast<uint8_t>(float_formats_detail::encode<float_formats_detail::E4m3Format>(f));
}

/// fp8 e5m2 (OFP8 E5M2) bits -> float (exact); 0x7C -> inf, 0x7D..0x7F -> NaN.
[[gnu::always_inline]] constexpr float fp8_e5m2_to_float(uint8_t v) noexcept {
  return float_formats_detail::decode<float_formats_detail::E5m2Format>(v);
}
/// float -> fp8 e5m2 bits, round to nearest even, saturating (values rounding above 57344, inf included ->
/// +-57344, as __NV_SATFINITE); NaN -> 0x7F.
[[gnu::always_inline]] constexpr uint8_t float_to_fp8_e5m2(float f) noexcept {
  return static_cast<uint8_t>(float_formats_detail::encode<float_formats_detail::E5m2Format>(f));
}

}  // namespace genie::shim
