// SPDX-License-Identifier: Apache-2.0
// Example: cuBLASLt descriptors, attributes, preferences, heuristics and argument checks, in the sequence
// PyTorch's gemm_and_bias uses (descriptors, layouts, preference with a workspace limit, one heuristic, matmul).
#include <cublasLt.h>

#include <cstring>

#include "check.cuh"

#define EXPECT_STATUS(what, expected, ...) EXPECT_EQ_INT(what, (int)(expected), (int)(__VA_ARGS__))

int main() {
  cublasLtHandle_t lt;
  EXPECT_STATUS("LtCreate", CUBLAS_STATUS_SUCCESS, cublasLtCreate(&lt));
  EXPECT_EQ_INT("LtGetVersion", CUBLAS_VERSION, (long long)cublasLtGetVersion());

  // Matmul descriptor: attribute sizes are checked; Get with size 0 reports the size.
  cublasLtMatmulDesc_t op;
  EXPECT_STATUS("MatmulDescCreate", CUBLAS_STATUS_SUCCESS, cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t t = CUBLAS_OP_T;
  int64_t wrong = CUBLAS_OP_T;
  EXPECT_STATUS("Set TRANSA with an 8-byte value", CUBLAS_STATUS_INVALID_VALUE,
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &wrong, sizeof(wrong)));
  EXPECT_STATUS("Set TRANSA", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  EXPECT_STATUS("Set unknown attribute", CUBLAS_STATUS_INVALID_VALUE,
                cublasLtMatmulDescSetAttribute(op, (cublasLtMatmulDescAttributes_t)99, &t, sizeof(t)));
  size_t need = 0;
  EXPECT_STATUS("Get TRANSA size", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, nullptr, 0, &need));
  EXPECT_EQ_INT("TRANSA is an int32", 4, need);
  int32_t got = -1;
  size_t written = 0;
  EXPECT_STATUS("Get TRANSA", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescGetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &got, sizeof(got), &written));
  EXPECT_EQ_INT("TRANSA round trip", CUBLAS_OP_T, got);
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
  EXPECT_STATUS("Set EPILOGUE", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));

  // op(A) = A^T with A stored k x m; D = m x n.
  const int m = 1024, n = 512, k = 256;
  cublasLtMatrixLayout_t a, b, c, bad;
  EXPECT_STATUS("LayoutCreate A", CUBLAS_STATUS_SUCCESS, cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, k, m, k));
  EXPECT_STATUS("LayoutCreate B", CUBLAS_STATUS_SUCCESS, cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, k, n, k));
  EXPECT_STATUS("LayoutCreate C", CUBLAS_STATUS_SUCCESS, cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, m, n, m));
  EXPECT_STATUS("LayoutCreate mismatched", CUBLAS_STATUS_SUCCESS,
                cublasLtMatrixLayoutCreate(&bad, CUDA_R_16BF, k + 1, n, k + 1));
  uint64_t rows = 0;
  EXPECT_STATUS("Get ROWS", CUBLAS_STATUS_SUCCESS,
                cublasLtMatrixLayoutGetAttribute(c, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof(rows), &written));
  EXPECT_EQ_INT("ROWS", m, rows);

  cublasLtMatmulPreference_t pref;
  EXPECT_STATUS("PreferenceCreate", CUBLAS_STATUS_SUCCESS, cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws = 1 << 20;
  EXPECT_STATUS("Set MAX_WORKSPACE_BYTES", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  uint32_t align = 0;
  EXPECT_STATUS("Get MIN_ALIGNMENT_A_BYTES", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulPreferenceGetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align,
                                                     sizeof(align), &written));
  EXPECT_EQ_INT("default alignment", 256, align);

  cublasLtMatmulHeuristicResult_t res[4] = {};
  int count = -1;
  EXPECT_STATUS("Heuristic", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, c, c, pref, 4, res, &count));
  // Up to requestedAlgoCount (Genie returns one; cuBLASLt 13.0 on an H200 returned 4 of 4).
  EXPECT_EQ_INT("1 to 4 algorithms", 1, count >= 1 && count <= 4);
  EXPECT_EQ_INT("its state", CUBLAS_STATUS_SUCCESS, res[0].state);
  EXPECT_EQ_INT("waves > 0", 1, res[0].wavesCount > 0);
  EXPECT_STATUS("Heuristic with requestedAlgoCount 0", CUBLAS_STATUS_INVALID_VALUE,
                cublasLtMatmulAlgoGetHeuristic(lt, op, a, b, c, c, pref, 0, res, &count));
  EXPECT_STATUS("Heuristic with mismatched A", CUBLAS_STATUS_INVALID_VALUE,
                cublasLtMatmulAlgoGetHeuristic(lt, op, bad, b, c, c, pref, 1, res, &count));
  int tile = 0;
  EXPECT_STATUS("Algo config TILE_ID", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulAlgoConfigGetAttribute(&res[0].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile),
                                                     &written));
  EXPECT_EQ_INT("a real tile", 1, tile != CUBLASLT_MATMUL_TILE_UNDEFINED);

  void *dA, *dB, *dC, *dW, *bias;
  CHECK_CUDA(cudaMalloc(&dA, size_t(m) * k * 2));
  CHECK_CUDA(cudaMalloc(&dB, size_t(k) * n * 2));
  CHECK_CUDA(cudaMalloc(&dC, size_t(m) * n * 2));
  CHECK_CUDA(cudaMalloc(&dW, ws));
  CHECK_CUDA(cudaMalloc(&bias, m * 2));
  EXPECT_STATUS("Set BIAS_POINTER", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  const float one = 1, zero = 0;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  EXPECT_STATUS("Matmul", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmul(lt, op, &one, dA, a, dB, b, &zero, dC, c, dC, c, &res[0].algo, dW, ws, s));
  EXPECT_STATUS("Matmul with mismatched A", CUBLAS_STATUS_INVALID_VALUE,
                cublasLtMatmul(lt, op, &one, dA, bad, dB, b, &zero, dC, c, dC, c, nullptr, dW, ws, s));
  EXPECT_STATUS("Matmul on a null handle", CUBLAS_STATUS_NOT_INITIALIZED,
                cublasLtMatmul(nullptr, op, &one, dA, a, dB, b, &zero, dC, c, dC, c, nullptr, dW, ws, s));
  cudaStream_t dead;
  CHECK_CUDA(cudaStreamCreate(&dead));
  CHECK_CUDA(cudaStreamDestroy(dead));
  EXPECT_STATUS("Matmul on a destroyed stream", CUBLAS_STATUS_EXECUTION_FAILED,
                cublasLtMatmul(lt, op, &one, dA, a, dB, b, &zero, dC, c, dC, c, nullptr, dW, ws, dead));
  CHECK_CUDA(cudaStreamSynchronize(s));

  // Descriptors initialised in caller memory (cublasLtMatmulDescInit), and use after destroy.
  cublasLtMatmulDescOpaque_t local;
  EXPECT_STATUS("MatmulDescInit", CUBLAS_STATUS_SUCCESS, cublasLtMatmulDescInit(&local, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  EXPECT_STATUS("Set TRANSA on it", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmulDescSetAttribute(&local, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  EXPECT_STATUS("Matmul with an initialised descriptor", CUBLAS_STATUS_SUCCESS,
                cublasLtMatmul(lt, &local, &one, dA, a, dB, b, &zero, dC, c, dC, c, nullptr, dW, ws, s));
  cublasLtMatmulDescOpaque_t garbage;
  std::memset(&garbage, 0xab, sizeof(garbage));
  if (on_genie())  // undefined behaviour in cuBLASLt (it returned success on an H200); Genie checks it
    EXPECT_STATUS("Set on an uninitialised descriptor", CUBLAS_STATUS_INVALID_VALUE,
                  cublasLtMatmulDescSetAttribute(&garbage, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)));
  else
    SKIP_ON_REAL_GPU("Set on an uninitialised descriptor", "undefined behaviour");
  EXPECT_STATUS("MatmulDescDestroy", CUBLAS_STATUS_SUCCESS, cublasLtMatmulDescDestroy(op));
  EXPECT_STATUS("LayoutDestroy", CUBLAS_STATUS_SUCCESS, cublasLtMatrixLayoutDestroy(bad));
  for (cublasLtMatrixLayout_t l : {a, b, c})
    EXPECT_STATUS("LayoutDestroy A/B/C", CUBLAS_STATUS_SUCCESS, cublasLtMatrixLayoutDestroy(l));
  EXPECT_STATUS("PreferenceDestroy", CUBLAS_STATUS_SUCCESS, cublasLtMatmulPreferenceDestroy(pref));
  EXPECT_STATUS("LtDestroy", CUBLAS_STATUS_SUCCESS, cublasLtDestroy(lt));
  if (on_genie())
    EXPECT_STATUS("LtDestroy twice", CUBLAS_STATUS_NOT_INITIALIZED, cublasLtDestroy(lt));
  else
    SKIP_ON_REAL_GPU("LtDestroy twice", "a destroyed handle is undefined behaviour");
  return finish("cublaslt_api");
}
