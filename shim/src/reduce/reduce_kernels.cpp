// SPDX-License-Identifier: Apache-2.0
// CPU reduction kernels of the NCCL shim: blocked, auto-vectorized loops per datatype and reduction op.
//
// Build this file with -O3 (per-file compile option). At -O2 GCC 12 vectorizes only under its "very cheap"
// cost model, which rejects loops whose trip count is unknown (all of these): nothing is vectorized and, in
// cache, float32 runs 3.6x and half 5x slower. Results do not depend on the level: every element sees the same
// operations in the same order (only a build for an FMA-capable -march may contract x * scalar + acc).
// Nothing here needs more than the x86-64 baseline (SSE2): no intrinsics, no target attributes; the loops are
// written so GCC vectorizes them (restrict pointers, simple indexed loops, branch-free conversions and selects).
//
// Data flow: the element range is cut into blocks of kBlockBytes of accumulator values (L1-sized). For each
// block all sources are combined before the next block starts, so every source is read from memory once and
// dst written once; sources are consumed up to four per loop (first group) and three per loop after that, the
// partial result staying in L1 between loops. Where the partial result lives:
//   - float32/float64/integers, dst not a source: in dst itself (one pass when nsrc <= 4);
//   - half/bfloat16/fp8: in a float block on the stack; the last loop converts and stores to dst;
//   - dst is one of the sources (in-place): always in the stack block, copied (converted) to dst at the end,
//     because writing dst early would clobber a source not read yet (dst == srcs[2]), and because every loop's
//     pointers are __restrict, which an exact alias would violate.
#include "reduce/reduce_kernels.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "reduce/float_formats.hpp"

namespace genie::shim {
namespace {

using netsim::DataType;

/// Accumulator bytes per block: half of a 32 KiB L1d, leaving room for the streamed sources.
constexpr size_t kBlockBytes = 16 * 1024;
/// Sources combined by the first loop of a block, and by each later loop (which also reads the accumulator).
constexpr int kFirstGroup = 4;
constexpr int kLaterGroup = 3;

// ---- element kinds: the type in memory, the accumulator type, and the conversions between them ----

/// float32, float64 and the integers (as their unsigned type, so arithmetic wraps without UB): computed in the
/// storage type itself.
template <class T>
struct PlainKind {
  using Storage = T;
  using Acc = T;
  static constexpr bool kNarrow = false;
  [[gnu::always_inline]] static T load(T x) { return x; }
  [[gnu::always_inline]] static T store(T x) { return x; }
};

/// Narrow floating types: accumulated in float, rounded once when stored.
struct HalfKind {
  using Storage = uint16_t;
  using Acc = float;
  static constexpr bool kNarrow = true;
  [[gnu::always_inline]] static float load(uint16_t x) { return half_to_float(x); }
  [[gnu::always_inline]] static uint16_t store(float x) { return float_to_half(x); }
};
struct Bf16Kind {
  using Storage = uint16_t;
  using Acc = float;
  static constexpr bool kNarrow = true;
  [[gnu::always_inline]] static float load(uint16_t x) { return bfloat16_to_float(x); }
  [[gnu::always_inline]] static uint16_t store(float x) { return float_to_bfloat16(x); }
};
struct E4m3Kind {
  using Storage = uint8_t;
  using Acc = float;
  static constexpr bool kNarrow = true;
  [[gnu::always_inline]] static float load(uint8_t x) { return fp8_e4m3_to_float(x); }
  [[gnu::always_inline]] static uint8_t store(float x) { return float_to_fp8_e4m3(x); }
};
struct E5m2Kind {
  using Storage = uint8_t;
  using Acc = float;
  static constexpr bool kNarrow = true;
  [[gnu::always_inline]] static float load(uint8_t x) { return fp8_e5m2_to_float(x); }
  [[gnu::always_inline]] static uint8_t store(float x) { return float_to_fp8_e5m2(x); }
};

// ---- binary ops on accumulator values ----

struct SumOp {
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    return static_cast<A>(a + b);  // uint8_t promotes to int and truncates back: wraps, no UB
  }
};
struct ProdOp {
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    return static_cast<A>(a * b);  // uint8_t * uint8_t <= 65025 fits int; wider types are unsigned
  }
};
/// fmax semantics for floating types (NCCL uses fmaxf/fmax/__hmax): a NaN operand loses unless both are NaN.
/// Integers compare as signed when kSigned (the storage is the unsigned type; C++20 defines the conversion).
template <bool kSigned>
struct MaxOp {
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      // Written as two selects, each on one comparison: the form GCC vectorizes for float and double
      // (`a < b || a != a ? b : a` stays a branch in some of these loops).
      const A m = a < b ? b : a;  // a when b is NaN (the comparison is false)
      return a != a ? b : m;
    } else if constexpr (kSigned) {
      using Signed = std::make_signed_t<A>;
      return static_cast<Signed>(a) < static_cast<Signed>(b) ? b : a;
    } else {
      return a < b ? b : a;
    }
  }
};
template <bool kSigned>
struct MinOp {
  template <class A>
  [[gnu::always_inline]] static A apply(A a, A b) {
    if constexpr (std::is_floating_point_v<A>) {
      const A m = b < a ? b : a;
      return a != a ? b : m;
    } else if constexpr (kSigned) {
      using Signed = std::make_signed_t<A>;
      return static_cast<Signed>(b) < static_cast<Signed>(a) ? b : a;
    } else {
      return b < a ? b : a;
    }
  }
};

