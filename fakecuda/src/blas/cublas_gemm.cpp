// SPDX-License-Identifier: Apache-2.0
// cuBLAS ABI: the GEMM family (typed, Ex, batched, strided batched, 32- and 64-bit index variants). Each call is
// checked as cuBLAS checks it, turned into a GemmShape and enqueued as one timed op on the handle's stream.
#include <cuda_fp16.h>
#include <library_types.h>

#include <algorithm>

#include "blas_common.hpp"

using namespace genie::fakecuda;
using namespace genie::fakecuda::blas;

namespace {

/// Everything a GEMM entry point passes, widened to 64-bit indices.
struct GemmArgs {
  const char* fn;
  cublasHandle_t handle;
  int transa, transb;
  int64_t m, n, k, lda, ldb, ldc, batch;
  const void* alpha;
  const void* beta;
  int a_type, b_type, c_type;
  int compute;  ///< cublasComputeType_t; -1: the typed API's default for its element type and the math mode
};

/// The compute type a typed entry point (cublasSgemm, cublasHgemm, ...) uses for its element type under the
/// handle's math mode (cuBLAS documentation, cublasSetMathMode: PEDANTIC selects the _PEDANTIC compute types).
int typed_compute(int type, int math_mode) {
  const bool pedantic = (math_mode & 0xf) == CUBLAS_PEDANTIC_MATH;
  switch (type) {
    case CUDA_R_16F: return pedantic ? CUBLAS_COMPUTE_16F_PEDANTIC : CUBLAS_COMPUTE_16F;
    case CUDA_R_64F: case CUDA_C_64F: return pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F;
    default: return pedantic ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
  }
}

/// True when the host scalar at `p` (a real or complex value of `bytes` per component) is +0 or -0.
bool scalar_is_zero(const void* p, int bytes, bool complex) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (int c = 0; c < (complex ? 2 : 1); ++c, b += bytes) {
    for (int i = 0; i < bytes; ++i) {
      const unsigned char mask = i == bytes - 1 ? 0x7f : 0xff;  // little-endian: the sign bit is in the last byte
      if ((b[i] & mask) != 0) return false;
    }
  }
  return true;
}

cublasStatus_t gemm(const GemmArgs& g) {
  return guard(g.fn, [&]() -> cublasStatus_t {
    GENIE_BLAS_HANDLE(h, g.handle);
    GENIE_BLAS_CHECK(!valid_op(g.transa), "transa");
    GENIE_BLAS_CHECK(!valid_op(g.transb), "transb");
    GENIE_BLAS_CHECK(g.m < 0, "m");
    GENIE_BLAS_CHECK(g.n < 0, "n");
    GENIE_BLAS_CHECK(g.k < 0, "k");
    GENIE_BLAS_CHECK(g.batch < 0, "batchCount");
    GENIE_BLAS_CHECK(g.lda < max1(g.transa == CUBLAS_OP_N ? g.m : g.k), "lda");
    GENIE_BLAS_CHECK(g.ldb < max1(g.transb == CUBLAS_OP_N ? g.k : g.n), "ldb");
    GENIE_BLAS_CHECK(g.ldc < max1(g.m), "ldc");
    GENIE_BLAS_CHECK(g.alpha == nullptr, "alpha");
    GENIE_BLAS_CHECK(g.beta == nullptr, "beta");
    const int compute = g.compute >= 0 ? g.compute : typed_compute(g.a_type, h->math_mode);
    GemmShape s;
    if (!gemm_math_for(g.a_type, g.b_type, g.c_type, compute, h->math_mode, &s.math))
      return reject(g.fn, "Atype/Btype/Ctype/computeType combination", CUBLAS_STATUS_NOT_SUPPORTED);
    s.m = g.m;
    s.n = g.n;
    s.k = g.k;
    s.batch = g.batch;
    s.complex = data_type_complex(g.a_type);
    s.ab_bytes = static_cast<uint8_t>(data_type_bytes(g.a_type));
    s.c_bytes = static_cast<uint8_t>(data_type_bytes(g.c_type));
    s.trans_a = g.transa != CUBLAS_OP_N;
    s.trans_b = g.transb != CUBLAS_OP_N;
    // beta == 0 in host pointer mode: C is not read (BLAS semantics). Otherwise assume it is.
    s.reads_c = true;
    if (h->pointer_mode == CUBLAS_POINTER_MODE_HOST) {
      // The scale type follows the compute type (cublasGemmEx documentation): half, double or float, complex
      // for complex data.
      const bool half = compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC;
      const bool dbl = compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC ||
                       compute == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT;
      s.reads_c = !scalar_is_zero(g.beta, half ? 2 : dbl ? 8 : 4, s.complex);
    }
    return submit_gemm(g.fn, *h, s);
  });
}

}  // namespace

