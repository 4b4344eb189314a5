// SPDX-License-Identifier: Apache-2.0
// Tests of the shim's CPU reduction kernels and narrow float conversions against straightforward references.
#include "reduce/reduce_kernels.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "float_format_reference.hpp"
#include "reduce/float_formats.hpp"

namespace genie::shim {
namespace {

using netsim::DataType;
using namespace testref;  // NOLINT

// ============================================================================================================
// Reduction references
// ============================================================================================================

constexpr ReduceOp kAllOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                                ReduceOp::kMin, ReduceOp::kAvg,  ReduceOp::kPreMulSum};
constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,    DataType::kInt32,   DataType::kUint32,
                                  DataType::kInt64,   DataType::kUint64,   DataType::kFloat16, DataType::kFloat32,
                                  DataType::kFloat64, DataType::kBfloat16, DataType::kFp8E4M3, DataType::kFp8E5M2};
/// Counts: empty, one, a few (vector tail only), and more than three blocks of every accumulator width
/// (block = 16 KiB of accumulator: 16384 8-bit, 4096 32-bit, 2048 64-bit elements) that is a multiple of none.
constexpr size_t kCounts[] = {0, 1, 7, 50001};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kAvg:
      return "avg";
    case ReduceOp::kPreMulSum:
      return "premulsum";
  }
  return "?";
}
const char* type_name(DataType dt) {
  static const char* const kNames[] = {"int8",    "uint8",   "int32",   "uint32",   "int64", "uint64",
                                       "float16", "float32", "float64", "bfloat16", "e4m3",  "e5m2"};
  return kNames[static_cast<int>(dt)];
}

bool is_integer(DataType dt) { return static_cast<int>(dt) <= static_cast<int>(DataType::kUint64); }
bool is_signed_integer(DataType dt) {
  return dt == DataType::kInt8 || dt == DataType::kInt32 || dt == DataType::kInt64;
}
const FormatSpec* narrow_spec(DataType dt) {
  switch (dt) {
    case DataType::kFloat16:
      return &kHalf;
    case DataType::kBfloat16:
      return &kBf16;
    case DataType::kFp8E4M3:
      return &kE4m3;
    case DataType::kFp8E5M2:
      return &kE5m2;
    default:
      return nullptr;
  }
}

/// One element of a buffer, as raw bits (integers) or value (floating types).
uint64_t get_bits(const std::vector<uint8_t>& buf, size_t i, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, buf.data() + i * size, size);  // little endian
  return v;
}
void set_bits(std::vector<uint8_t>& buf, size_t i, size_t size, uint64_t v) {
  std::memcpy(buf.data() + i * size, &v, size);
}
/// Sign-extends the low `size` bytes.
int64_t sign_extend(uint64_t v, size_t size) {
  const int shift = 64 - 8 * static_cast<int>(size);
  return static_cast<int64_t>(v << shift) >> shift;
}
double get_value(DataType dt, const std::vector<uint8_t>& buf, size_t i) {
  const size_t size = reduce_element_size(dt);
  const uint64_t b = get_bits(buf, i, size);
  if (dt == DataType::kFloat32) return std::bit_cast<float>(static_cast<uint32_t>(b));
  if (dt == DataType::kFloat64) return std::bit_cast<double>(b);
  return lib_decode(*narrow_spec(dt), static_cast<uint32_t>(b));
}
void set_value(DataType dt, std::vector<uint8_t>& buf, size_t i, double v) {
  const size_t size = reduce_element_size(dt);
  if (dt == DataType::kFloat32) {
    set_bits(buf, i, size, std::bit_cast<uint32_t>(static_cast<float>(v)));
  } else if (dt == DataType::kFloat64) {
    set_bits(buf, i, size, std::bit_cast<uint64_t>(v));
  } else {
    set_bits(buf, i, size, lib_encode(*narrow_spec(dt), static_cast<float>(v)));
  }
}