// ---- scalars (PreMulSum / floating Avg) ----

/// double -> integer scalar bits: truncate toward zero, saturate to the int64/uint64 range, NaN -> 0. The
/// caller truncates to the element width (two's complement wrap), so -1 scales a uint32 by 0xFFFFFFFF.
uint64_t integer_scalar_bits(double s) {
  if (!(s == s)) return 0;
  if (s >= 18446744073709551616.0) return UINT64_MAX;                         // >= 2^64
  if (s >= 9223372036854775808.0) return static_cast<uint64_t>(s);            // [2^63, 2^64)
  if (s <= -9223372036854775808.0) return static_cast<uint64_t>(INT64_MIN);  // <= -2^63
  return static_cast<uint64_t>(static_cast<int64_t>(s));
}

/// The scalar as NCCL would hold it: converted to the element type, then widened to the accumulator type.
template <class K>
typename K::Acc convert_scalar(double s) {
  using A = typename K::Acc;
  if constexpr (std::is_integral_v<A>) {
    return static_cast<A>(integer_scalar_bits(s));
  } else if constexpr (!K::kNarrow) {
    return static_cast<A>(s);
  } else {
    return K::load(K::store(static_cast<float>(s)));
  }
}

/// Where the per-source scalars come from: an array (PreMulSum) or one value for all (Avg's 1/nsrc).
struct ScalarSource {
  const double* per_source = nullptr;
  double uniform = 1.0;
  double at(int k) const { return per_source != nullptr ? per_source[k] : uniform; }
};

// ---- the loops ----

/// Loops of one (kind, op, pre-multiply) combination. Sources beyond N are passed as any valid pointer and never
/// read. Every pointer is __restrict: within one loop no two of them refer to memory that the loop writes.
template <class K, class Op, bool kPre>
struct Loops {
  using S = typename K::Storage;
  using A = typename K::Acc;

  [[gnu::always_inline]] static A term(S x, A c) {
    if constexpr (kPre) {
      return static_cast<A>(K::load(x) * c);
    } else {
      (void)c;
      return K::load(x);
    }
  }

  /// out[i] = ((t0 op t1) op t2) op t3 over the first N sources, t_k = x_k (* c_k); Out is A, or S to store.
  template <int N, class Out>
  static void first(Out* __restrict out, const S* __restrict x0, const S* __restrict x1, const S* __restrict x2,
                    const S* __restrict x3, const A* c, size_t n) {
    const A c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    for (size_t i = 0; i < n; ++i) {
      A v = term(x0[i], c0);
      if constexpr (N > 1) v = Op::apply(v, term(x1[i], c1));
      if constexpr (N > 2) v = Op::apply(v, term(x2[i], c2));
      if constexpr (N > 3) v = Op::apply(v, term(x3[i], c3));
      if constexpr (std::is_same_v<Out, A>) {
        out[i] = v;
      } else {
        out[i] = K::store(v);
      }
    }
  }

  /// acc[i] = ((acc[i] op t0) op t1) op t2 over N sources.
  template <int N>
  static void more(A* __restrict acc, const S* __restrict x0, const S* __restrict x1, const S* __restrict x2,
                   const A* c, size_t n) {
    const A c0 = c[0], c1 = c[1], c2 = c[2];
    for (size_t i = 0; i < n; ++i) {
      A v = Op::apply(acc[i], term(x0[i], c0));
      if constexpr (N > 1) v = Op::apply(v, term(x1[i], c1));
      if constexpr (N > 2) v = Op::apply(v, term(x2[i], c2));
      acc[i] = v;
    }
  }

