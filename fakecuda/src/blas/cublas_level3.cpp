// SPDX-License-Identifier: Apache-2.0
// cuBLAS ABI: level-3 BLAS beyond GEMM (symm/hemm, syrk/herk, syr2k/her2k, trmm, trsm, trsmBatched) timed as the
// GEMM of equal work, and the batched LAPACK-style routines (getrf, getrs, geqrf, gels) timed by the roofline.
// Data is not computed; the batched factorisations report success (info = 0) and identity pivots, written in
// stream order, so callers that check info proceed.
#include <cuComplex.h>
#include <library_types.h>

#include <cstring>
#include <vector>

#include "blas_common.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

template <class T> struct TypeOf;
template <> struct TypeOf<float> { static constexpr int kType = CUDA_R_32F; };
template <> struct TypeOf<double> { static constexpr int kType = CUDA_R_64F; };
template <> struct TypeOf<cuComplex> { static constexpr int kType = CUDA_C_32F; };
template <> struct TypeOf<cuDoubleComplex> { static constexpr int kType = CUDA_C_64F; };

/// A GEMM-equivalent of `m x n x k` (the same multiply-adds) on the typed routine's math.
template <class T>
cublasStatus_t gemm_like(const char* fn, BlasHandle& h, int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmShape s;
  const int type = TypeOf<T>::kType;
  const int compute = type == CUDA_R_64F || type == CUDA_C_64F ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (!gemm_math_for(type, type, type, compute, h.math_mode, &s.math)) s.math = GemmMath::kFp32;
  s.m = m;
  s.n = n;
  s.k = k;
  s.batch = batch;
  s.complex = data_type_complex(type);
  s.ab_bytes = s.c_bytes = static_cast<uint8_t>(sizeof(T));
  return submit_gemm(fn, h, s);
}

template <class T>
GemmMath solver_math() {
  return sizeof(T) == 8 && TypeOf<T>::kType == CUDA_R_64F ? GemmMath::kFp64
         : sizeof(T) == 16                                 ? GemmMath::kFp64
                                                           : GemmMath::kFp32;
}

/// True when [p, p + bytes) lies inside one allocation known to the runtime.
bool device_range(const void* p, size_t bytes) {
  Runtime* r = Runtime::instance();
  return r != nullptr && p != nullptr && r->memory().find(p, bytes).has_value();
}

/// Writes `count` ints starting at `p` (device memory, checked) in stream order: value i*step + base.
std::function<void()> fill_ints(int* p, int64_t count, int base, int step, int period) {
  if (p == nullptr || count <= 0 || !device_range(p, static_cast<size_t>(count) * sizeof(int))) return {};
  return [=] {
    for (int64_t i = 0; i < count; ++i) p[i] = base + step * static_cast<int>(period > 0 ? i % period : i);
  };
}

}  // namespace

