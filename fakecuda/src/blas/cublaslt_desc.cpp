// SPDX-License-Identifier: Apache-2.0
// cuBLASLt ABI: matmul, matrix-layout, preference, transform and emulation descriptors (create, init in
// caller memory, destroy, set/get attributes with cuBLASLt's size checks), and the recovery of a GEMM problem
// from them.
#include <library_types.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "cublaslt_desc.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

/// One settable attribute: its id, where it lives in the state and its exact size (cuBLASLt checks sizeInBytes).
struct Attr {
  int id;
  size_t offset;
  size_t size;
};
#define GENIE_ATTR(id, State, field) {id, offsetof(State, field), sizeof(State::field)}

const Attr kMatmulAttrs[] = {
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, LtMatmulDesc, compute_type),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_SCALE_TYPE, LtMatmulDesc, scale_type),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_POINTER_MODE, LtMatmulDesc, pointer_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_TRANSA, LtMatmulDesc, transa),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_TRANSB, LtMatmulDesc, transb),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_TRANSC, LtMatmulDesc, transc),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_FILL_MODE, LtMatmulDesc, fill_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE, LtMatmulDesc, epilogue),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_BIAS_POINTER, LtMatmulDesc, bias_pointer),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, LtMatmulDesc, bias_batch_stride),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, LtMatmulDesc, aux_pointer),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, LtMatmulDesc, aux_ld),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, LtMatmulDesc, aux_batch_stride),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, LtMatmulDesc, alpha_vector_batch_stride),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, LtMatmulDesc, sm_count_target),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, LtMatmulDesc, a_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, LtMatmulDesc, b_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, LtMatmulDesc, c_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, LtMatmulDesc, d_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, LtMatmulDesc, amax_d),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, LtMatmulDesc, aux_data_type),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, LtMatmulDesc, aux_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, LtMatmulDesc, aux_amax),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_FAST_ACCUM, LtMatmulDesc, fast_accum),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, LtMatmulDesc, bias_data_type),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, LtMatmulDesc, a_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, LtMatmulDesc, b_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_C_SCALE_MODE, LtMatmulDesc, c_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_D_SCALE_MODE, LtMatmulDesc, d_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, LtMatmulDesc, aux_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, LtMatmulDesc, d_out_scale),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, LtMatmulDesc, d_out_scale_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, LtMatmulDesc, emulation_desc),
};
const Attr kLayoutAttrs[] = {
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_TYPE, LtLayout, type),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_ORDER, LtLayout, order),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_ROWS, LtLayout, rows),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_COLS, LtLayout, cols),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_LD, LtLayout, ld),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, LtLayout, batch_count),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, LtLayout, batch_stride),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, LtLayout, plane_offset),
    GENIE_ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, LtLayout, batch_mode),
};
const Attr kPreferenceAttrs[] = {
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_SEARCH_MODE, LtPreference, search_mode),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, LtPreference, max_workspace_bytes),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, LtPreference, reduction_scheme_mask),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, LtPreference, min_align_a),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, LtPreference, min_align_b),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, LtPreference, min_align_c),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, LtPreference, min_align_d),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, LtPreference, max_waves),
    GENIE_ATTR(CUBLASLT_MATMUL_PREF_IMPL_MASK, LtPreference, impl_mask),
};
const Attr kTransformAttrs[] = {
    GENIE_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, LtTransformDesc, scale_type),
    GENIE_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, LtTransformDesc, pointer_mode),
    GENIE_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, LtTransformDesc, transa),
    GENIE_ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, LtTransformDesc, transb),
};
const Attr kEmulationAttrs[] = {
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_STRATEGY, LtEmulationDesc, strategy),
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT, LtEmulationDesc, special_values),
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_CONTROL, LtEmulationDesc, mantissa_control),
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MAX_MANTISSA_BIT_COUNT, LtEmulationDesc, max_mantissa_bits),
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_OFFSET, LtEmulationDesc, mantissa_bit_offset),
    GENIE_ATTR(CUBLASLT_EMULATION_DESC_FIXEDPOINT_MANTISSA_BIT_COUNT_POINTER, LtEmulationDesc,
               mantissa_bit_count_pointer),
};
#undef GENIE_ATTR