/// Reference for integer types, written independently of the kernels: all arithmetic in uint64 (wrapping mod
/// 2^64 and truncating to the element width at the end is the same as wrapping at the width every step),
/// comparisons on sign-extended int64 for signed types, Avg as C++ int64 division (truncates toward zero) of the
/// sign-extended wrapped sum.
std::vector<uint8_t> ref_integer(DataType dt, ReduceOp op, const std::vector<std::vector<uint8_t>>& in,
                                 const std::vector<double>& scalars, size_t count) {
  const size_t size = reduce_element_size(dt);
  const bool is_signed = is_signed_integer(dt);
  const int nsrc = static_cast<int>(in.size());
  std::vector<uint8_t> out(count * size);
  for (size_t i = 0; i < count; ++i) {
    auto x = [&](int k) { return get_bits(in[k], i, size); };
    auto less = [&](uint64_t a, uint64_t b) { return is_signed ? sign_extend(a, size) < sign_extend(b, size) : a < b; };
    // Scalars are integral in these tests, so converting through int64 is exact.
    auto term = [&](int k) {
      return op == ReduceOp::kPreMulSum ? x(k) * static_cast<uint64_t>(static_cast<int64_t>(scalars[k])) : x(k);
    };
    uint64_t acc = term(0);
    for (int k = 1; k < nsrc; ++k) {
      const uint64_t t = term(k);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
        case ReduceOp::kPreMulSum:
          acc += t;
          break;
        case ReduceOp::kProd:
          acc *= t;
          break;
        case ReduceOp::kMax:
          acc = less(acc, t) ? t : acc;
          break;
        case ReduceOp::kMin:
          acc = less(t, acc) ? t : acc;
          break;
      }
    }
    if (op == ReduceOp::kAvg) {
      const uint64_t mask = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
      acc =
          is_signed ? static_cast<uint64_t>(sign_extend(acc, size) / nsrc) : (acc & mask) / static_cast<uint64_t>(nsrc);
    }
    set_bits(out, i, size, acc);
  }
  return out;
}

/// Reference for floating types: the documented semantics written out one element at a time. Terms are
/// x_k * s_k (PreMulSum: s_k = scalars[k] rounded to the element type; Avg: 1/nsrc rounded to the element type,
/// through float for the narrow types, as NCCL's host code does); combined left to right in float (double for
/// float64) with fmax/fmin for Max/Min; narrow types rounded once at the end. Also returns, per element, the sum
/// of |terms| (or |product|), for the tolerance.
std::vector<uint8_t> ref_floating(DataType dt, ReduceOp op, const std::vector<std::vector<uint8_t>>& in,
                                  const std::vector<double>& scalars, size_t count, std::vector<double>* magnitude) {
  const size_t size = reduce_element_size(dt);
  const int nsrc = static_cast<int>(in.size());
  const bool wide = dt == DataType::kFloat64;
  auto to_type = [&](double s) {  // a scalar as the element type stores it
    if (wide) return s;
    std::vector<uint8_t> one(size);
    set_value(dt, one, 0, s);
    return get_value(dt, one, 0);
  };
  std::vector<double> s(nsrc, 1.0);
  for (int k = 0; k < nsrc; ++k) {
    if (op == ReduceOp::kPreMulSum) s[k] = to_type(scalars[k]);
    if (op == ReduceOp::kAvg) s[k] = to_type(1.0 / nsrc);
  }
  const bool scaled = op == ReduceOp::kPreMulSum || op == ReduceOp::kAvg;
  std::vector<uint8_t> out(count * size);
  magnitude->assign(count, 0.0);
  for (size_t i = 0; i < count; ++i) {
    // Accumulate in the accumulator type: every operation rounded as float (or double for float64).
    auto round_acc = [&](double v) { return wide ? v : static_cast<double>(static_cast<float>(v)); };
    auto term = [&](int k) {
      const double x = get_value(dt, in[k], i);
      return scaled ? round_acc(x * s[k]) : x;
    };
    double acc = term(0);
    double mag = std::fabs(acc);
    for (int k = 1; k < nsrc; ++k) {
      const double t = term(k);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
        case ReduceOp::kPreMulSum:
          acc = round_acc(acc + t);
          mag += std::fabs(t);
          break;
        case ReduceOp::kProd:
          acc = round_acc(acc * t);
          mag = std::fabs(acc);
          break;
        case ReduceOp::kMax:
          acc = std::fmax(acc, t);
          break;
        case ReduceOp::kMin:
          acc = std::fmin(acc, t);
          break;
      }
    }
    (*magnitude)[i] = mag;
    set_value(dt, out, i, acc);
  }
  return out;
}

/// Unit in the last place of a narrow format at |v| (the subnormal step below the min normal).
double narrow_ulp(const FormatSpec& f, double v) {
  int e = 0;
  std::frexp(v, &e);  // v = m 2^e, m in [0.5, 1): the binade exponent is e - 1
  return std::ldexp(1.0, std::max(e - 1, 1 - f.bias) - f.man_bits);
}