// C = alpha A B + beta C with symmetric/Hermitian A: <T>{sy,he}mm(handle, side, uplo, m, n, alpha, A, lda, B, ldb,
// beta, C, ldc)
#define GENIE_SYMM(Name, T)                                                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasSideMode_t side,                \
                                                  cublasFillMode_t uplo, int m, int n, const T* alpha,         \
                                                  const T* A, int lda, const T* B, int ldb, const T* beta,     \
                                                  T* C, int ldc) {                                             \
    (void)A; (void)B; (void)C;                                                                                 \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      const bool left = enum_raw(side) == CUBLAS_SIDE_LEFT;                                                    \
      GENIE_BLAS_CHECK(!valid_side(enum_raw(side)), "side");                                                   \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                   \
      GENIE_BLAS_CHECK(m < 0, "m");                                                                            \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                            \
      GENIE_BLAS_CHECK(lda < max1(left ? m : n), "lda");                                                       \
      GENIE_BLAS_CHECK(ldb < max1(m), "ldb");                                                                  \
      GENIE_BLAS_CHECK(ldc < max1(m), "ldc");                                                                  \
      GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");                                     \
      return gemm_like<T>(__func__, *h, m, n, left ? m : n);                                                   \
    });                                                                                                        \
  }
GENIE_SYMM(Ssymm_v2, float)
GENIE_SYMM(Dsymm_v2, double)
GENIE_SYMM(Csymm_v2, cuComplex)
GENIE_SYMM(Zsymm_v2, cuDoubleComplex)
GENIE_SYMM(Chemm_v2, cuComplex)
GENIE_SYMM(Zhemm_v2, cuDoubleComplex)

// rank-k updates of a triangle (half the GEMM's multiply-adds): <T>{sy,he}rk(handle, uplo, trans, n, k, alpha,
// A, lda, beta, C, ldc); S = scalar type (real for herk)
#define GENIE_SYRK(Name, S, T)                                                                                 \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo,                \
                                                  cublasOperation_t trans, int n, int k, const S* alpha,       \
                                                  const T* A, int lda, const S* beta, T* C, int ldc) {         \
    (void)A; (void)C;                                                                                          \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                   \
      GENIE_BLAS_CHECK(!valid_op(enum_raw(trans)), "trans");                                                   \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                            \
      GENIE_BLAS_CHECK(k < 0, "k");                                                                            \
      GENIE_BLAS_CHECK(lda < max1(enum_raw(trans) == CUBLAS_OP_N ? n : k), "lda");                             \
      GENIE_BLAS_CHECK(ldc < max1(n), "ldc");                                                                  \
      GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");                                     \
      return gemm_like<T>(__func__, *h, n, (n + 1) / 2, k);                                                    \
    });                                                                                                        \
  }
GENIE_SYRK(Ssyrk_v2, float, float)
GENIE_SYRK(Dsyrk_v2, double, double)
GENIE_SYRK(Csyrk_v2, cuComplex, cuComplex)
GENIE_SYRK(Zsyrk_v2, cuDoubleComplex, cuDoubleComplex)
GENIE_SYRK(Cherk_v2, float, cuComplex)
GENIE_SYRK(Zherk_v2, double, cuDoubleComplex)

// rank-2k updates: <T>{sy,he}r2k(handle, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc); B_ = beta type
#define GENIE_SYR2K(Name, T, B_)                                                                               \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo,                \
                                                  cublasOperation_t trans, int n, int k, const T* alpha,       \
                                                  const T* A, int lda, const T* B, int ldb, const B_* beta,    \
                                                  T* C, int ldc) {                                             \
    (void)A; (void)B; (void)C;                                                                                 \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      const bool no_trans = enum_raw(trans) == CUBLAS_OP_N;                                                    \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                   \
      GENIE_BLAS_CHECK(!valid_op(enum_raw(trans)), "trans");                                                   \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                            \
      GENIE_BLAS_CHECK(k < 0, "k");                                                                            \
      GENIE_BLAS_CHECK(lda < max1(no_trans ? n : k), "lda");                                                   \
      GENIE_BLAS_CHECK(ldb < max1(no_trans ? n : k), "ldb");                                                   \
      GENIE_BLAS_CHECK(ldc < max1(n), "ldc");                                                                  \
      GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");                                     \
      return gemm_like<T>(__func__, *h, n, n, k);                                                              \
    });                                                                                                        \
  }
GENIE_SYR2K(Ssyr2k_v2, float, float)
GENIE_SYR2K(Dsyr2k_v2, double, double)
GENIE_SYR2K(Csyr2k_v2, cuComplex, cuComplex)
GENIE_SYR2K(Zsyr2k_v2, cuDoubleComplex, cuDoubleComplex)
GENIE_SYR2K(Cher2k_v2, cuComplex, float)
GENIE_SYR2K(Zher2k_v2, cuDoubleComplex, double)

// Shared checks of trmm/trsm: side, uplo, trans, diag, m, n, lda (A is m x m on the left, n x n on the right), ldb.
#define GENIE_TRIANGULAR_CHECKS()                                                                              \
  const bool left = enum_raw(side) == CUBLAS_SIDE_LEFT;                                                        \
  GENIE_BLAS_CHECK(!valid_side(enum_raw(side)), "side");                                                       \
  GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                       \
  GENIE_BLAS_CHECK(!valid_op(enum_raw(trans)), "trans");                                                       \
  GENIE_BLAS_CHECK(!valid_diag(enum_raw(diag)), "diag");                                                       \
  GENIE_BLAS_CHECK(m < 0, "m");                                                                                \
  GENIE_BLAS_CHECK(n < 0, "n");                                                                                \
  GENIE_BLAS_CHECK(lda < max1(left ? m : n), "lda");                                                           \
  GENIE_BLAS_CHECK(ldb < max1(m), "ldb");                                                                      \
  GENIE_BLAS_CHECK(alpha == nullptr, "alpha")

// triangular multiply: <T>trmm(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, C, ldc)
#define GENIE_TRMM(Name, T)                                                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasSideMode_t side,                \
                                                  cublasFillMode_t uplo, cublasOperation_t trans,              \
                                                  cublasDiagType_t diag, int m, int n, const T* alpha,         \
                                                  const T* A, int lda, const T* B, int ldb, T* C, int ldc) {   \
    (void)A; (void)B; (void)C;                                                                                 \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_TRIANGULAR_CHECKS();                                                                               \
      GENIE_BLAS_CHECK(ldc < max1(m), "ldc");                                                                  \
      return gemm_like<T>(__func__, *h, m, n, ((left ? m : n) + 1) / 2);                                       \
    });                                                                                                        \
  }