  /// out[i] = store(((acc[i] op t0) op t1) op t2) over N sources: the last loop of a narrow block.
  template <int N>
  static void last(S* __restrict out, const A* __restrict acc, const S* __restrict x0, const S* __restrict x1,
                   const S* __restrict x2, const A* c, size_t n) {
    const A c0 = c[0], c1 = c[1], c2 = c[2];
    for (size_t i = 0; i < n; ++i) {
      A v = Op::apply(acc[i], term(x0[i], c0));
      if constexpr (N > 1) v = Op::apply(v, term(x1[i], c1));
      if constexpr (N > 2) v = Op::apply(v, term(x2[i], c2));
      out[i] = K::store(v);
    }
  }

  static void store_all(S* __restrict out, const A* __restrict acc, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = K::store(acc[i]);
  }

  // Run-time group size -> template instance.
  template <class Out>
  static void first_n(int g, Out* out, const S* const* x, const A* c, size_t n) {
    switch (g) {
      case 1: first<1>(out, x[0], x[0], x[0], x[0], c, n); break;
      case 2: first<2>(out, x[0], x[1], x[0], x[0], c, n); break;
      case 3: first<3>(out, x[0], x[1], x[2], x[0], c, n); break;
      default: first<4>(out, x[0], x[1], x[2], x[3], c, n); break;
    }
  }
  static void more_n(int g, A* acc, const S* const* x, const A* c, size_t n) {
    switch (g) {
      case 1: more<1>(acc, x[0], x[0], x[0], c, n); break;
      case 2: more<2>(acc, x[0], x[1], x[0], c, n); break;
      default: more<3>(acc, x[0], x[1], x[2], c, n); break;
    }
  }
  static void last_n(int g, S* out, const A* acc, const S* const* x, const A* c, size_t n) {
    switch (g) {
      case 1: last<1>(out, acc, x[0], x[0], x[0], c, n); break;
      case 2: last<2>(out, acc, x[0], x[1], x[0], c, n); break;
      default: last<3>(out, acc, x[0], x[1], x[2], c, n); break;
    }
  }
};

__extension__ using Uint128 = unsigned __int128;  // GCC/Clang extension; __extension__ silences -Wpedantic

/// Integer Avg's final step: the wrapped sum divided by nsrc, truncating toward zero (NCCL SumPostDiv). A
/// hardware integer division costs tens of cycles per element and does not vectorize, so:
///  - 8/32-bit: divide in double and truncate. Exact: a non-integer quotient v/n lies at least 1/n from the
///    next integer, while the rounding error is at most |v/n| 2^-53 < 2^32/n 2^-53 = 2^-21/n;
///  - 64-bit: NCCL's reciprocal method (reduce_kernel.h FuncSumPostDiv): q = mulhi(|v|, floor((2^64-1)/n)) is
///    floor(|v|/n) or one less; one correction step fixes it.
/// out may equal in.
template <class A, bool kSigned>
void divide_all(A* out, const A* in, size_t n, int nsrc) {
  using Signed = std::make_signed_t<A>;
  if constexpr (sizeof(A) <= 4) {
    const double d = nsrc;
    for (size_t i = 0; i < n; ++i) {
      if constexpr (kSigned) {
        out[i] = static_cast<A>(static_cast<Signed>(static_cast<double>(static_cast<Signed>(in[i])) / d));
      } else {
        out[i] = static_cast<A>(static_cast<double>(in[i]) / d);
      }
    }
  } else {
    const uint64_t divisor = static_cast<uint64_t>(nsrc);
    const uint64_t recip = UINT64_MAX / divisor;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t v = in[i];
      const bool neg = kSigned && static_cast<Signed>(v) < 0;
      const uint64_t mag = neg ? 0 - v : v;  // |INT64_MIN| = 2^63 is representable unsigned
      uint64_t q = static_cast<uint64_t>((static_cast<Uint128>(mag) * recip) >> 64);
      if (mag - q * divisor >= divisor) ++q;
      out[i] = neg ? 0 - q : q;
    }
  }
}

