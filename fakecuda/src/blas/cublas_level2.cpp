// SPDX-License-Identifier: Apache-2.0
// cuBLAS ABI: level-2 BLAS (matrix-vector). Arguments are checked as reference BLAS's xerbla does (cuBLAS answers
// CUBLAS_STATUS_INVALID_VALUE); each call is one op timed by the roofline from the matrix bytes it streams. Data
// is not computed.
#include <cuComplex.h>

#include "blas_common.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

/// One level-2 op: `matrix_elems` matrix elements read (and written when `writes_matrix`), `vector_elems` vector
/// elements moved, `flops`.
cublasStatus_t level2(const char* fn, BlasHandle& h, double matrix_elems, bool writes_matrix, double vector_elems,
                      double flops, size_t elem, size_t real) {
  if (matrix_elems <= 0) return CUBLAS_STATUS_SUCCESS;
  double bytes = (matrix_elems * (writes_matrix ? 2 : 1) + vector_elems) * static_cast<double>(elem);
  return submit_streaming(fn, h, bytes, flops, vector_math(real));
}

}  // namespace

// y = alpha op(A) x + beta y: <T>gemv(handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy)
#define GENIE_GEMV(Name, T, Real, mul)                                                                        \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasOperation_t trans, int m,      \
                                                  int n, const T* alpha, const T* A, int lda, const T* x,     \
                                                  int incx, const T* beta, T* y, int incy) {                  \
    (void)A; (void)x; (void)y;                                                                                \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(!valid_op(enum_raw(trans)), "trans");                                                  \
      GENIE_BLAS_CHECK(m < 0, "m");                                                                           \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(lda < max1(m), "lda");                                                                 \
      /* incx = 0 / incy = 0: accepted, as cuBLAS 13.0 did on an H200 (docs/validation.md) */                 \
      GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");                                    \
      return level2(__func__, *h, double(m) * n, false, 2.0 * (m + n), mul * 2.0 * m * n, sizeof(T),          \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_GEMV(Sgemv_v2, float, float, 1)
GENIE_GEMV(Dgemv_v2, double, double, 1)
GENIE_GEMV(Cgemv_v2, cuComplex, float, 4)
GENIE_GEMV(Zgemv_v2, cuDoubleComplex, double, 4)

// rank-1 updates A += alpha x y^T: <T>ger{,u,c}(handle, m, n, alpha, x, incx, y, incy, A, lda)
#define GENIE_GER(Name, T, Real, mul)                                                                         \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int m, int n, const T* alpha,        \
                                                  const T* x, int incx, const T* y, int incy, T* A,           \
                                                  int lda) {                                                  \
    (void)A; (void)x; (void)y;                                                                                \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(m < 0, "m");                                                                           \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(incx == 0, "incx");                                                                    \
      GENIE_BLAS_CHECK(incy == 0, "incy");                                                                    \
      GENIE_BLAS_CHECK(lda < max1(m), "lda");                                                                 \
      GENIE_BLAS_CHECK(alpha == nullptr, "alpha");                                                            \
      return level2(__func__, *h, double(m) * n, true, double(m + n), mul * 2.0 * m * n, sizeof(T),           \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_GER(Sger_v2, float, float, 1)
GENIE_GER(Dger_v2, double, double, 1)
GENIE_GER(Cgeru_v2, cuComplex, float, 4)
GENIE_GER(Cgerc_v2, cuComplex, float, 4)
GENIE_GER(Zgeru_v2, cuDoubleComplex, double, 4)
GENIE_GER(Zgerc_v2, cuDoubleComplex, double, 4)

// symmetric/Hermitian matrix-vector: <T>{sy,he}mv(handle, uplo, n, alpha, A, lda, x, incx, beta, y, incy)
#define GENIE_SYMV(Name, T, Real, mul)                                                                        \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo, int n,        \
                                                  const T* alpha, const T* A, int lda, const T* x, int incx,  \
                                                  const T* beta, T* y, int incy) {                            \
    (void)A; (void)x; (void)y;                                                                                \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                  \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(lda < max1(n), "lda");                                                                 \
      GENIE_BLAS_CHECK(incx == 0, "incx");                                                                    \
      GENIE_BLAS_CHECK(incy == 0, "incy");                                                                    \
      GENIE_BLAS_CHECK(alpha == nullptr || beta == nullptr, "alpha/beta");                                    \
      return level2(__func__, *h, 0.5 * n * (n + 1.0), false, 3.0 * n, mul * 2.0 * n * n, sizeof(T),          \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_SYMV(Ssymv_v2, float, float, 1)
GENIE_SYMV(Dsymv_v2, double, double, 1)
GENIE_SYMV(Csymv_v2, cuComplex, float, 4)
GENIE_SYMV(Zsymv_v2, cuDoubleComplex, double, 4)
GENIE_SYMV(Chemv_v2, cuComplex, float, 4)
GENIE_SYMV(Zhemv_v2, cuDoubleComplex, double, 4)

// symmetric/Hermitian rank-1 updates: <T>{sy,he}r(handle, uplo, n, alpha, x, incx, A, lda)
#define GENIE_SYR(Name, A_, T, Real, mul)                                                                     \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo, int n,        \
                                                  const A_* alpha, const T* x, int incx, T* A, int lda) {     \
    (void)A; (void)x;                                                                                         \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                  \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(incx == 0, "incx");                                                                    \
      GENIE_BLAS_CHECK(lda < max1(n), "lda");                                                                 \
      GENIE_BLAS_CHECK(alpha == nullptr, "alpha");                                                            \
      return level2(__func__, *h, 0.5 * n * (n + 1.0), true, double(n), mul * 1.0 * n * n, sizeof(T),        \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_SYR(Ssyr_v2, float, float, float, 1)
GENIE_SYR(Dsyr_v2, double, double, double, 1)
GENIE_SYR(Csyr_v2, cuComplex, cuComplex, float, 4)
GENIE_SYR(Zsyr_v2, cuDoubleComplex, cuDoubleComplex, double, 4)
GENIE_SYR(Cher_v2, float, cuComplex, float, 4)
GENIE_SYR(Zher_v2, double, cuDoubleComplex, double, 4)

// symmetric/Hermitian rank-2 updates: <T>{sy,he}r2(handle, uplo, n, alpha, x, incx, y, incy, A, lda)
#define GENIE_SYR2(Name, T, Real, mul)                                                                        \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo, int n,        \
                                                  const T* alpha, const T* x, int incx, const T* y, int incy, \
                                                  T* A, int lda) {                                            \
    (void)A; (void)x; (void)y;                                                                                \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                  \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(incx == 0, "incx");                                                                    \
      GENIE_BLAS_CHECK(incy == 0, "incy");                                                                    \
      GENIE_BLAS_CHECK(lda < max1(n), "lda");                                                                 \
      GENIE_BLAS_CHECK(alpha == nullptr, "alpha");                                                            \
      return level2(__func__, *h, 0.5 * n * (n + 1.0), true, 2.0 * n, mul * 2.0 * n * n, sizeof(T),           \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_SYR2(Ssyr2_v2, float, float, 1)
GENIE_SYR2(Dsyr2_v2, double, double, 1)
GENIE_SYR2(Csyr2_v2, cuComplex, float, 4)
GENIE_SYR2(Zsyr2_v2, cuDoubleComplex, double, 4)
GENIE_SYR2(Cher2_v2, cuComplex, float, 4)
GENIE_SYR2(Zher2_v2, cuDoubleComplex, double, 4)

// triangular matrix-vector multiply and solve: <T>tr{m,s}v(handle, uplo, trans, diag, n, A, lda, x, incx)
#define GENIE_TRMV(Name, T, Real, mul)                                                                        \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, cublasFillMode_t uplo,               \
                                                  cublasOperation_t trans, cublasDiagType_t diag, int n,      \
                                                  const T* A, int lda, T* x, int incx) {                      \
    (void)A; (void)x;                                                                                         \
    return guard(__func__, [&]() -> cublasStatus_t {                                                          \
      GENIE_BLAS_HANDLE(h, handle);                                                                           \
      GENIE_BLAS_CHECK(!valid_fill(enum_raw(uplo)), "uplo");                                                  \
      GENIE_BLAS_CHECK(!valid_op(enum_raw(trans)), "trans");                                                  \
      GENIE_BLAS_CHECK(!valid_diag(enum_raw(diag)), "diag");                                                  \
      GENIE_BLAS_CHECK(n < 0, "n");                                                                           \
      GENIE_BLAS_CHECK(lda < max1(n), "lda");                                                                 \
      GENIE_BLAS_CHECK(incx == 0, "incx");                                                                    \
      return level2(__func__, *h, 0.5 * n * (n + 1.0), false, 2.0 * n, mul * 1.0 * n * n, sizeof(T),          \
                    sizeof(Real));                                                                            \
    });                                                                                                       \
  }
GENIE_TRMV(Strmv_v2, float, float, 1)
GENIE_TRMV(Dtrmv_v2, double, double, 1)
GENIE_TRMV(Ctrmv_v2, cuComplex, float, 4)
GENIE_TRMV(Ztrmv_v2, cuDoubleComplex, double, 4)
GENIE_TRMV(Strsv_v2, float, float, 1)
GENIE_TRMV(Dtrsv_v2, double, double, 1)
GENIE_TRMV(Ctrsv_v2, cuComplex, float, 4)
GENIE_TRMV(Ztrsv_v2, cuDoubleComplex, double, 4)