GENIE_TRMM(Strmm_v2, float)
GENIE_TRMM(Dtrmm_v2, double)
GENIE_TRMM(Ctrmm_v2, cuComplex)
GENIE_TRMM(Ztrmm_v2, cuDoubleComplex)

// triangular solve: <T>trsm(handle, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb)
#define GENIE_TRSM(Name, T)                                                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasSideMode_t side,                \
                                                  cublasFillMode_t uplo, cublasOperation_t trans,              \
                                                  cublasDiagType_t diag, int m, int n, const T* alpha,         \
                                                  const T* A, int lda, T* B, int ldb) {                        \
    (void)A; (void)B;                                                                                          \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_TRIANGULAR_CHECKS();                                                                               \
      return gemm_like<T>(__func__, *h, m, n, ((left ? m : n) + 1) / 2);                                       \
    });                                                                                                        \
  }
GENIE_TRSM(Strsm_v2, float)
GENIE_TRSM(Dtrsm_v2, double)
GENIE_TRSM(Ctrsm_v2, cuComplex)
GENIE_TRSM(Ztrsm_v2, cuDoubleComplex)

// batched triangular solve: <T>trsmBatched(handle, side, uplo, trans, diag, m, n, alpha, A[], lda, B[], ldb, batch)
#define GENIE_TRSM_BATCHED(Name, T)                                                                            \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasSideMode_t side,                \
                                                  cublasFillMode_t uplo, cublasOperation_t trans,              \
                                                  cublasDiagType_t diag, int m, int n, const T* alpha,         \
                                                  const T* const A[], int lda, T* const B[], int ldb,          \
                                                  int batchCount) {                                            \
    (void)A; (void)B;                                                                                          \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_TRIANGULAR_CHECKS();                                                                               \
      GENIE_BLAS_CHECK(batchCount < 0, "batchCount");                                                          \
      return gemm_like<T>(__func__, *h, m, n, ((left ? m : n) + 1) / 2, batchCount);                           \
    });                                                                                                        \
  }
GENIE_TRSM_BATCHED(StrsmBatched, float)
GENIE_TRSM_BATCHED(DtrsmBatched, double)
GENIE_TRSM_BATCHED(CtrsmBatched, cuComplex)
GENIE_TRSM_BATCHED(ZtrsmBatched, cuDoubleComplex)

// --- batched LAPACK-style routines ------------------------------------------------------------------------------
// LU: <T>getrfBatched(handle, n, A[], lda, P, info, batch). info (device, batch ints) <- 0; P (device, n*batch
// ints, may be null) <- identity pivots 1..n. ~2/3 n^3 flops per matrix.
#define GENIE_GETRF(Name, T, mul)                                                                              \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, T* const A[], int lda, int* P, \
                                                  int* info, int batchSize) {                                  \
    (void)A;                                                                                                   \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                            \
      GENIE_BLAS_CHECK(lda < max1(n), "lda");                                                                  \
      GENIE_BLAS_CHECK(batchSize < 0, "batchSize");                                                            \
      GENIE_BLAS_CHECK(info == nullptr, "info");                                                               \
      if (n == 0 || batchSize == 0) return CUBLAS_STATUS_SUCCESS;                                              \
      auto zero_info = fill_ints(info, batchSize, 0, 0, 0);                                                    \
      auto pivots = fill_ints(P, int64_t{n} * batchSize, 1, 1, n);                                             \
      const double b = batchSize;                                                                              \
      return submit_streaming(__func__, *h, 2.0 * n * n * sizeof(T) * b, mul * 2.0 / 3.0 * n * n * n * b,      \
                              solver_math<T>(), false, [zero_info, pivots] {                                   \
                                if (zero_info) zero_info();                                                    \
                                if (pivots) pivots();                                                          \
                              });                                                                              \
    });                                                                                                        \
  }
GENIE_GETRF(SgetrfBatched, float, 1)
GENIE_GETRF(DgetrfBatched, double, 1)
GENIE_GETRF(CgetrfBatched, cuComplex, 4)
GENIE_GETRF(ZgetrfBatched, cuDoubleComplex, 4)

