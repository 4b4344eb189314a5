// SPDX-License-Identifier: Apache-2.0
// cuBLAS ABI: level-1 BLAS (vector-vector). Each call is one bandwidth-bound op on the handle's stream, timed by
// the cost model's roofline from the bytes it streams; data is not computed (kernels do not run). Reductions
// that return their result in host memory (CUBLAS_POINTER_MODE_HOST) block until the op completes, as cuBLAS
// does, and write zero there (1, BLAS's first index, for amax/amin).
#include <cuComplex.h>
#include <library_types.h>

#include <cstring>

#include "blas_common.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

/// One level-1 op over `n` elements of `elem` bytes touching `streams` vectors, `flops_per` flops per element.
/// `result`/`result_bytes`: a reduction's output (host pointer mode: written after a blocking wait).
/// `scalar_outputs`: the call's outputs are scalars (rotg, rotmg), left as given; in host pointer mode it blocks.
cublasStatus_t level1(const char* fn, cublasHandle_t handle, int64_t n, size_t elem, size_t real_bytes, int streams,
                      double flops_per, void* result = nullptr, size_t result_bytes = 0, bool index_result = false,
                      bool scalar_outputs = false) {
  return guard(fn, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, handle);
    const bool reduction = result_bytes > 0;
    const bool host_result = (reduction || scalar_outputs) && h->pointer_mode == CUBLAS_POINTER_MODE_HOST;
    // A NULL host result is no argument error for cuBLAS: copying the result to it fails, MAPPING_ERROR (cuBLAS
    // 13.0 on an H200, docs/validation.md). A NULL device result stays an argument error here.
    if (reduction && result == nullptr)
      return host_result ? reject(fn, "result (NULL: the copy of the result is refused)", CUBLAS_STATUS_MAPPING_ERROR)
                         : reject(fn, "result");
    if (n <= 0) {  // BLAS quick return: the result is 0
      if (host_result) write_host_zero(result, result_bytes);
      return CUBLAS_STATUS_SUCCESS;
    }
    const double nn = static_cast<double>(n);
    cublasStatus_t st = submit_streaming(fn, *h, nn * elem * streams, nn * flops_per, vector_math(real_bytes),
                                         host_result);
    if (st == CUBLAS_STATUS_SUCCESS && host_result && reduction) {
      write_host_zero(result, result_bytes);
      if (index_result) {
        int one = 1;
        std::memcpy(result, &one, sizeof(one));
      }
    }
    return st;
  });
}

}  // namespace

// dot products: <T>dot{,u,c}(handle, n, x, incx, y, incy, result)
#define GENIE_DOT(Name, T, Real, flops)                                                                        \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const T* x, int incx,          \
                                                  const T* y, int incy, T* result) {                           \
    (void)x; (void)y; (void)incx; (void)incy;                                                                  \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), 2, flops, result, sizeof(T));                  \
  }
GENIE_DOT(Sdot_v2, float, float, 2)
GENIE_DOT(Ddot_v2, double, double, 2)
GENIE_DOT(Cdotu_v2, cuComplex, float, 8)
GENIE_DOT(Cdotc_v2, cuComplex, float, 8)
GENIE_DOT(Zdotu_v2, cuDoubleComplex, double, 8)
GENIE_DOT(Zdotc_v2, cuDoubleComplex, double, 8)

#define GENIE_DOT_EX(Name)                                                                                     \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const void* x,                 \
                                                  cudaDataType xType, int incx, const void* y,                 \
                                                  cudaDataType yType, int incy, void* result,                  \
                                                  cudaDataType resultType, cudaDataType executionType) {       \
    (void)x; (void)y; (void)incx; (void)incy; (void)yType; (void)executionType;                                \
    const int xb = data_type_bytes(enum_raw(xType));                                                           \
    const int rb = data_type_bytes(enum_raw(resultType));                                                      \
    if (xb == 0) return reject(__func__, "xType", CUBLAS_STATUS_NOT_SUPPORTED);                               \
    if (rb == 0) return reject(__func__, "resultType", CUBLAS_STATUS_NOT_SUPPORTED);                          \
    const bool cx = data_type_complex(enum_raw(xType));                                                        \
    return level1(__func__, handle, n, xb, cx ? xb / 2 : xb, 2, cx ? 8 : 2, result, rb);                      \
  }