template <size_t N>
const Attr* find_attr(const Attr (&table)[N], int id) {
  for (const Attr& a : table)
    if (a.id == id) return &a;
  return nullptr;
}

// SetAttribute/GetAttribute as cublasLt.h documents them: INVALID_VALUE for a null descriptor or buffer, an
// unknown attribute or a size that is not the attribute's; a Get with sizeInBytes 0 reports the size needed.
template <class State, size_t N>
cublasStatus_t set_attr(const char* fn, State* s, const Attr (&table)[N], int id, const void* buf, size_t size) {
  if (s == nullptr) return reject(fn, "descriptor");
  const Attr* a = find_attr(table, id);
  if (a == nullptr) return reject(fn, "attr");
  if (buf == nullptr) return reject(fn, "buf");
  if (size != a->size) return reject(fn, "sizeInBytes");
  std::memcpy(reinterpret_cast<char*>(s) + a->offset, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

template <class State, size_t N>
cublasStatus_t get_attr(const char* fn, const State* s, const Attr (&table)[N], int id, void* buf, size_t size,
                        size_t* written) {
  if (s == nullptr) return reject(fn, "descriptor");
  const Attr* a = find_attr(table, id);
  if (a == nullptr) return reject(fn, "attr");
  if (size == 0) {
    if (written == nullptr) return reject(fn, "sizeWritten");
    *written = a->size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr) return reject(fn, "buf");
  if (size != a->size) return reject(fn, "sizeInBytes");
  std::memcpy(buf, reinterpret_cast<const char*>(s) + a->offset, size);
  if (written != nullptr) *written = a->size;
  return CUBLAS_STATUS_SUCCESS;
}

void init_matmul(LtMatmulDesc* d, int compute, int scale) {
  std::memset(static_cast<void*>(d), 0, sizeof(cublasLtMatmulDescOpaque_t));
  d->magic = LtMatmulDesc::kMagic;
  d->compute_type = compute;
  d->scale_type = scale;
  d->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  d->transa = d->transb = d->transc = CUBLAS_OP_N;
  d->fill_mode = CUBLAS_FILL_MODE_FULL;
  d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  d->aux_data_type = d->bias_data_type = -1;  // cublasLt.h defaults: "-1" (the output type)
}

void init_layout(LtLayout* l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  std::memset(static_cast<void*>(l), 0, sizeof(cublasLtMatrixLayoutOpaque_t));
  l->magic = LtLayout::kMagic;
  l->type = static_cast<uint32_t>(type);
  l->order = CUBLASLT_ORDER_COL;
  l->batch_count = 1;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
}

void init_preference(LtPreference* p) {
  std::memset(static_cast<void*>(p), 0, sizeof(cublasLtMatmulPreferenceOpaque_t));
  p->magic = LtPreference::kMagic;
  p->search_mode = CUBLASLT_SEARCH_BEST_FIT;
  p->reduction_scheme_mask = CUBLASLT_REDUCTION_SCHEME_MASK;
  p->min_align_a = p->min_align_b = p->min_align_c = p->min_align_d = 256;  // cublasLt.h defaults
  p->impl_mask = ~uint64_t{0};
}

void init_transform(LtTransformDesc* t, int scale) {
  std::memset(static_cast<void*>(t), 0, sizeof(cublasLtMatrixTransformDescOpaque_t));
  t->magic = LtTransformDesc::kMagic;
  t->scale_type = scale;
  t->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  t->transa = t->transb = CUBLAS_OP_N;
}

void init_emulation(LtEmulationDesc* e) {
  std::memset(static_cast<void*>(e), 0, sizeof(cublasLtEmulationDescOpaque_t));
  e->magic = LtEmulationDesc::kMagic;
  e->special_values = CUDA_EMULATION_SPECIAL_VALUES_SUPPORT_DEFAULT;
}

/// Destroy of a Create'd block: clears the magic so later use is caught, then frees it.
template <class State, class Opaque>
cublasStatus_t destroy(const char* fn, Opaque* p) {
  if (p == nullptr) return CUBLAS_STATUS_SUCCESS;
  State* s = state_of<State>(p);
  if (s == nullptr) return reject(fn, "descriptor");
  s->magic = 0;
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

// --- matmul descriptors -----------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t d, size_t size,
                                                                   cublasComputeType_t compute, cudaDataType_t scale) {
  if (d == nullptr) return reject(__func__, "matmulDesc");
  if (size < sizeof(cublasLtMatmulDescOpaque_t)) return reject(__func__, "size", CUBLAS_STATUS_ALLOC_FAILED);
  init_matmul(reinterpret_cast<LtMatmulDesc*>(d), enum_raw(compute), enum_raw(scale));
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t compute,
                                                            cudaDataType_t scale) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (d == nullptr) return reject(__func__, "matmulDesc");
    auto* p = new cublasLtMatmulDescOpaque_t;
    init_matmul(reinterpret_cast<LtMatmulDesc*>(p), enum_raw(compute), enum_raw(scale));
    *d = p;
    return CUBLAS_STATUS_SUCCESS;
  });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  return destroy<LtMatmulDesc>(__func__, d);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                                  cublasLtMatmulDescAttributes_t attr,
                                                                  const void* buf, size_t size) {
  return set_attr(__func__, state_of<LtMatmulDesc>(d), kMatmulAttrs, enum_raw(attr), buf, size);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                                  cublasLtMatmulDescAttributes_t attr, void* buf,
                                                                  size_t size, size_t* written) {
  return get_attr(__func__, state_of<LtMatmulDesc>(d), kMatmulAttrs, enum_raw(attr), buf, size, written);
}

