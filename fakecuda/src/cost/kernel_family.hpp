// SPDX-License-Identifier: Apache-2.0
// Recognises a kernel's family from its (mangled or demangled) name and estimates the work of one launch from
// the launch shape: the bytes a bandwidth-bound kernel moves, the shape of an attention kernel.
#pragma once

#include <string>
#include <string_view>

#include "genie/fakecuda/cost_model.hpp"

namespace genie::fakecuda::cost {

enum class KernelFamily {
  kUnknown,        ///< no rule matched: the default bytes-per-thread rule
  kElementwise,    ///< ATen's vectorized/unrolled/legacy elementwise kernels, Triton pointwise kernels
  kCopy,           ///< copies, casts, concatenation, transposes
  kReduction,      ///< ATen's reduce_kernel, Triton reductions
  kNormalization,  ///< layer/RMS/batch norm forward and backward
  kSoftmax,        ///< softmax and log-softmax forward and backward
  kOptimizer,      ///< multi_tensor_apply (fused Adam/SGD, foreach ops)
  kIndexing,       ///< embedding, gather/scatter, index_select
  kAttentionForward,
  kAttentionBackward,
};
const char* kernel_family_name(KernelFamily f);

/// What the name says about a kernel. Derived once per name (demangling and parsing), then cached.
struct KernelInfo {
  KernelFamily family = KernelFamily::kUnknown;
  std::string demangled;       ///< the demangled name (the input when it was not mangled)
  int elem_bytes = 4;          ///< scalar type found in the name (float when none)
  double streams = 2;          ///< tensors read or written per element (Array<char*, N>: N)
  double elems_per_thread = 4; ///< elements one thread handles (from the launch code of the family)
  /// Attention kernels: tile sizes and head dimension from the kernel traits, causality from the template.
  int block_m = 0, block_n = 0, head_dim = 0;
  bool causal = false;
  bool aux = false;            ///< an attention helper (backward dot(dO, O), dQ conversion): bandwidth-bound
  /// A row-wise kernel whose row length is a parameter (cunn_SoftMax's `classes`): its index in the signature and
  /// size in bytes (-1: none). With the row read at launch, a launch moves rows x row x row_streams elements.
  int row_arg_index = -1, row_arg_bytes = 0;
  double row_streams = 0;
  /// How a launch with a known parameter layout is costed from its operands (Triton kernels, unknown kernels).
  CostModel::OperandRule operands = CostModel::OperandRule::kNone;
};

/// Classifies `name` (mangled or demangled). Pure: no caching.
KernelInfo classify_kernel(std::string_view name);

/// HBM bytes a bandwidth-bound launch of `info` moves with `shape`.
double kernel_bytes(const KernelInfo& info, const KernelShape& shape);

/// The attention problem a flash / memory-efficient attention launch computes (grid = query or key blocks x
/// batch x heads; the other sequence length is taken equal: self-attention).
AttentionShape attention_shape(const KernelInfo& info, const KernelShape& shape);

}  // namespace genie::fakecuda::cost