// Typed GEMMs: cublas<T>gemm, <T>gemmBatched, <T>gemmStridedBatched, for 32- and 64-bit indices.
#define GENIE_TYPED_GEMM(Name, T, Type, Idx, Suffix)                                                            \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name##Suffix(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const T* alpha, const T* A, Idx lda, const T* B, Idx ldb, const T* beta, T* C, Idx ldc) {                 \
    (void)A; (void)B; (void)C;                                                                                  \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, 1, alpha, beta, \
                 Type, Type, Type, -1});                                                                        \
  }
#define GENIE_TYPED_GEMM_BATCHED(Name, T, Type, Idx, Suffix)                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name##Suffix(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const T* alpha, const T* const A[], Idx lda, const T* const B[], Idx ldb, const T* beta, T* const C[],    \
      Idx ldc, Idx batch) {                                                                                     \
    (void)A; (void)B; (void)C;                                                                                  \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, batch, alpha,   \
                 beta, Type, Type, Type, -1});                                                                  \
  }
#define GENIE_TYPED_GEMM_STRIDED(Name, T, Type, Idx, Suffix)                                                    \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name##Suffix(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const T* alpha, const T* A, Idx lda, long long int sa, const T* B, Idx ldb, long long int sb,             \
      const T* beta, T* C, Idx ldc, long long int sc, Idx batch) {                                              \
    (void)A; (void)B; (void)C; (void)sa; (void)sb; (void)sc;                                                    \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, batch, alpha,   \
                 beta, Type, Type, Type, -1});                                                                  \
  }
