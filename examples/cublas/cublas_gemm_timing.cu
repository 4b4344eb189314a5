// SPDX-License-Identifier: Apache-2.0
// Example: GEMM timing through cuBLAS and cuBLASLt. The same GEMM is issued through cublasGemmEx (or
// cublasSgemm for fp32/tf32), cublasGemmStridedBatchedEx and cublasLtMatmul; CUDA events around three
// back-to-back calls must measure exactly the cost model's prediction (`genie cost gemm`).
// Usage: cublas_gemm_timing <bf16|fp16|fp32|tf32> <m> <n> <k> <expected_us> <expected_us_batch4>
#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstring>
#include <string>

#include "check.cuh"

#define CHECK_BLAS(call)                                                                     \
  do {                                                                                       \
    cublasStatus_t s_ = (call);                                                              \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cublasGetStatusName(s_)); \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

struct Case {
  cudaDataType type;          // element type of A, B, C
  cublasComputeType_t compute;
  bool tf32_math;             // cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH) for the typed API
};

static Case case_for(const std::string& d) {
  if (d == "bf16") return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, false};
  if (d == "fp16") return {CUDA_R_16F, CUBLAS_COMPUTE_32F, false};
  if (d == "tf32") return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, true};
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F, false};
}

static size_t elem_bytes(cudaDataType t) { return t == CUDA_R_32F ? 4 : 2; }

// Runs `issue` once to keep the stream busy, then three times between events: the ops start back to back, so
// the elapsed time is exactly three model durations. Returns the mean in microseconds.
template <class F>
static double timed(cudaStream_t s, F issue) {
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  issue();
  CHECK_CUDA(cudaEventRecord(t0, s));
  for (int i = 0; i < 3; ++i) issue();
  CHECK_CUDA(cudaEventRecord(t1, s));
  CHECK_CUDA(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
  CHECK_CUDA(cudaEventDestroy(t0));
  CHECK_CUDA(cudaEventDestroy(t1));
  return ms * 1e3 / 3;
}

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s <bf16|fp16|fp32|tf32> <m> <n> <k> <expected_us> <expected_us_batch4>\n", argv[0]);
    return 2;
  }
  const std::string dtype = argv[1];
  const int m = std::atoi(argv[2]), n = std::atoi(argv[3]), k = std::atoi(argv[4]);
  const double expected = std::atof(argv[5]), expected_b4 = std::atof(argv[6]);
  // cudaEventElapsedTime returns float milliseconds: allow its rounding (relative 1e-6) plus 1 ns per op.
  const double tol = 1e-3 + expected_b4 * 1e-6;
  const Case c = case_for(dtype);
  const size_t eb = elem_bytes(c.type);

  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *A, *B, *C, *ws;
  const int batch = 4;
  CHECK_CUDA(cudaMalloc(&A, size_t(m) * k * eb * batch));
  CHECK_CUDA(cudaMalloc(&B, size_t(k) * n * eb * batch));
  CHECK_CUDA(cudaMalloc(&C, size_t(m) * n * eb * batch));
  CHECK_CUDA(cudaMalloc(&ws, 32 << 20));

  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  CHECK_BLAS(cublasSetStream(h, s));
  CHECK_BLAS(cublasSetWorkspace(h, ws, 32 << 20));
  const float one = 1.0f, zero = 0.0f;

  // 1. The typed or Ex API, as PyTorch calls it (fp32: cublasSgemm under the handle's math mode).
  double us;
  if (c.type == CUDA_R_32F) {
    CHECK_BLAS(cublasSetMathMode(h, c.tf32_math ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
    us = timed(s, [&] {
      CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const float*)A, m, (const float*)B, k,
                             &zero, (float*)C, m));
    });
  } else {
    us = timed(s, [&] {
      CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, c.type, m, B, c.type, k, &zero, C, c.type,
                              m, c.compute, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    });
  }
  EXPECT_NEAR_DBL("cuBLAS GEMM time (us)", expected, us, tol);

  // 2. Strided batched, batch 4.
  us = timed(s, [&] {
    CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, c.type, m, (long long)m * k,
                                          B, c.type, k, (long long)k * n, &zero, C, c.type, m, (long long)m * n, batch,
                                          c.compute, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
  });
  EXPECT_NEAR_DBL("cuBLAS strided batched GEMM time, batch 4 (us)", expected_b4, us, tol);

  // 3. cuBLASLt with descriptors, through the cuBLAS handle cast to a cuBLASLt handle (PyTorch's pattern).
  cublasLtHandle_t lt = reinterpret_cast<cublasLtHandle_t>(h);
  cublasLtMatmulDesc_t op;
  CHECK_BLAS(cublasLtMatmulDescCreate(&op, c.compute, CUDA_R_32F));
  cublasOperation_t tn = CUBLAS_OP_N;
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tn, sizeof(tn)));
  CHECK_BLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tn, sizeof(tn)));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, c.type, m, k, m));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, c.type, k, n, k));
  CHECK_BLAS(cublasLtMatrixLayoutCreate(&lc, c.type, m, n, m));
  cublasLtMatmulPreference_t pref;
  CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws_bytes = 32 << 20;
  CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                  sizeof(ws_bytes)));
  cublasLtMatmulHeuristicResult_t heur = {};
  int found = 0;
  CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
  EXPECT_EQ_INT("cuBLASLt heuristic returns one algorithm", 1, found);
  EXPECT_EQ_INT("its workspace fits the preference", 1, heur.workspaceSize <= ws_bytes);
  us = timed(s, [&] {
    CHECK_BLAS(cublasLtMatmul(lt, op, &one, A, la, B, lb, &zero, C, lc, C, lc, &heur.algo, ws, ws_bytes, s));
  });
  EXPECT_NEAR_DBL("cuBLASLt matmul time (us)", expected, us, tol);

  // 4. The same through a batched layout.
  int32_t b4 = batch;
  int64_t sa = int64_t(m) * k, sb = int64_t(k) * n, sc = int64_t(m) * n;
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b4, sizeof(b4)));
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b4, sizeof(b4)));
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b4, sizeof(b4)));
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof(sa)));
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof(sb)));
  CHECK_BLAS(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sc, sizeof(sc)));
  us = timed(s, [&] {
    CHECK_BLAS(cublasLtMatmul(lt, op, &one, A, la, B, lb, &zero, C, lc, C, lc, nullptr, ws, ws_bytes, s));
  });
  EXPECT_NEAR_DBL("cuBLASLt batched matmul time, batch 4 (us)", expected_b4, us, tol);

  CHECK_BLAS(cublasLtMatmulPreferenceDestroy(pref));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(la));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(lb));
  CHECK_BLAS(cublasLtMatrixLayoutDestroy(lc));
  CHECK_BLAS(cublasLtMatmulDescDestroy(op));
  CHECK_BLAS(cublasDestroy(h));
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(ws));
  CHECK_CUDA(cudaStreamDestroy(s));
  return finish("cublas_gemm_timing");
}