// --- matrix layouts ---------------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t l, size_t size,
                                                                     cudaDataType type, uint64_t rows, uint64_t cols,
                                                                     int64_t ld) {
  if (l == nullptr) return reject(__func__, "matLayout");
  if (size < sizeof(cublasLtMatrixLayoutOpaque_t)) return reject(__func__, "size", CUBLAS_STATUS_ALLOC_FAILED);
  init_layout(reinterpret_cast<LtLayout*>(l), enum_raw(type), rows, cols, ld);
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type,
                                                              uint64_t rows, uint64_t cols, int64_t ld) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (l == nullptr) return reject(__func__, "matLayout");
    auto* p = new cublasLtMatrixLayoutOpaque_t;
    init_layout(reinterpret_cast<LtLayout*>(p), enum_raw(type), rows, cols, ld);
    *l = p;
    return CUBLAS_STATUS_SUCCESS;
  });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  return destroy<LtLayout>(__func__, l);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                                    cublasLtMatrixLayoutAttribute_t attr,
                                                                    const void* buf, size_t size) {
  return set_attr(__func__, state_of<LtLayout>(l), kLayoutAttrs, enum_raw(attr), buf, size);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                                    cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                                    size_t size, size_t* written) {
  return get_attr(__func__, state_of<LtLayout>(l), kLayoutAttrs, enum_raw(attr), buf, size, written);
}

// --- heuristic preferences --------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t p, size_t size) {
  if (p == nullptr) return reject(__func__, "pref");
  if (size < sizeof(cublasLtMatmulPreferenceOpaque_t)) return reject(__func__, "size", CUBLAS_STATUS_ALLOC_FAILED);
  init_preference(reinterpret_cast<LtPreference*>(p));
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (p == nullptr) return reject(__func__, "pref");
    auto* o = new cublasLtMatmulPreferenceOpaque_t;
    init_preference(reinterpret_cast<LtPreference*>(o));
    *p = o;
    return CUBLAS_STATUS_SUCCESS;
  });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
  return destroy<LtPreference>(__func__, p);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                                        cublasLtMatmulPreferenceAttributes_t attr,
                                                                        const void* buf, size_t size) {
  return set_attr(__func__, state_of<LtPreference>(p), kPreferenceAttrs, enum_raw(attr), buf, size);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t p,
                                                                        cublasLtMatmulPreferenceAttributes_t attr,
                                                                        void* buf, size_t size, size_t* written) {
  return get_attr(__func__, state_of<LtPreference>(p), kPreferenceAttrs, enum_raw(attr), buf, size, written);
}