/// One reduction: kind K, op Op, pre-multiplied by scalars when kPre, integer post-division when kPostDiv.
template <class K, class Op, bool kPre, bool kPostDiv, bool kSigned>
void run(void* dst_v, const void* const* srcs_v, ScalarSource scalars, int nsrc, size_t count) {
  using S = typename K::Storage;
  using A = typename K::Acc;
  using L = Loops<K, Op, kPre>;
  constexpr size_t kBlock = kBlockBytes / sizeof(A);

  S* const dst = static_cast<S*>(dst_v);
  bool aliased = false;
  for (int k = 0; k < nsrc; ++k) aliased |= srcs_v[k] == dst_v;
  // Narrow kinds with dst not a source: the block's last loop converts and stores to dst directly.
  const bool store_direct = K::kNarrow && !aliased;

  alignas(64) A block[kBlock];
  for (size_t off = 0; off < count; off += kBlock) {
    const size_t n = std::min(kBlock, count - off);
    S* const out = dst + off;
    A* work = block;
    if constexpr (!K::kNarrow) {
      if (!aliased) work = out;  // S == A
    }
    int k = 0;
    while (k < nsrc) {
      const int g = std::min(nsrc - k, k == 0 ? kFirstGroup : kLaterGroup);
      const S* x[kFirstGroup];
      A c[kFirstGroup] = {};
      for (int j = 0; j < g; ++j) {
        x[j] = static_cast<const S*>(srcs_v[k + j]) + off;
        if constexpr (kPre) c[j] = convert_scalar<K>(scalars.at(k + j));
      }
      const bool is_last = k + g == nsrc;
      if (k == 0) {
        if (store_direct && is_last) {
          L::first_n(g, out, x, c, n);
        } else {
          L::first_n(g, work, x, c, n);
        }
      } else if (store_direct && is_last) {
        L::last_n(g, out, work, x, c, n);
      } else {
        L::more_n(g, work, x, c, n);
      }
      k += g;
    }
    if constexpr (kPostDiv) {
      divide_all<A, kSigned>(out, work, n, nsrc);  // integers only: S == A
    } else {
      if (!store_direct && static_cast<void*>(work) != static_cast<void*>(out)) L::store_all(out, work, n);
    }
  }
}

template <class K, bool kSigned>
void dispatch(void* dst, const void* const* srcs, const double* scalars, int nsrc, size_t count, ReduceOp op) {
  constexpr bool kInteger = std::is_integral_v<typename K::Acc>;
  switch (op) {
    case ReduceOp::kSum: run<K, SumOp, false, false, false>(dst, srcs, {}, nsrc, count); break;
    case ReduceOp::kProd: run<K, ProdOp, false, false, false>(dst, srcs, {}, nsrc, count); break;
    case ReduceOp::kMax: run<K, MaxOp<kSigned>, false, false, false>(dst, srcs, {}, nsrc, count); break;
    case ReduceOp::kMin: run<K, MinOp<kSigned>, false, false, false>(dst, srcs, {}, nsrc, count); break;
    case ReduceOp::kPreMulSum: run<K, SumOp, true, false, false>(dst, srcs, {scalars, 1.0}, nsrc, count); break;
    case ReduceOp::kAvg:
      if constexpr (kInteger) {
        run<K, SumOp, false, true, kSigned>(dst, srcs, {}, nsrc, count);
      } else {
        // NCCL: scalar = T(1.0 / nRanks) (float(1.0 / nRanks) first for half and bfloat16).
        run<K, SumOp, true, false, false>(dst, srcs, {nullptr, 1.0 / nsrc}, nsrc, count);
      }
      break;
  }
}

}  // namespace

void reduce_arrays(void* dst, const void* const* srcs, const double* scalars, int nsrc, size_t count,
                   netsim::DataType dt, ReduceOp op) {
  if (nsrc < 1 || count == 0) return;
  switch (dt) {
    case DataType::kInt8: dispatch<PlainKind<uint8_t>, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kUint8: dispatch<PlainKind<uint8_t>, false>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kInt32: dispatch<PlainKind<uint32_t>, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kUint32: dispatch<PlainKind<uint32_t>, false>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kInt64: dispatch<PlainKind<uint64_t>, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kUint64: dispatch<PlainKind<uint64_t>, false>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kFloat16: dispatch<HalfKind, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kFloat32: dispatch<PlainKind<float>, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kFloat64: dispatch<PlainKind<double>, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kBfloat16: dispatch<Bf16Kind, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kFp8E4M3: dispatch<E4m3Kind, true>(dst, srcs, scalars, nsrc, count, op); break;
    case DataType::kFp8E5M2: dispatch<E5m2Kind, true>(dst, srcs, scalars, nsrc, count, op); break;
  }
}

void scale_copy(void* dst, const void* src, double scalar, size_t count, netsim::DataType dt) {
  const void* const srcs[1] = {src};
  reduce_arrays(dst, srcs, &scalar, 1, count, dt, ReduceOp::kPreMulSum);
}

size_t reduce_element_size(netsim::DataType dt) noexcept {
  switch (dt) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2: return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64: return 8;
  }
  return 0;
}

}  // namespace genie::shim