GENIE_DOT_EX(DotEx)
GENIE_DOT_EX(DotcEx)

// asum and nrm2: <T>(handle, n, x, incx, Real* result)
#define GENIE_NORM(Name, T, R, flops)                                                                          \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const T* x, int incx,          \
                                                  R* result) {                                                 \
    (void)x; (void)incx;                                                                                       \
    return level1(__func__, handle, n, sizeof(T), sizeof(R), 1, flops, result, sizeof(R));                     \
  }
GENIE_NORM(Sasum_v2, float, float, 1)
GENIE_NORM(Dasum_v2, double, double, 1)
GENIE_NORM(Scasum_v2, cuComplex, float, 2)
GENIE_NORM(Dzasum_v2, cuDoubleComplex, double, 2)
GENIE_NORM(Snrm2_v2, float, float, 2)
GENIE_NORM(Dnrm2_v2, double, double, 2)
GENIE_NORM(Scnrm2_v2, cuComplex, float, 4)
GENIE_NORM(Dznrm2_v2, cuDoubleComplex, double, 4)

// index of max/min |x|: I<t>am{ax,in}(handle, n, x, incx, int* result)
#define GENIE_IAMAX(Name, T, Real)                                                                             \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const T* x, int incx,          \
                                                  int* result) {                                               \
    (void)x; (void)incx;                                                                                       \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), 1, 1, result, sizeof(int), true);              \
  }
GENIE_IAMAX(Isamax_v2, float, float)
GENIE_IAMAX(Idamax_v2, double, double)
GENIE_IAMAX(Icamax_v2, cuComplex, float)
GENIE_IAMAX(Izamax_v2, cuDoubleComplex, double)
GENIE_IAMAX(Isamin_v2, float, float)
GENIE_IAMAX(Idamin_v2, double, double)
GENIE_IAMAX(Icamin_v2, cuComplex, float)
GENIE_IAMAX(Izamin_v2, cuDoubleComplex, double)

// y = alpha x + y: <T>axpy(handle, n, alpha, x, incx, y, incy)
#define GENIE_AXPY(Name, T, Real, flops)                                                                       \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const T* alpha, const T* x,    \
                                                  int incx, T* y, int incy) {                                  \
    (void)x; (void)y; (void)incx; (void)incy;                                                                  \
    if (alpha == nullptr) return reject(__func__, "alpha");                                                    \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), 3, flops);                                     \
  }
GENIE_AXPY(Saxpy_v2, float, float, 2)
GENIE_AXPY(Daxpy_v2, double, double, 2)
GENIE_AXPY(Caxpy_v2, cuComplex, float, 8)
GENIE_AXPY(Zaxpy_v2, cuDoubleComplex, double, 8)

// copy and swap: <T>copy / <T>swap(handle, n, x, incx, y, incy)
#define GENIE_COPY(Name, T, Real, streams, X)                                                                  \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, X T* x, int incx, T* y,        \
                                                  int incy) {                                                  \
    (void)x; (void)y; (void)incx; (void)incy;                                                                  \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), streams, 0);                                   \
  }
GENIE_COPY(Scopy_v2, float, float, 2, const)
GENIE_COPY(Dcopy_v2, double, double, 2, const)
GENIE_COPY(Ccopy_v2, cuComplex, float, 2, const)
GENIE_COPY(Zcopy_v2, cuDoubleComplex, double, 2, const)
GENIE_COPY(Sswap_v2, float, float, 4, )
GENIE_COPY(Dswap_v2, double, double, 4, )
GENIE_COPY(Cswap_v2, cuComplex, float, 4, )
GENIE_COPY(Zswap_v2, cuDoubleComplex, double, 4, )

