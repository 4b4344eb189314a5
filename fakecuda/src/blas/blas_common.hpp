// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the cuBLAS and cuBLASLt ABI layers: the API guard, Status -> cublasStatus_t, handle lookup,
// argument checks and the submission of timed library work.
#pragma once

#include <cublas_api.h>

#include <cstdint>
#include <cstring>
#include <new>

#include "genie/common/enum_raw.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/blas_handle.hpp"
#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/fakecuda/wheel_version.hpp"

/// Export marker for the C ABI (the libraries are built with -fvisibility=hidden).
#define GENIE_CUBLAS_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef GENIE_CUBLAS_MAJOR
#define GENIE_CUBLAS_MAJOR 13
#endif

namespace genie::fakecuda::blas {

using genie::enum_raw;

/// Version this library reports when the program brought no cuBLAS wheel: the toolkit header's for the .so.13
/// build (CUBLAS_VER_*: 13.1.0), the last CUDA 12 release's (12.9.1, cuBLAS 12.9 release notes) for the .so.12 build.
inline constexpr int kVersionMajor = GENIE_CUBLAS_MAJOR;
inline constexpr int kVersionMinor = GENIE_CUBLAS_MAJOR == 13 ? CUBLAS_VER_MINOR : 9;
inline constexpr int kVersionPatch = GENIE_CUBLAS_MAJOR == 13 ? CUBLAS_VER_PATCH : 1;
/// The version cublasGetVersion / cublasLtGetVersion / cublas(Lt)GetProperty report: that of the nvidia-cublas wheel
/// next to the program (or fakecuda.cublas_version), else the one above (wheel_version.hpp).
inline LibraryVersion reported_version() {
  return program_library_version(GENIE_CUBLAS_MAJOR == 13 ? WheelLibrary::kCublas13 : WheelLibrary::kCublas12,
                                 LibraryVersion{kVersionMajor, kVersionMinor, kVersionPatch});
}
/// cudart the library was built against (cublasGetCudartVersion): 13.0 / 12.9.
inline constexpr size_t kCudartVersion = GENIE_CUBLAS_MAJOR == 13 ? 13000 : 12090;

/// The one place a Status becomes a cublasStatus_t (STYLE.md §3).
cublasStatus_t to_cublas(const Status& s) noexcept;

/// cublas(Lt)GetStatusName / GetStatusString: the enumerator's name, and cuBLAS's text for it.
const char* status_name(cublasStatus_t status) noexcept;
const char* status_string(cublasStatus_t status) noexcept;

/// Logs (warn) that `fn` rejected argument `what` and returns `st`.
cublasStatus_t reject(const char* fn, const char* what, cublasStatus_t st = CUBLAS_STATUS_INVALID_VALUE) noexcept;

/// Name of the API function whose body runs on this thread (reject() inside lambdas names it).
extern GENIE_TLS_FAST thread_local const char* t_api_name;

/// Runs an API body: never lets an exception escape (bad_alloc -> ALLOC_FAILED, others -> INTERNAL_ERROR).
template <class F>
cublasStatus_t guard(const char* fn, F&& body) noexcept {
  GENIE_LOG_TRACE(log::kFakecuda, "{}", fn);
  struct Scope {
    const char* outer;
    explicit Scope(const char* f) : outer(t_api_name) { t_api_name = f; }
    ~Scope() { t_api_name = outer; }
  } scope(fn);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: out of host memory", fn);
    return CUBLAS_STATUS_ALLOC_FAILED;
  } catch (const std::exception& ex) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error: {}", fn, ex.what());
    return CUBLAS_STATUS_INTERNAL_ERROR;
  } catch (...) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error", fn);
    return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

/// The live handle `h` (cuBLAS or cuBLASLt) or nullptr.
inline BlasHandle* find_handle(const void* h) { return BlasRegistry::instance().find(h); }

/// The process runtime or nullptr (logged).
Runtime* runtime_or_log(const char* fn) noexcept;

/// Enqueues `duration` of work on the handle's stream; blocking waits for it (host-pointer results).
cublasStatus_t submit(const char* fn, const BlasHandle& h, const char* label, SimTime duration, bool blocking = false,
                      std::function<void()> action = {});
/// Same on an explicit stream (cublasLtMatmul).
cublasStatus_t submit_on(const char* fn, const void* stream, const char* label, SimTime duration);

/// Times a GEMM with the cost model and enqueues it on the handle's stream (nothing for an empty GEMM).
cublasStatus_t submit_gemm(const char* fn, const BlasHandle& h, const GemmShape& shape);
/// Math whose peak bounds an element type's flops (levels 1 and 2 run on CUDA cores).
inline GemmMath vector_math(size_t real_bytes) { return real_bytes >= 8 ? GemmMath::kFp64 : GemmMath::kFp32; }
/// Times a bandwidth/compute roofline kernel (levels 1 and 2, solvers) and enqueues it.
cublasStatus_t submit_streaming(const char* fn, const BlasHandle& h, double bytes, double flops, GemmMath math,
                                bool blocking = false, std::function<void()> action = {});

// --- argument checks shared by the BLAS entry points (reference BLAS xerbla conditions, which cuBLAS reports
// as CUBLAS_STATUS_INVALID_VALUE) ---
inline bool valid_op(int op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }
inline bool valid_fill(int f) { return f == CUBLAS_FILL_MODE_LOWER || f == CUBLAS_FILL_MODE_UPPER; }
inline bool valid_side(int s) { return s == CUBLAS_SIDE_LEFT || s == CUBLAS_SIDE_RIGHT; }
inline bool valid_diag(int d) { return d == CUBLAS_DIAG_NON_UNIT || d == CUBLAS_DIAG_UNIT; }
inline int64_t max1(int64_t v) { return v > 1 ? v : 1; }

/// Element size in bytes of a cudaDataType (0 for types cuBLAS does not take).
int data_type_bytes(int type);
/// True for the complex cudaDataTypes.
bool data_type_complex(int type);

/// The math a cuBLAS GEMM runs on from its element and compute types and the handle's math mode; false when the
/// combination is not one cuBLAS supports (CUBLAS_STATUS_NOT_SUPPORTED). `compute` is a cublasComputeType_t.
bool gemm_math_for(int a_type, int b_type, int c_type, int compute, int math_mode, GemmMath* out);

/// Host-side result written for host-pointer-mode reductions (dot, nrm2, asum, amax): kernels do not run, so
/// the value is not computed; zero (index 1 for amax/amin, BLAS's first element) keeps callers deterministic.
inline void write_host_zero(void* p, size_t bytes) {
  if (p != nullptr) std::memset(p, 0, bytes);
}

}  // namespace genie::fakecuda::blas

/// Resolves the handle or returns CUBLAS_STATUS_NOT_INITIALIZED (what cuBLAS returns for an invalid handle).
#define GENIE_BLAS_HANDLE(var, handle)                                                         \
  ::genie::fakecuda::BlasHandle* var = ::genie::fakecuda::blas::find_handle(handle);            \
  if (var == nullptr)                                                                          \
  return ::genie::fakecuda::blas::reject(__func__, "handle", CUBLAS_STATUS_NOT_INITIALIZED)

/// Rejects argument `what` with CUBLAS_STATUS_INVALID_VALUE when `cond` holds.
#define GENIE_BLAS_CHECK(cond, what) \
  if (cond) return ::genie::fakecuda::blas::reject(__func__, what)