// --- matrix transform descriptors -------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransformDescInit_internal(cublasLtMatrixTransformDesc_t t,
                                                                            size_t size, cudaDataType scale) {
  if (t == nullptr) return reject(__func__, "transformDesc");
  if (size < sizeof(cublasLtMatrixTransformDescOpaque_t)) return reject(__func__, "size", CUBLAS_STATUS_ALLOC_FAILED);
  init_transform(reinterpret_cast<LtTransformDesc*>(t), enum_raw(scale));
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransformDescCreate(cublasLtMatrixTransformDesc_t* t,
                                                                     cudaDataType scale) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (t == nullptr) return reject(__func__, "transformDesc");
    auto* o = new cublasLtMatrixTransformDescOpaque_t;
    init_transform(reinterpret_cast<LtTransformDesc*>(o), enum_raw(scale));
    *t = o;
    return CUBLAS_STATUS_SUCCESS;
  });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransformDescDestroy(cublasLtMatrixTransformDesc_t t) {
  return destroy<LtTransformDesc>(__func__, t);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransformDescSetAttribute(
    cublasLtMatrixTransformDesc_t t, cublasLtMatrixTransformDescAttributes_t attr, const void* buf, size_t size) {
  return set_attr(__func__, state_of<LtTransformDesc>(t), kTransformAttrs, enum_raw(attr), buf, size);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtMatrixTransformDescGetAttribute(
    cublasLtMatrixTransformDesc_t t, cublasLtMatrixTransformDescAttributes_t attr, void* buf, size_t size,
    size_t* written) {
  return get_attr(__func__, state_of<LtTransformDesc>(t), kTransformAttrs, enum_raw(attr), buf, size, written);
}

// --- emulation descriptors --------------------------------------------------------------------------------------
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t e, size_t size) {
  if (e == nullptr) return reject(__func__, "emulationDesc");
  if (size < sizeof(cublasLtEmulationDescOpaque_t)) return reject(__func__, "size", CUBLAS_STATUS_ALLOC_FAILED);
  init_emulation(reinterpret_cast<LtEmulationDesc*>(e));
  return CUBLAS_STATUS_SUCCESS;
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtEmulationDescCreate(cublasLtEmulationDesc_t* e) {
  return guard(__func__, [&]() -> cublasStatus_t {
    if (e == nullptr) return reject(__func__, "emulationDesc");
    auto* o = new cublasLtEmulationDescOpaque_t;
    init_emulation(reinterpret_cast<LtEmulationDesc*>(o));
    *e = o;
    return CUBLAS_STATUS_SUCCESS;
  });
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtEmulationDescDestroy(cublasLtEmulationDesc_t e) {
  return destroy<LtEmulationDesc>(__func__, e);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t e,
                                                                     cublasLtEmulationDescAttributes_t attr,
                                                                     const void* buf, size_t size) {
  return set_attr(__func__, state_of<LtEmulationDesc>(e), kEmulationAttrs, enum_raw(attr), buf, size);
}
GENIE_CUBLAS_EXPORT cublasStatus_t cublasLtEmulationDescGetAttribute(cublasLtEmulationDesc_t e,
                                                                     cublasLtEmulationDescAttributes_t attr,
                                                                     void* buf, size_t size, size_t* written) {
  return get_attr(__func__, state_of<LtEmulationDesc>(e), kEmulationAttrs, enum_raw(attr), buf, size, written);
}

// --- the GEMM a set of descriptors describes --------------------------------------------------------------------
namespace genie::fakecuda::blas {

namespace {
bool valid_layout(const LtLayout& l) {
  if (l.batch_count < 1 || (data_type_bytes(static_cast<int>(l.type)) == 0 && l.type != CUDA_R_4F_E2M1)) return false;
  if (l.order == CUBLASLT_ORDER_COL) return l.ld >= static_cast<int64_t>(std::max<uint64_t>(1, l.rows));
  if (l.order == CUBLASLT_ORDER_ROW) return l.ld >= static_cast<int64_t>(std::max<uint64_t>(1, l.cols));
  return l.order >= CUBLASLT_ORDER_COL32 && l.order <= CUBLASLT_ORDER_COL32_2R_4R4;  // IMMA layouts: ld as given
}
bool is_fp8(int t) { return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2; }
}  // namespace

cublasStatus_t lt_problem(const char* fn, const LtMatmulDesc& desc, const LtLayout& a, const LtLayout& b,
                          const LtLayout& c, const LtLayout& d, LtProblem* out) {
  if (!valid_op(desc.transa)) return reject(fn, "CUBLASLT_MATMUL_DESC_TRANSA");
  if (!valid_op(desc.transb)) return reject(fn, "CUBLASLT_MATMUL_DESC_TRANSB");
  if (desc.transc != CUBLAS_OP_N) return reject(fn, "CUBLASLT_MATMUL_DESC_TRANSC", CUBLAS_STATUS_NOT_SUPPORTED);
  if (!valid_layout(a)) return reject(fn, "Adesc");
  if (!valid_layout(b)) return reject(fn, "Bdesc");
  if (!valid_layout(c)) return reject(fn, "Cdesc");
  if (!valid_layout(d)) return reject(fn, "Ddesc");
  const uint64_t m = d.rows, n = d.cols;
  const uint64_t k = desc.transa == CUBLAS_OP_N ? a.cols : a.rows;
  if ((desc.transa == CUBLAS_OP_N ? a.rows : a.cols) != m) return reject(fn, "Adesc rows/cols (m)");
  if ((desc.transb == CUBLAS_OP_N ? b.rows : b.cols) != k) return reject(fn, "Bdesc rows/cols (k)");
  if ((desc.transb == CUBLAS_OP_N ? b.cols : b.rows) != n) return reject(fn, "Bdesc rows/cols (n)");
  if (c.rows != m || c.cols != n) return reject(fn, "Cdesc rows/cols");
  if (a.batch_count != d.batch_count || b.batch_count != d.batch_count || c.batch_count != d.batch_count)
    return reject(fn, "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT");
  LtProblem p;
  p.a_type = static_cast<int>(a.type);
  p.b_type = static_cast<int>(b.type);
  p.c_type = static_cast<int>(c.type);
  p.d_type = static_cast<int>(d.type);
  GemmShape& s = p.shape;
  if (is_fp8(p.a_type) || is_fp8(p.b_type)) {
    // FP8 GEMMs (cublasLtMatmul documentation, FP8 table): A and B e4m3/e5m2, fp32 compute, any 16/32-bit or
    // fp8 output. Only sm89+ parts have FP8 tensor cores; the cost model falls back to fp16 rates elsewhere.
    if (desc.compute_type != CUBLAS_COMPUTE_32F || !(is_fp8(p.a_type) && is_fp8(p.b_type)))
      return reject(fn, "Atype/Btype/computeType (fp8)", CUBLAS_STATUS_NOT_SUPPORTED);
    s.math = GemmMath::kFp8;
  } else {
    // cuBLASLt accepts the cublasGemmEx combinations; D may differ from C only in the fp8 table above.
    if (p.c_type != p.d_type) return reject(fn, "Ctype/Dtype", CUBLAS_STATUS_NOT_SUPPORTED);
    if (!gemm_math_for(p.a_type, p.b_type, p.c_type, desc.compute_type, 0, &s.math))
      return reject(fn, "Atype/Btype/Ctype/computeType combination", CUBLAS_STATUS_NOT_SUPPORTED);
  }
  s.m = static_cast<int64_t>(m);
  s.n = static_cast<int64_t>(n);
  s.k = static_cast<int64_t>(k);
  s.batch = d.batch_count;
  s.complex = data_type_complex(p.a_type);
  s.ab_bytes = static_cast<uint8_t>(std::max(1, data_type_bytes(p.a_type)));
  s.c_bytes = static_cast<uint8_t>(std::max(1, data_type_bytes(p.d_type)));
  s.trans_a = desc.transa != CUBLAS_OP_N;
  s.trans_b = desc.transb != CUBLAS_OP_N;
  // Epilogue traffic beyond D (cublasLtEpilogue_t): GELU/ReLU auxiliary outputs are written, the gradient
  // epilogues read them back; bias gradients write one vector; the bias vector itself is negligible.
  const double mn = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(s.batch);
  const uint32_t e = desc.epilogue;
  if (e & 128) s.extra_bytes += mn * (e & 32 || e & 64 ? s.c_bytes : 0.125);  // AUX: GELU input or ReLU bit mask
  if (e & 16) s.extra_bytes += static_cast<double>(m) * s.c_bytes * s.batch;   // BGRAD
  if (e & (256 | 512)) s.extra_bytes += static_cast<double>(e & 256 ? m : n) * s.c_bytes * s.batch;
  *out = p;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace genie::fakecuda::blas