// x = alpha x: <T>scal(handle, n, alpha, x, incx); the real-alpha complex variants Csscal/Zdscal
#define GENIE_SCAL(Name, A, T, Real, flops)                                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, const A* alpha, T* x,          \
                                                  int incx) {                                                  \
    (void)x; (void)incx;                                                                                       \
    if (alpha == nullptr) return reject(__func__, "alpha");                                                    \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), 2, flops);                                     \
  }
GENIE_SCAL(Sscal_v2, float, float, float, 1)
GENIE_SCAL(Dscal_v2, double, double, double, 1)
GENIE_SCAL(Cscal_v2, cuComplex, cuComplex, float, 6)
GENIE_SCAL(Csscal_v2, float, cuComplex, float, 2)
GENIE_SCAL(Zscal_v2, cuDoubleComplex, cuDoubleComplex, double, 6)
GENIE_SCAL(Zdscal_v2, double, cuDoubleComplex, double, 2)

// plane rotations: <T>rot(handle, n, x, incx, y, incy, c, s)
#define GENIE_ROT(Name, T, C, S, Real, flops)                                                                  \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, T* x, int incx, T* y,          \
                                                  int incy, const C* c, const S* s) {                          \
    (void)x; (void)y; (void)incx; (void)incy;                                                                  \
    if (c == nullptr) return reject(__func__, "c");                                                            \
    if (s == nullptr) return reject(__func__, "s");                                                            \
    return level1(__func__, handle, n, sizeof(T), sizeof(Real), 4, flops);                                     \
  }
GENIE_ROT(Srot_v2, float, float, float, float, 6)
GENIE_ROT(Drot_v2, double, double, double, double, 6)
GENIE_ROT(Crot_v2, cuComplex, float, cuComplex, float, 20)
GENIE_ROT(Csrot_v2, cuComplex, float, float, float, 12)
GENIE_ROT(Zrot_v2, cuDoubleComplex, double, cuDoubleComplex, double, 20)
GENIE_ROT(Zdrot_v2, cuDoubleComplex, double, double, double, 12)

// modified rotations: <T>rotm(handle, n, x, incx, y, incy, param)
#define GENIE_ROTM(Name, T)                                                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, int n, T* x, int incx, T* y,          \
                                                  int incy, const T* param) {                                  \
    (void)x; (void)y; (void)incx; (void)incy;                                                                  \
    if (param == nullptr) return reject(__func__, "param");                                                    \
    return level1(__func__, handle, n, sizeof(T), sizeof(T), 4, 6);                                           \
  }
GENIE_ROTM(Srotm_v2, float)
GENIE_ROTM(Drotm_v2, double)

// Givens rotation setup on scalars: rotg(handle, a, b, c, s) and rotmg(handle, d1, d2, x1, y1, param). One
// tiny op; with host pointers the call blocks like cuBLAS (outputs are left as given).
#define GENIE_ROTG(Name, T, C)                                                                                 \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, T* a, T* b, C* c, T* s) {             \
    if (a == nullptr || b == nullptr || c == nullptr || s == nullptr) return reject(__func__, "a/b/c/s");     \
    return level1(__func__, handle, 1, sizeof(T), sizeof(C), 4, 8, nullptr, 0, false, true);                                   \
  }
GENIE_ROTG(Srotg_v2, float, float)
GENIE_ROTG(Drotg_v2, double, double)
GENIE_ROTG(Crotg_v2, cuComplex, float)
GENIE_ROTG(Zrotg_v2, cuDoubleComplex, double)

#define GENIE_ROTMG(Name, T)                                                                                   \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name(cublasHandle_t handle, T* d1, T* d2, T* x1, const T* y1,     \
                                                  T* param) {                                                  \
    if (d1 == nullptr || d2 == nullptr || x1 == nullptr || y1 == nullptr || param == nullptr)                  \
      return reject(__func__, "d1/d2/x1/y1/param");                                                           \
    return level1(__func__, handle, 1, sizeof(T), sizeof(T), 5, 16, nullptr, 0, false, true);                                      \
  }
GENIE_ROTMG(Srotmg_v2, float)
GENIE_ROTMG(Drotmg_v2, double)
