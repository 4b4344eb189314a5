// SPDX-License-Identifier: Apache-2.0
// CPU reduction kernels of the NCCL shim: combine received buffers element-wise with an NCCL reduction op.
#pragma once

#include <cstddef>

#include "genie/netsim/schedule.hpp"

namespace genie::shim {

/// ncclRedOp_t as the device sees it: the four basic ops, ncclAvg, and a ncclRedOpCreatePreMulSum op.
/// The reduction operators, as netsim names them (ncclRedOp_t order, PreMulSum last).
using ReduceOp = netsim::RedOp;

/// dst[i] = op_k(x_k[i]) over k = 0..nsrc-1, with x_k = srcs[k], combined strictly in source order:
/// ((x0 op x1) op x2) ..., so results do not depend on blocking or vectorization.
///
/// - kSum, kProd: integers wrap (two's complement); floating types follow IEEE arithmetic.
/// - kMax, kMin: signed comparison for kInt8/kInt32/kInt64. Floating types use fmax/fmin semantics, as NCCL's
///   fmaxf/__hmax: a NaN operand is ignored unless both are NaN; which zero max(-0, +0) returns is unspecified.
/// - kAvg: NCCL semantics. Floating types multiply every input by 1/nsrc, rounded to the element type, before
///   summing (NCCL's PreMulSum path); integer types sum (wrapping) then divide by nsrc, truncating toward zero
///   (NCCL's SumPostDiv).
/// - kPreMulSum: sum of x_k * scalars[k], each scalar first converted to the element type as NCCL stores it
///   (double -> float -> half/bfloat16/fp8 with round to nearest even; fp8 saturating; integers: truncated
///   toward zero, saturated to the int64/uint64 range, NaN -> 0, then wrapped to the element width).
///   scalars must hold nsrc values for kPreMulSum (nullptr counts as all ones) and is ignored otherwise.
///
/// half, bfloat16 and fp8 are accumulated in float and rounded once at the end (round to nearest even; fp8
/// saturating, see float_formats.hpp); float32 in float, float64 in double.
///
/// dst may be exactly any srcs[k] (in-place reduction); partial overlap is not allowed. Sources may repeat.
/// nsrc == 1 still applies avg/premul scaling. Does nothing when nsrc < 1 or count == 0.
/// Single-threaded; safe to call concurrently on disjoint destinations. Buffers need only element alignment.
void reduce_arrays(void* dst, const void* const* srcs, const double* scalars, int nsrc, size_t count,
                   netsim::DataType dt, ReduceOp op);

/// dst[i] = src[i] * scalar with the conversions of a 1-source kPreMulSum; dst may equal src.
void scale_copy(void* dst, const void* src, double scalar, size_t count, netsim::DataType dt);

/// Bytes per element of `dt` (1, 2, 4 or 8); 0 for a value outside the enum. Same as netsim::datatype_size,
/// without the link dependency on netsim.
size_t reduce_element_size(netsim::DataType dt) noexcept;

}  // namespace genie::shim