/// Checks got against the reference. Integers: bitwise. Floating types: Max/Min exactly (no arithmetic);
/// Sum/Avg/PreMulSum/Prod within 8 units of rounding of the accumulator type times the magnitude of the terms
/// (4 would do; the slack only admits an FMA-contracting build, e.g. -march with FMA), plus one ulp of the
/// narrow type for half/bfloat16/fp8 (where such a difference can move the final rounding by one code).
/// Default builds match the reference bit for bit; a wrong order, scaling or rounding exceeds the tolerance.
::testing::AssertionResult results_match(DataType dt, ReduceOp op, const std::vector<uint8_t>& got,
                                         const std::vector<uint8_t>& want, const std::vector<double>& magnitude,
                                         size_t count) {
  const size_t size = reduce_element_size(dt);
  for (size_t i = 0; i < count; ++i) {
    if (is_integer(dt)) {
      if (get_bits(got, i, size) != get_bits(want, i, size)) {
        return ::testing::AssertionFailure() << "element " << i << ": got 0x" << std::hex << get_bits(got, i, size)
                                             << " want 0x" << get_bits(want, i, size);
      }
      continue;
    }
    const double g = get_value(dt, got, i), w = get_value(dt, want, i);
    if (std::isnan(w) || std::isinf(w) || std::isnan(g) || std::isinf(g)) {
      if ((std::isnan(w) && std::isnan(g)) || g == w) continue;
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << " want " << w;
    }
    double tol = 0;
    if (op != ReduceOp::kMax && op != ReduceOp::kMin) {
      const double eps = dt == DataType::kFloat64 ? std::numeric_limits<double>::epsilon()
                                                  : static_cast<double>(std::numeric_limits<float>::epsilon());
      tol = 8 * eps * magnitude[i];
      if (const FormatSpec* f = narrow_spec(dt)) tol += narrow_ulp(*f, std::max(std::fabs(g), std::fabs(w)));
    }
    if (!(std::fabs(g - w) <= tol)) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g << " want " << w << " (tolerance " << tol << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

/// Random inputs: integers over their full range (so sums and products wrap), with the extremes planted at the
/// front; floating types uniform in [-8, 8] (Prod: magnitudes in [0.25, 2], so 8 factors stay in range), rounded
/// to the type.
std::vector<std::vector<uint8_t>> make_inputs(DataType dt, ReduceOp op, int nsrc, size_t count, uint32_t seed) {
  const size_t size = reduce_element_size(dt);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> in(nsrc, std::vector<uint8_t>(count * size));
  for (int k = 0; k < nsrc; ++k) {
    for (size_t i = 0; i < count; ++i) {
      if (is_integer(dt)) {
        uint64_t v = rng();
        const uint64_t top = uint64_t{1} << (8 * size - 1);             // sign bit of the element
        const uint64_t planted[] = {top, top - 1, ~uint64_t{0}, 0, 1};  // min, max, -1 (or max unsigned), 0, 1
        if (i < 5) v = planted[(i + static_cast<size_t>(k)) % 5];
        set_bits(in[k], i, size, v);
      } else if (op == ReduceOp::kProd) {
        std::uniform_real_distribution<double> mag(0.25, 2.0);
        set_value(dt, in[k], i, (rng() & 1 ? -1 : 1) * mag(rng));
      } else {
        std::uniform_real_distribution<double> val(-8.0, 8.0);
        set_value(dt, in[k], i, val(rng));
      }
    }
  }
  return in;
}

std::vector<double> make_scalars(DataType dt, int nsrc, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<double> s(nsrc);
  for (int k = 0; k < nsrc; ++k) {
    // Integers: small integral scalars, negative ones included; floating: any value in [-2, 2].
    s[k] = is_integer(dt) ? static_cast<double>(static_cast<int>(rng() % 11) - 5)
                          : std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
  }
  return s;
}

std::vector<uint8_t> reference(DataType dt, ReduceOp op, const std::vector<std::vector<uint8_t>>& in,
                               const std::vector<double>& scalars, size_t count, std::vector<double>* magnitude) {
  magnitude->assign(count, 0.0);
  return is_integer(dt) ? ref_integer(dt, op, in, scalars, count) : ref_floating(dt, op, in, scalars, count, magnitude);
}

/// Every op, nsrc 1..8, every count, for one datatype, into a separate dst.
void check_type_all_ops(DataType dt) {
  const size_t size = reduce_element_size(dt);
  ASSERT_GT(size, 0u);
  uint32_t seed = 1;
  for (ReduceOp op : kAllOps) {
    for (int nsrc = 1; nsrc <= 8; ++nsrc) {
      for (size_t count : kCounts) {
        SCOPED_TRACE(std::string(type_name(dt)) + " " + op_name(op) + " nsrc=" + std::to_string(nsrc) +
                     " count=" + std::to_string(count));
        const auto in = make_inputs(dt, op, nsrc, count, ++seed);
        const auto scalars = make_scalars(dt, nsrc, seed);
        std::vector<const void*> srcs;
        for (const auto& b : in) srcs.push_back(b.data());
        std::vector<uint8_t> got(count * size + 16, 0xA5);  // + a tail that must stay untouched
        reduce_arrays(got.data(), srcs.data(), scalars.data(), nsrc, count, dt, op);
        std::vector<double> magnitude;
        const auto want = reference(dt, op, in, scalars, count, &magnitude);
        ASSERT_TRUE(results_match(dt, op, got, want, magnitude, count));
        for (size_t b = count * size; b < got.size(); ++b) ASSERT_EQ(got[b], 0xA5) << "wrote past the end";
      }
    }
  }
}

// One test per datatype so that a failure names the type.
TEST(ReduceKernels, Int8AllOpsMatchReference) {
  // System: reduce_arrays on int8, every op, 1..8 sources, counts 0/1/7/50001, random full-range inputs.
  // Expectation: bit-identical to the uint64 reference (wrapping sum/prod, signed max/min, truncating avg).
  check_type_all_ops(DataType::kInt8);
}
TEST(ReduceKernels, Uint8AllOpsMatchReference) {
  // System and expectation as for int8, with unsigned comparisons and division.
  check_type_all_ops(DataType::kUint8);
}
TEST(ReduceKernels, Int32AllOpsMatchReference) {
  // System and expectation as for int8, 32-bit.
  check_type_all_ops(DataType::kInt32);
}
TEST(ReduceKernels, Uint32AllOpsMatchReference) {
  // System and expectation as for uint8, 32-bit.
  check_type_all_ops(DataType::kUint32);
}
TEST(ReduceKernels, Int64AllOpsMatchReference) {
  // System and expectation as for int8, 64-bit (Avg takes the reciprocal-multiply path).
  check_type_all_ops(DataType::kInt64);
}
TEST(ReduceKernels, Uint64AllOpsMatchReference) {
  // System and expectation as for uint8, 64-bit.
  check_type_all_ops(DataType::kUint64);
}
TEST(ReduceKernels, Float16AllOpsMatchReference) {
  // System: reduce_arrays on half, every op, 1..8 sources, counts 0/1/7/50001, inputs in [-8, 8].
  // Expectation: the float-accumulating reference rounded once, within the tolerance of results_match.
  check_type_all_ops(DataType::kFloat16);
}
TEST(ReduceKernels, Float32AllOpsMatchReference) {
  // System and expectation as for half, with float accumulation and no final rounding.
  check_type_all_ops(DataType::kFloat32);
}
TEST(ReduceKernels, Float64AllOpsMatchReference) {
  // System and expectation as for float32, in double.
  check_type_all_ops(DataType::kFloat64);
}
TEST(ReduceKernels, Bfloat16AllOpsMatchReference) {
  // System and expectation as for half.
  check_type_all_ops(DataType::kBfloat16);
}
TEST(ReduceKernels, E4m3AllOpsMatchReference) {
  // System and expectation as for half, with saturating rounding to e4m3.
  check_type_all_ops(DataType::kFp8E4M3);
}
TEST(ReduceKernels, E5m2AllOpsMatchReference) {
  // System and expectation as for half, with saturating rounding to e5m2.
  check_type_all_ops(DataType::kFp8E5M2);
}

TEST(ReduceKernels, InPlaceWhenDstIsOneOfTheSources) {
  // System: every datatype and op with dst == srcs[0], dst == srcs[2] and dst == srcs[nsrc-1], nsrc 3 (one loop
  // per block), 5 and 8 (several loops per block, the last source in a later loop), over 20001 elements (more
  // than one block for every width). Expectation: the same result as with a separate dst, computed from copies
  // of the inputs taken before the call; in particular no source may be overwritten before it has been read
  // (accumulating in dst would clobber srcs[nsrc-1] before the loop that reads it).
  const size_t count = 20001;
  uint32_t seed = 1000;
  for (DataType dt : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      for (int nsrc : {3, 5, 8}) {
        for (int alias : {0, 2, nsrc - 1}) {
          SCOPED_TRACE(std::string(type_name(dt)) + " " + op_name(op) + " nsrc=" + std::to_string(nsrc) + " dst=srcs[" +
                       std::to_string(alias) + "]");
          auto in = make_inputs(dt, op, nsrc, count, ++seed);
          const auto scalars = make_scalars(dt, nsrc, seed);
          std::vector<double> magnitude;
          const auto want = reference(dt, op, in, scalars, count, &magnitude);
          std::vector<const void*> srcs;
          for (const auto& b : in) srcs.push_back(b.data());
          reduce_arrays(in[alias].data(), srcs.data(), scalars.data(), nsrc, count, dt, op);
          ASSERT_TRUE(results_match(dt, op, in[alias], want, magnitude, count));
        }
      }
    }
  }
}

TEST(ReduceKernels, SameBufferTwiceAsSource) {
  // System: float32 sum with srcs = {a, a, b} and dst a fourth buffer; then dst == a == srcs[0] == srcs[1].
  // Expectation: 2a + b both times (repeated sources are allowed, they are only read).
  const std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50};
  std::vector<float> out(5), a_copy = a;
  const void* srcs[] = {a.data(), a.data(), b.data()};
  reduce_arrays(out.data(), srcs, nullptr, 3, 5, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(out, (std::vector<float>{12, 24, 36, 48, 60}));
  const void* srcs2[] = {a_copy.data(), a_copy.data(), b.data()};
  reduce_arrays(a_copy.data(), srcs2, nullptr, 3, 5, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(a_copy, (std::vector<float>{12, 24, 36, 48, 60}));
}

// ------------------------------------------------------------------------------------------------------------
// Semantics, case by case
// ------------------------------------------------------------------------------------------------------------

template <class T>
std::vector<T> reduce_vec(const std::vector<std::vector<T>>& in, DataType dt, ReduceOp op,
                          const std::vector<double>& scalars = {}) {
  std::vector<const void*> srcs;
  for (const auto& v : in) srcs.push_back(v.data());
  std::vector<T> out(in[0].size());
  reduce_arrays(out.data(), srcs.data(), scalars.empty() ? nullptr : scalars.data(), static_cast<int>(in.size()),
                out.size(), dt, op);
  return out;
}

TEST(ReduceKernels, IntegerWraparound) {
  // System: integer sums and products that overflow. Expectation: two's complement wraparound, as on the GPU:
  // INT32_MAX + 1 = INT32_MIN; uint8 200 + 100 = 44; int64 INT64_MAX * 2 = -2; uint32 0xFFFFFFFF * 0xFFFFFFFF = 1;
  // int8 -128 + -1 = 127.
  EXPECT_EQ(reduce_vec<int32_t>({{INT32_MAX}, {1}}, DataType::kInt32, ReduceOp::kSum)[0], INT32_MIN);
  EXPECT_EQ(reduce_vec<uint8_t>({{200}, {100}}, DataType::kUint8, ReduceOp::kSum)[0], 44);
  EXPECT_EQ(reduce_vec<int64_t>({{INT64_MAX}, {2}}, DataType::kInt64, ReduceOp::kProd)[0], -2);
  EXPECT_EQ(reduce_vec<uint32_t>({{0xFFFFFFFFu}, {0xFFFFFFFFu}}, DataType::kUint32, ReduceOp::kProd)[0], 1u);
  EXPECT_EQ(reduce_vec<int8_t>({{-128}, {-1}}, DataType::kInt8, ReduceOp::kSum)[0], 127);
}

TEST(ReduceKernels, SignedMinMaxCompareSigned) {
  // System: max/min of the extremes of each width. Expectation: signed types compare signed (an unsigned compare
  // would pick -128 = 0x80 as the max of {-128, 127}), unsigned types unsigned (0x80 > 0x7F).
  EXPECT_EQ(reduce_vec<int8_t>({{-128}, {127}}, DataType::kInt8, ReduceOp::kMax)[0], 127);
  EXPECT_EQ(reduce_vec<int8_t>({{127}, {-128}}, DataType::kInt8, ReduceOp::kMin)[0], -128);
  EXPECT_EQ(reduce_vec<uint8_t>({{0x80}, {0x7F}}, DataType::kUint8, ReduceOp::kMax)[0], 0x80);
  EXPECT_EQ(reduce_vec<int32_t>({{INT32_MIN}, {-1}, {INT32_MAX}}, DataType::kInt32, ReduceOp::kMin)[0], INT32_MIN);
  EXPECT_EQ(reduce_vec<int32_t>({{INT32_MIN}, {-1}, {0}}, DataType::kInt32, ReduceOp::kMax)[0], 0);
  EXPECT_EQ(reduce_vec<uint32_t>({{0x80000000u}, {1}}, DataType::kUint32, ReduceOp::kMax)[0], 0x80000000u);
  EXPECT_EQ(reduce_vec<int64_t>({{INT64_MAX}, {INT64_MIN}}, DataType::kInt64, ReduceOp::kMin)[0], INT64_MIN);
  EXPECT_EQ(reduce_vec<int64_t>({{INT64_MIN}, {-5}}, DataType::kInt64, ReduceOp::kMax)[0], -5);
  EXPECT_EQ(reduce_vec<uint64_t>({{uint64_t{1} << 63}, {1}}, DataType::kUint64, ReduceOp::kMax)[0], uint64_t{1} << 63);
}

TEST(ReduceKernels, IntegerAvgSumsThenTruncatesTowardZero) {
  // System: NCCL's SumPostDiv for integers. Expectation: the wrapped sum divided by nsrc, truncating toward zero:
  // int32 {-7, 0} -> -3 (floor would be -4); int8 {100, 100} wraps to -56 -> -28; uint8 {255, 255} wraps to 254
  // -> 127; int64 {INT64_MIN, 0, 0} -> INT64_MIN / 3 truncated; int64 {INT64_MIN} alone -> INT64_MIN; uint64
  // {UINT64_MAX, 1} wraps to 0 -> 0; uint64 {UINT64_MAX, UINT64_MAX - 1, 0} -> (2^64 - 3) / 3.
  EXPECT_EQ(reduce_vec<int32_t>({{-7}, {0}}, DataType::kInt32, ReduceOp::kAvg)[0], -3);
  EXPECT_EQ(reduce_vec<int8_t>({{100}, {100}}, DataType::kInt8, ReduceOp::kAvg)[0], -28);
  EXPECT_EQ(reduce_vec<uint8_t>({{255}, {255}}, DataType::kUint8, ReduceOp::kAvg)[0], 127);
  EXPECT_EQ(reduce_vec<int64_t>({{INT64_MIN}, {0}, {0}}, DataType::kInt64, ReduceOp::kAvg)[0], INT64_MIN / 3);
  EXPECT_EQ(reduce_vec<int64_t>({{INT64_MIN}}, DataType::kInt64, ReduceOp::kAvg)[0], INT64_MIN);
  EXPECT_EQ(reduce_vec<uint64_t>({{UINT64_MAX}, {1}}, DataType::kUint64, ReduceOp::kAvg)[0], 0u);
  EXPECT_EQ(reduce_vec<uint64_t>({{UINT64_MAX}, {UINT64_MAX - 1}, {0}}, DataType::kUint64, ReduceOp::kAvg)[0],
            (UINT64_MAX - 2) / 3);
  EXPECT_EQ(reduce_vec<uint32_t>({{0xFFFFFFFFu}, {0xFFFFFFFFu}, {0}}, DataType::kUint32, ReduceOp::kAvg)[0],
            0xFFFFFFFEu / 3);
}

TEST(ReduceKernels, FloatAvgPremultipliesByReciprocalInElementType) {
  // System: half Avg of eleven copies of x = 2047/1024 (0x3FFF). NCCL multiplies each input by
  // half(float(1/11)) = 1489/16384 (0x2DD1) before summing. Expectation: 11 * x * 1489/16384 = 1.99839..., which
  // rounds to the half 2046/1024 (0x3FFE) - not x, which dividing the sum by 11 would give. (For 3..9 sources
  // the rounded reciprocal is within 2^-12 of 1/n and every half x survives; 1/11 is off by 3e-4.) float32 Avg
  // of {1, 2, 4}: each input times float(1/3), summed in order: (1/3f + 2/3f) + 4/3f, rounded at every step.
  const uint16_t x = float_to_half(2047.0f / 1024.0f);
  ASSERT_EQ(x, 0x3FFF);
  ASSERT_EQ(float_to_half(static_cast<float>(1.0 / 11)), 0x2DD1);
  const std::vector<std::vector<uint16_t>> elevens(11, std::vector<uint16_t>{x});
  EXPECT_EQ(reduce_vec<uint16_t>(elevens, DataType::kFloat16, ReduceOp::kAvg)[0], 0x3FFE);
  const float third = static_cast<float>(1.0 / 3);
  EXPECT_EQ(reduce_vec<float>({{1.0f}, {2.0f}, {4.0f}}, DataType::kFloat32, ReduceOp::kAvg)[0],
            (1.0f * third + 2.0f * third) + 4.0f * third);
}

TEST(ReduceKernels, PreMulSumRoundsScalarToElementType) {
  // System: PreMulSum with scalars that the element type cannot hold. Expectation: the scalar is first converted
  // as NCCL stores it: e4m3 scalar 1e6 saturates to 448 (0.125 * 448 = 56, not 448 from 125000 saturating);
  // half scalar 1e-8 underflows to 0 (result 0, not 1e-5); bfloat16 scalar 1 + 2^-8 rounds to 1 (3 stays 3, not
  // 3.015625); int32 scalar 2.7 truncates to 2 (10 -> 20) and -2.7 to -2; uint32 scalar -1 wraps to 0xFFFFFFFF
  // (5 -> 0xFFFFFFFB); float64 keeps the double scalar exactly.
  EXPECT_EQ(fp8_e4m3_to_float(
                reduce_vec<uint8_t>({{float_to_fp8_e4m3(0.125f)}}, DataType::kFp8E4M3, ReduceOp::kPreMulSum, {1e6})[0]),
            56.0f);
  EXPECT_EQ(half_to_float(
                reduce_vec<uint16_t>({{float_to_half(1000.0f)}}, DataType::kFloat16, ReduceOp::kPreMulSum, {1e-8})[0]),
            0.0f);
  EXPECT_EQ(bfloat16_to_float(reduce_vec<uint16_t>({{float_to_bfloat16(3.0f)}}, DataType::kBfloat16,
                                                   ReduceOp::kPreMulSum, {1.0 + 1.0 / 256})[0]),
            3.0f);
  EXPECT_EQ(reduce_vec<int32_t>({{10}, {10}}, DataType::kInt32, ReduceOp::kPreMulSum, {2.7, -2.7})[0], 0);
  EXPECT_EQ(reduce_vec<int32_t>({{10}}, DataType::kInt32, ReduceOp::kPreMulSum, {2.7})[0], 20);
  EXPECT_EQ(reduce_vec<uint32_t>({{5}}, DataType::kUint32, ReduceOp::kPreMulSum, {-1.0})[0], 0xFFFFFFFBu);
  EXPECT_EQ(reduce_vec<double>({{3.0}}, DataType::kFloat64, ReduceOp::kPreMulSum, {0.1})[0], 3.0 * 0.1);
}

TEST(ReduceKernels, NarrowTypesAccumulateInFloatAndRoundOnce) {
  // System: half sum of {2048, 1, 1}; e4m3 sum {448, 448}; e5m2 sum {57344, 57344, -57344}.
  // Expectation: float accumulation rounded once: 2050 (pairwise half rounding would give 2048: 2049 ties to even
  // 2048, twice); 896 saturates to 448 (never NaN); 57344 (pairwise: 114688 saturates to 57344, minus 57344 = 0).
  const auto h = [](float v) { return float_to_half(v); };
  EXPECT_EQ(half_to_float(reduce_vec<uint16_t>({{h(2048)}, {h(1)}, {h(1)}}, DataType::kFloat16, ReduceOp::kSum)[0]),
            2050.0f);
  const uint8_t e448 = float_to_fp8_e4m3(448.0f);
  EXPECT_EQ(reduce_vec<uint8_t>({{e448}, {e448}}, DataType::kFp8E4M3, ReduceOp::kSum)[0], 0x7E);
  const uint8_t m = float_to_fp8_e5m2(57344.0f), neg_m = float_to_fp8_e5m2(-57344.0f);
  EXPECT_EQ(fp8_e5m2_to_float(reduce_vec<uint8_t>({{m}, {m}, {neg_m}}, DataType::kFp8E5M2, ReduceOp::kSum)[0]),
            57344.0f);
}

TEST(ReduceKernels, SourcesCombineStrictlyInOrder) {
  // System: float32 sums where association matters: {1e8, -1e8, 1}, {1e8, 1, -1e8, 1} and, over 8 sources
  // (crossing the kernel's group boundaries at 4 and 7), {1e8, 1, 1, 1, -1e8, 1, 1, 1}. Expectation: left to
  // right, ((x0 + x1) + x2)...: 1 for the first (x0 + (x1 + x2) would be 0); 1 for the second (1e8 + 1 rounds to
  // 1e8; pairwise (x0 + x1) + (x2 + x3) would be 0); for the third 1e8 + 1 rounds back to 1e8 three times, then
  // 0 + 1 + 1 + 1 = 3 (summing the ones first would give 6).
  EXPECT_EQ(reduce_vec<float>({{1e8f}, {-1e8f}, {1.0f}}, DataType::kFloat32, ReduceOp::kSum)[0], 1.0f);
  EXPECT_EQ(reduce_vec<float>({{1e8f}, {1}, {-1e8f}, {1}}, DataType::kFloat32, ReduceOp::kSum)[0], 1.0f);
  EXPECT_EQ(reduce_vec<float>({{1e8f}, {1}, {1}, {1}, {-1e8f}, {1}, {1}, {1}}, DataType::kFloat32, ReduceOp::kSum)[0],
            3.0f);
}

TEST(ReduceKernels, FloatMaxMinIgnoreNaNLikeFmax) {
  // System: float32 and half max/min with NaN operands. Expectation: fmax/fmin semantics (NCCL's fmaxf/__hmax):
  // the NaN is ignored whichever side it is on; two NaNs give NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto max = reduce_vec<float>({{nan, 1.0f, nan}, {1.0f, nan, nan}}, DataType::kFloat32, ReduceOp::kMax);
  EXPECT_EQ(max[0], 1.0f);
  EXPECT_EQ(max[1], 1.0f);
  EXPECT_TRUE(std::isnan(max[2]));
  const auto min = reduce_vec<float>({{nan, -1.0f}, {-1.0f, nan}}, DataType::kFloat32, ReduceOp::kMin);
  EXPECT_EQ(min[0], -1.0f);
  EXPECT_EQ(min[1], -1.0f);
  const uint16_t hnan = 0x7E00, two = float_to_half(2.0f);
  EXPECT_EQ(reduce_vec<uint16_t>({{hnan}, {two}}, DataType::kFloat16, ReduceOp::kMax)[0], two);
  EXPECT_EQ(reduce_vec<double>({{2.0}, {std::nan("")}}, DataType::kFloat64, ReduceOp::kMin)[0], 2.0);
}

TEST(ReduceKernels, NothingHappensForZeroCountOrNoSources) {
  // System: count 0, and nsrc 0. Expectation: dst untouched (and no source dereferenced: null sources are fine).
  std::vector<float> dst = {42.0f};
  const void* srcs[] = {nullptr};
  reduce_arrays(dst.data(), srcs, nullptr, 1, 0, DataType::kFloat32, ReduceOp::kSum);
  reduce_arrays(dst.data(), srcs, nullptr, 0, 1, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(dst[0], 42.0f);
}

TEST(ReduceKernels, ScaleCopyIsOneSourcePreMulSum) {
  // System: scale_copy into another buffer and in place, float32 and e5m2. Expectation: x * scalar (e5m2: the
  // scalar 0.3 rounds to 0.3125 first; 4 * 0.3125 = 1.25 is exact in e5m2), in place too.
  std::vector<float> src = {1, -2, 3.5f}, dst(3);
  scale_copy(dst.data(), src.data(), 0.5, 3, DataType::kFloat32);
  EXPECT_EQ(dst, (std::vector<float>{0.5f, -1.0f, 1.75f}));
  scale_copy(src.data(), src.data(), -2.0, 3, DataType::kFloat32);
  EXPECT_EQ(src, (std::vector<float>{-2.0f, 4.0f, -7.0f}));
  uint8_t e = float_to_fp8_e5m2(4.0f);
  scale_copy(&e, &e, 0.3, 1, DataType::kFp8E5M2);
  EXPECT_EQ(fp8_e5m2_to_float(e), 1.25f);
}

TEST(ReduceKernels, ElementSizes) {
  // System: reduce_element_size for every type. Expectation: NCCL's sizes (ncclTypeSize).
  const size_t want[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (DataType dt : kAllTypes) EXPECT_EQ(reduce_element_size(dt), want[static_cast<int>(dt)]) << type_name(dt);
}

}  // namespace
}  // namespace genie::shim