#define GENIE_TYPED_GEMM_ALL(P, T, Type, Plain)                       \
  GENIE_TYPED_GEMM(P##gemm##Plain, T, Type, int, )                     \
  GENIE_TYPED_GEMM(P##gemm##Plain, T, Type, int64_t, _64)              \
  GENIE_TYPED_GEMM_BATCHED(P##gemmBatched, T, Type, int, )             \
  GENIE_TYPED_GEMM_BATCHED(P##gemmBatched, T, Type, int64_t, _64)      \
  GENIE_TYPED_GEMM_STRIDED(P##gemmStridedBatched, T, Type, int, )      \
  GENIE_TYPED_GEMM_STRIDED(P##gemmStridedBatched, T, Type, int64_t, _64)

GENIE_TYPED_GEMM_ALL(S, float, CUDA_R_32F, _v2)
GENIE_TYPED_GEMM_ALL(D, double, CUDA_R_64F, _v2)
GENIE_TYPED_GEMM_ALL(C, cuComplex, CUDA_C_32F, _v2)
GENIE_TYPED_GEMM_ALL(Z, cuDoubleComplex, CUDA_C_64F, _v2)
GENIE_TYPED_GEMM_ALL(H, __half, CUDA_R_16F, )
// The Gauss three-multiplication complex GEMMs: timed as ordinary complex GEMMs (an upper bound: 3m saves 25%).
GENIE_TYPED_GEMM(Cgemm3m, cuComplex, CUDA_C_32F, int, )
GENIE_TYPED_GEMM(Cgemm3m, cuComplex, CUDA_C_32F, int64_t, _64)
GENIE_TYPED_GEMM(Zgemm3m, cuDoubleComplex, CUDA_C_64F, int, )
GENIE_TYPED_GEMM(Zgemm3m, cuDoubleComplex, CUDA_C_64F, int64_t, _64)
GENIE_TYPED_GEMM_BATCHED(Cgemm3mBatched, cuComplex, CUDA_C_32F, int, )
GENIE_TYPED_GEMM_BATCHED(Cgemm3mBatched, cuComplex, CUDA_C_32F, int64_t, _64)
GENIE_TYPED_GEMM_STRIDED(Cgemm3mStridedBatched, cuComplex, CUDA_C_32F, int, )
GENIE_TYPED_GEMM_STRIDED(Cgemm3mStridedBatched, cuComplex, CUDA_C_32F, int64_t, _64)

// Mixed-precision GEMMs: cublasGemmEx, GemmBatchedEx, GemmStridedBatchedEx (explicit compute type) and
// cublasSgemmEx / CgemmEx / Cgemm3mEx (fp32 / complex fp32 compute, element types given).
#define GENIE_GEMM_EX(Idx, Suffix)                                                                              \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublasGemmEx##Suffix(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const void* alpha, const void* A, cudaDataType Atype, Idx lda, const void* B, cudaDataType Btype,         \
      Idx ldb, const void* beta, void* C, cudaDataType Ctype, Idx ldc, cublasComputeType_t computeType,         \
      cublasGemmAlgo_t algo) {                                                                                  \
    (void)A; (void)B; (void)C; (void)algo;                                                                      \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, 1, alpha, beta, \
                 enum_raw(Atype), enum_raw(Btype), enum_raw(Ctype), enum_raw(computeType)});                    \
  }                                                                                                             \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublasGemmBatchedEx##Suffix(                                               \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const void* alpha, const void* const A[], cudaDataType Atype, Idx lda, const void* const B[],             \
      cudaDataType Btype, Idx ldb, const void* beta, void* const C[], cudaDataType Ctype, Idx ldc, Idx batch,   \
      cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                                                 \
    (void)A; (void)B; (void)C; (void)algo;                                                                      \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, batch, alpha,   \
                 beta, enum_raw(Atype), enum_raw(Btype), enum_raw(Ctype), enum_raw(computeType)});              \
  }                                                                                                             \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublasGemmStridedBatchedEx##Suffix(                                        \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const void* alpha, const void* A, cudaDataType Atype, Idx lda, long long int sa, const void* B,           \
      cudaDataType Btype, Idx ldb, long long int sb, const void* beta, void* C, cudaDataType Ctype, Idx ldc,    \
      long long int sc, Idx batch, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {                    \
    (void)A; (void)B; (void)C; (void)algo; (void)sa; (void)sb; (void)sc;                                        \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, batch, alpha,   \
                 beta, enum_raw(Atype), enum_raw(Btype), enum_raw(Ctype), enum_raw(computeType)});              \
  }
GENIE_GEMM_EX(int, )
GENIE_GEMM_EX(int64_t, _64)

#define GENIE_TYPED_SCALE_GEMM_EX(Name, S, Compute, Idx, Suffix)                                                \
  GENIE_CUBLAS_EXPORT cublasStatus_t cublas##Name##Suffix(                                                      \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, Idx m, Idx n, Idx k,           \
      const S* alpha, const void* A, cudaDataType Atype, Idx lda, const void* B, cudaDataType Btype, Idx ldb,   \
      const S* beta, void* C, cudaDataType Ctype, Idx ldc) {                                                    \
    (void)A; (void)B; (void)C;                                                                                  \
    return gemm({__func__, handle, enum_raw(transa), enum_raw(transb), m, n, k, lda, ldb, ldc, 1, alpha, beta, \
                 enum_raw(Atype), enum_raw(Btype), enum_raw(Ctype), Compute});                                  \
  }
GENIE_TYPED_SCALE_GEMM_EX(SgemmEx, float, CUBLAS_COMPUTE_32F, int, )
GENIE_TYPED_SCALE_GEMM_EX(SgemmEx, float, CUBLAS_COMPUTE_32F, int64_t, _64)
GENIE_TYPED_SCALE_GEMM_EX(CgemmEx, cuComplex, CUBLAS_COMPUTE_32F, int, )
GENIE_TYPED_SCALE_GEMM_EX(CgemmEx, cuComplex, CUBLAS_COMPUTE_32F, int64_t, _64)
GENIE_TYPED_SCALE_GEMM_EX(Cgemm3mEx, cuComplex, CUBLAS_COMPUTE_32F, int, )
GENIE_TYPED_SCALE_GEMM_EX(Cgemm3mEx, cuComplex, CUBLAS_COMPUTE_32F, int64_t, _64)
