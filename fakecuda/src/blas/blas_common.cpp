// SPDX-License-Identifier: Apache-2.0
// cuBLAS/cuBLASLt ABI helpers: status conversion, submission of timed work, data and compute types.
#include "blas_common.hpp"

#include <library_types.h>

#include <cstring>

namespace genie::fakecuda::blas {

GENIE_TLS_FAST thread_local const char* t_api_name = nullptr;

cublasStatus_t to_cublas(const Status& s) noexcept {
  switch (s.code()) {
    case Errc::kOk: return CUBLAS_STATUS_SUCCESS;
    case Errc::kInvalidArgument: return CUBLAS_STATUS_INVALID_VALUE;
    case Errc::kUnsupported: return CUBLAS_STATUS_NOT_SUPPORTED;
    case Errc::kOutOfMemory: return CUBLAS_STATUS_ALLOC_FAILED;
    // A stream that is not live, a failed capture or a failed wait: the kernel could not run.
    case Errc::kNotFound:
    case Errc::kInvalidUsage:
    case Errc::kNotReady:
    case Errc::kTimeout:
    case Errc::kRemote: return CUBLAS_STATUS_EXECUTION_FAILED;
    case Errc::kSystem:
    case Errc::kInternal: return CUBLAS_STATUS_INTERNAL_ERROR;
  }
  return CUBLAS_STATUS_INTERNAL_ERROR;
}

// The names and texts of NVIDIA's libcublas / libcublasLt 13.0 (both give the same).
#define GENIE_CUBLAS_STATUSES(X)                                                                          \
  X(CUBLAS_STATUS_SUCCESS, "success")                                                                     \
  X(CUBLAS_STATUS_NOT_INITIALIZED, "the library was not initialized")                                     \
  X(CUBLAS_STATUS_ALLOC_FAILED, "the resource allocation failed")                                         \
  X(CUBLAS_STATUS_INVALID_VALUE, "an unsupported value or parameter was passed to the function")          \
  X(CUBLAS_STATUS_ARCH_MISMATCH, "the function requires an architectural feature absent from the device") \
  X(CUBLAS_STATUS_MAPPING_ERROR, "an access to GPU memory space failed")                                  \
  X(CUBLAS_STATUS_EXECUTION_FAILED, "the function failed to launch on the GPU")                           \
  X(CUBLAS_STATUS_INTERNAL_ERROR, "an internal operation failed")                                         \
  X(CUBLAS_STATUS_NOT_SUPPORTED, "the requested functionality is not supported")                          \
  X(CUBLAS_STATUS_LICENSE_ERROR, "the license check failed")

const char* status_name(cublasStatus_t status) noexcept {
  switch (enum_raw(status)) {
#define GENIE_NAME(code, text) \
  case code:                   \
    return #code;
    GENIE_CUBLAS_STATUSES(GENIE_NAME)
#undef GENIE_NAME
    default:
      return "unrecognized status";
  }
}

const char* status_string(cublasStatus_t status) noexcept {
  switch (enum_raw(status)) {
#define GENIE_TEXT(code, text) \
  case code:                   \
    return text;
    GENIE_CUBLAS_STATUSES(GENIE_TEXT)
#undef GENIE_TEXT
    default:
      return "unrecognized status";
  }
}
#undef GENIE_CUBLAS_STATUSES

cublasStatus_t reject(const char* fn, const char* what, cublasStatus_t st) noexcept {
  if (t_api_name != nullptr && std::strcmp(fn, "operator()") == 0) fn = t_api_name;
  GENIE_LOG_WARN(log::kFakecuda, "{}: invalid argument '{}' (status {})", fn, what, static_cast<int>(st));
  return st;
}

Runtime* runtime_or_log(const char* fn) noexcept {
  Status st;
  Runtime* r = library_runtime(&st);
  if (r == nullptr) GENIE_LOG_ERROR(log::kFakecuda, "{}: the CUDA emulation cannot start: {}", fn, st.message());
  return r;
}

cublasStatus_t submit_on(const char* fn, const void* stream, const char* label, SimTime duration) {
  Runtime* r = runtime_or_log(fn);
  if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  Status st = enqueue_library_work(*r, stream, label, duration);
  if (!st.is_ok()) GENIE_LOG_WARN(log::kFakecuda, "{}: {}", fn, st.message());
  return to_cublas(st);
}

cublasStatus_t submit(const char* fn, const BlasHandle& h, const char* label, SimTime duration, bool blocking,
                      std::function<void()> action) {
  Runtime* r = runtime_or_log(fn);
  if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  Status st = enqueue_library_work(*r, h.stream, label, duration, blocking, std::move(action));
  if (!st.is_ok()) GENIE_LOG_WARN(log::kFakecuda, "{}: {}", fn, st.message());
  return to_cublas(st);
}

cublasStatus_t submit_gemm(const char* fn, const BlasHandle& h, const GemmShape& shape) {
  if (shape.m == 0 || shape.n == 0 || shape.batch == 0) return CUBLAS_STATUS_SUCCESS;  // BLAS quick return
  Runtime* r = runtime_or_log(fn);
  if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return submit(fn, h, "gemm", r->cost_model().gemm(shape));
}

cublasStatus_t submit_streaming(const char* fn, const BlasHandle& h, double bytes, double flops, GemmMath math,
                                bool blocking, std::function<void()> action) {
  Runtime* r = runtime_or_log(fn);
  if (r == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  return submit(fn, h, "blas", r->cost_model().streaming(bytes, flops, math), blocking, std::move(action));
}

int data_type_bytes(int type) {
  switch (type) {
    case CUDA_R_8I: case CUDA_R_8U: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: return 1;
    case CUDA_R_16F: case CUDA_R_16BF: case CUDA_C_8I: case CUDA_C_8U: return 2;
    case CUDA_R_32F: case CUDA_R_32I: case CUDA_R_32U: case CUDA_C_16F: case CUDA_C_16BF: return 4;
    case CUDA_R_64F: case CUDA_C_32F: case CUDA_C_32I: return 8;
    case CUDA_C_64F: return 16;
    default: return 0;
  }
}

bool data_type_complex(int type) {
  switch (type) {
    case CUDA_C_8I: case CUDA_C_8U: case CUDA_C_16F: case CUDA_C_16BF: case CUDA_C_32F: case CUDA_C_32I:
    case CUDA_C_64F: return true;
    default: return false;
  }
}

// The cublasGemmEx type table of the cuBLAS documentation (section "cublasGemmEx"): which (compute type,
// A/B type, C type) combinations exist. Anything else is CUBLAS_STATUS_NOT_SUPPORTED.
bool gemm_math_for(int a, int b, int c, int compute, int math_mode, GemmMath* out) {
  if (a != b) return false;
  const bool tf32_mode = (math_mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH;
  switch (compute) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      if (a != CUDA_R_16F || c != CUDA_R_16F) return false;
      *out = GemmMath::kFp16;
      return true;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC:
      if (a != CUDA_R_8I || (c != CUDA_R_32I && c != CUDA_R_8I)) return false;
      *out = GemmMath::kInt8;
      return true;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC: {
      const bool pedantic = compute == CUBLAS_COMPUTE_32F_PEDANTIC;
      if (a == CUDA_R_16BF && (c == CUDA_R_16BF || c == CUDA_R_32F)) *out = GemmMath::kBf16;
      else if (a == CUDA_R_16F && (c == CUDA_R_16F || c == CUDA_R_32F)) *out = GemmMath::kFp16;
      else if (a == CUDA_R_8I && c == CUDA_R_32F) *out = GemmMath::kInt8;
      else if ((a == CUDA_R_32F && c == CUDA_R_32F) || (a == CUDA_C_32F && c == CUDA_C_32F))
        *out = tf32_mode && !pedantic ? GemmMath::kTf32 : GemmMath::kFp32;
      else if (a == CUDA_C_8I && c == CUDA_C_32F) *out = GemmMath::kInt8;
      else return false;
      return true;
    }
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
      if (!((a == CUDA_R_32F && c == CUDA_R_32F) || (a == CUDA_C_32F && c == CUDA_C_32F))) return false;
      *out = compute == CUBLAS_COMPUTE_32F_FAST_16F    ? GemmMath::kFp16
             : compute == CUBLAS_COMPUTE_32F_FAST_16BF ? GemmMath::kBf16
             : compute == CUBLAS_COMPUTE_32F_FAST_TF32 ? GemmMath::kTf32
                                                       : GemmMath::kFp32;  // BF16x9 emulation: fp32-class speed
      return true;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
    case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
      if (!((a == CUDA_R_64F && c == CUDA_R_64F) || (a == CUDA_C_64F && c == CUDA_C_64F))) return false;
      *out = GemmMath::kFp64;
      return true;
    default:
      return false;
  }
}

}  // namespace genie::fakecuda::blas
