// SPDX-License-Identifier: Apache-2.0
// cuBLASLt descriptors as Genie stores them. cuBLASLt's descriptors are caller-visible opaque blocks (the
// cublasLt*Init helpers initialise caller-allocated ones), so each state below lives inside its opaque struct
// and starts with a magic number the entry points check.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>

#include "blas_common.hpp"

namespace genie::fakecuda::blas {

struct LtMatmulDesc {
  static constexpr uint32_t kMagic = 0x4c746d64u;  // "Ltmd"
  uint32_t magic;
  int32_t compute_type, scale_type, pointer_mode, transa, transb, transc, fill_mode;
  uint32_t epilogue;
  int32_t sm_count_target, aux_data_type, bias_data_type;
  int32_t a_scale_mode, b_scale_mode, c_scale_mode, d_scale_mode, aux_scale_mode, d_out_scale_mode;
  int8_t fast_accum;
  const void* bias_pointer;
  int64_t bias_batch_stride;
  void* aux_pointer;
  int64_t aux_ld, aux_batch_stride, alpha_vector_batch_stride;
  const void* a_scale;
  const void* b_scale;
  const void* c_scale;
  const void* d_scale;
  void* amax_d;
  void* aux_scale;
  void* aux_amax;
  void* d_out_scale;
  void* emulation_desc;
};
static_assert(sizeof(LtMatmulDesc) <= sizeof(cublasLtMatmulDescOpaque_t));

struct LtLayout {
  static constexpr uint32_t kMagic = 0x4c746c79u;  // "Ltly"
  uint32_t magic;
  uint32_t type;
  int32_t order;
  int32_t batch_count;
  uint64_t rows, cols;
  int64_t ld, batch_stride, plane_offset;
  uint32_t batch_mode;
};
static_assert(sizeof(LtLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t));

struct LtPreference {
  static constexpr uint32_t kMagic = 0x4c747066u;  // "Ltpf"
  uint32_t magic;
  uint32_t search_mode;
  uint64_t max_workspace_bytes;
  uint32_t reduction_scheme_mask;
  uint32_t min_align_a, min_align_b, min_align_c, min_align_d;
  float max_waves;
  uint64_t impl_mask;
};
static_assert(sizeof(LtPreference) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

struct LtTransformDesc {
  static constexpr uint32_t kMagic = 0x4c747478u;  // "Lttx"
  uint32_t magic;
  int32_t scale_type, pointer_mode, transa, transb;
};
static_assert(sizeof(LtTransformDesc) <= sizeof(cublasLtMatrixTransformDescOpaque_t));

struct LtEmulationDesc {
  static constexpr uint32_t kMagic = 0x4c74656du;  // "Ltem"
  uint32_t magic;
  int32_t strategy, special_values, mantissa_control, max_mantissa_bits, mantissa_bit_offset;
  int32_t* mantissa_bit_count_pointer;
};
static_assert(sizeof(LtEmulationDesc) <= sizeof(cublasLtEmulationDescOpaque_t));

/// The algorithm Genie's heuristic returns, stored in cublasLtMatmulAlgo_t::data.
struct LtAlgo {
  static constexpr uint32_t kMagic = 0x4c74616cu;  // "Ltal"
  uint32_t magic;
  int32_t algo_id;
  uint32_t tile_id, splitk, reduction_scheme, swizzle, custom_option, stages_id;
  uint16_t inner_shape, cluster_shape;
  int32_t compute_type, scale_type, a_type, b_type, c_type, d_type;
};
static_assert(sizeof(LtAlgo) <= sizeof(cublasLtMatmulAlgo_t));

/// The state inside an opaque block, or nullptr when `p` is null or was not initialised by this library.
template <class State, class Opaque>
State* state_of(Opaque* p) {
  if (p == nullptr) return nullptr;
  State* s = reinterpret_cast<State*>(p);
  return s->magic == State::kMagic ? s : nullptr;
}

/// A cuBLASLt GEMM recovered from the descriptors, or the status cublasLtMatmul/heuristics return for them.
struct LtProblem {
  GemmShape shape;
  int a_type = 0, b_type = 0, c_type = 0, d_type = 0;
};
cublasStatus_t lt_problem(const char* fn, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
                          const LtLayout& c, const LtLayout& d, LtProblem* out);

}  // namespace genie::fakecuda::blas