// LU solve: <T>getrsBatched(handle, trans, n, nrhs, A[], lda, devIpiv, B[], ldb, info (host), batch)
#define GENIE_GETRS(Name, T, mul)                                                                              \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasOperation_t trans, int n,       \
                                                  int nrhs, const T* const A[], int lda, const int* devIpiv,   \
                                                  T* const B[], int ldb, int* info, int batchSize) {           \
    (void)A; (void)B; (void)devIpiv;                                                                           \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_BLAS_CHECK(info == nullptr, "info");                                                               \
      int bad = !valid_op(enum_raw(trans)) ? 1 : n < 0 ? 2 : nrhs < 0 ? 3 : lda < max1(n) ? 5                  \
                : ldb < max1(n) ? 8 : batchSize < 0 ? 10 : 0;                                                  \
      *info = -bad;                                                                                            \
      if (bad != 0) return reject(__func__, "argument (see info)");                                            \
      if (n == 0 || nrhs == 0 || batchSize == 0) return CUBLAS_STATUS_SUCCESS;                                 \
      const double b = batchSize;                                                                              \
      return submit_streaming(__func__, *h, (double(n) * n + 2.0 * n * nrhs) * sizeof(T) * b,                  \
                              mul * 2.0 * n * n * nrhs * b, solver_math<T>());                                 \
    });                                                                                                        \
  }
GENIE_GETRS(SgetrsBatched, float, 1)
GENIE_GETRS(DgetrsBatched, double, 1)
GENIE_GETRS(CgetrsBatched, cuComplex, 4)
GENIE_GETRS(ZgetrsBatched, cuDoubleComplex, 4)

// QR: <T>geqrfBatched(handle, m, n, A[], lda, Tau[], info (host), batch). ~2mn^2 - 2/3 n^3 flops per matrix.
#define GENIE_GEQRF(Name, T, mul)                                                                              \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int m, int n, T* const A[], int lda,  \
                                                  T* const Tau[], int* info, int batchSize) {                  \
    (void)A; (void)Tau;                                                                                        \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_BLAS_CHECK(info == nullptr, "info");                                                               \
      int bad = m < 0 ? 1 : n < 0 ? 2 : lda < max1(m) ? 4 : batchSize < 0 ? 7 : 0;                            \
      *info = -bad;                                                                                            \
      if (bad != 0) return reject(__func__, "argument (see info)");                                            \
      if (m == 0 || n == 0 || batchSize == 0) return CUBLAS_STATUS_SUCCESS;                                    \
      const double b = batchSize, mn = std::min(m, n);                                                         \
      return submit_streaming(__func__, *h, 2.0 * m * n * sizeof(T) * b,                                       \
                              mul * (2.0 * m * n * mn - 2.0 / 3.0 * mn * mn * mn) * b, solver_math<T>());      \
    });                                                                                                        \
  }
GENIE_GEQRF(SgeqrfBatched, float, 1)
GENIE_GEQRF(DgeqrfBatched, double, 1)
GENIE_GEQRF(CgeqrfBatched, cuComplex, 4)
GENIE_GEQRF(ZgeqrfBatched, cuDoubleComplex, 4)

// least squares: <T>gelsBatched(handle, trans, m, n, nrhs, A[], lda, C[], ldc, info (host), devInfoArray, batch)
#define GENIE_GELS(Name, T, mul)                                                                               \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasOperation_t trans, int m, int n, \
                                                  int nrhs, T* const A[], int lda, T* const C[], int ldc,      \
                                                  int* info, int* devInfoArray, int batchSize) {               \
    (void)A; (void)C;                                                                                          \
    return guard(__func__, [&]() -> cublasStatus_t {                                                           \
      GENIE_BLAS_HANDLE(h, handle);                                                                            \
      GENIE_BLAS_CHECK(info == nullptr, "info");                                                               \
      int bad = !valid_op(enum_raw(trans)) ? 1 : m < 0 ? 2 : n < 0 ? 3 : nrhs < 0 ? 4 : lda < max1(m) ? 6      \
                : ldc < max1(std::max(m, n)) ? 8 : batchSize < 0 ? 11 : 0;                                     \
      *info = -bad;                                                                                            \
      if (bad != 0) return reject(__func__, "argument (see info)");                                            \
      if (batchSize == 0) return CUBLAS_STATUS_SUCCESS;                                                        \
      auto zero_info = fill_ints(devInfoArray, batchSize, 0, 0, 0);                                            \
      const double b = batchSize, mn = std::min(m, n);                                                         \
      return submit_streaming(__func__, *h, (2.0 * m * n + 2.0 * m * nrhs) * sizeof(T) * b,                    \
                              mul * (2.0 * m * n * mn + 4.0 * m * n * nrhs) * b, solver_math<T>(), false,      \
                              zero_info);                                                                      \
    });                                                                                                        \
  }
GENIE_GELS(SgelsBatched, float, 1)
GENIE_GELS(DgelsBatched, double, 1)
GENIE_GELS(CgelsBatched, cuComplex, 4)
GENIE_GELS(ZgelsBatched, cuDoubleComplex, 4)
