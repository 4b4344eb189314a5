// SPDX-License-Identifier: Apache-2.0
// Example: cuBLAS handle state, argument checks and status codes, host<->device helpers, host-pointer-mode
// reductions, batched LU outputs and an unemulated entry point, against the real cublas_v2.h API.
#include <cublasXt.h>
#include <cublas_v2.h>

#include <cstring>
#include <vector>

#include "check.cuh"

#define EXPECT_STATUS(what, expected, ...) EXPECT_EQ_INT(what, (int)(expected), (int)(__VA_ARGS__))

int main() {
  const float one = 1.0f, zero = 0.0f;
  float* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 1 << 22));

  // Invalid handles: cuBLAS answers NOT_INITIALIZED.
  EXPECT_STATUS("SetStream on a null handle", CUBLAS_STATUS_NOT_INITIALIZED, cublasSetStream(nullptr, 0));
  EXPECT_STATUS("Create with a null output", CUBLAS_STATUS_INVALID_VALUE, cublasCreate(nullptr));

  cublasHandle_t h;
  EXPECT_STATUS("Create", CUBLAS_STATUS_SUCCESS, cublasCreate(&h));
  int version = 0;
  EXPECT_STATUS("GetVersion", CUBLAS_STATUS_SUCCESS, cublasGetVersion(h, &version));
  EXPECT_EQ_INT("version is the CUDA 13 library's", CUBLAS_VERSION, version);
  int major = 0;
  EXPECT_STATUS("GetProperty", CUBLAS_STATUS_SUCCESS, cublasGetProperty(MAJOR_VERSION, &major));
  EXPECT_EQ_INT("major version", CUBLAS_VER_MAJOR, major);

  // Modes: valid values are stored, invalid ones rejected.
  EXPECT_STATUS("SetMathMode(99)", CUBLAS_STATUS_INVALID_VALUE, cublasSetMathMode(h, (cublasMath_t)99));
  cublasMath_t mm = (cublasMath_t)(CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  EXPECT_STATUS("SetMathMode(TF32 | DISALLOW_REDUCED)", CUBLAS_STATUS_SUCCESS, cublasSetMathMode(h, mm));
  cublasMath_t got_mm = CUBLAS_DEFAULT_MATH;
  EXPECT_STATUS("GetMathMode", CUBLAS_STATUS_SUCCESS, cublasGetMathMode(h, &got_mm));
  EXPECT_EQ_INT("math mode round trip", mm, got_mm);
  EXPECT_STATUS("SetPointerMode(5)", CUBLAS_STATUS_INVALID_VALUE, cublasSetPointerMode(h, (cublasPointerMode_t)5));
  cublasPointerMode_t pm = CUBLAS_POINTER_MODE_DEVICE;
  EXPECT_STATUS("GetPointerMode", CUBLAS_STATUS_SUCCESS, cublasGetPointerMode(h, &pm));
  EXPECT_EQ_INT("pointer mode defaults to host", CUBLAS_POINTER_MODE_HOST, pm);
  // cuBLAS documents 256-byte alignment but accepts less (cuBLAS 13.0 on an H200; docs/validation.md).
  EXPECT_STATUS("SetWorkspace misaligned", CUBLAS_STATUS_SUCCESS, cublasSetWorkspace(h, (char*)d + 4, 1 << 20));
  EXPECT_STATUS("SetWorkspace", CUBLAS_STATUS_SUCCESS, cublasSetWorkspace(h, d, 1 << 20));
  cudaStream_t s, got_s = nullptr;
  CHECK_CUDA(cudaStreamCreate(&s));
  EXPECT_STATUS("SetStream", CUBLAS_STATUS_SUCCESS, cublasSetStream(h, s));
  EXPECT_STATUS("GetStream", CUBLAS_STATUS_SUCCESS, cublasGetStream(h, &got_s));
  EXPECT_EQ_INT("stream round trip", 1, got_s == s);

  // GEMM argument checks (reference BLAS conditions).
  EXPECT_STATUS("Sgemm lda < m", CUBLAS_STATUS_INVALID_VALUE,
                cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, 32, d, 64, &zero, d, 64));
  EXPECT_STATUS("Sgemm ldb < k (transb=T: ldb >= n)", CUBLAS_STATUS_INVALID_VALUE,
                cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 64, 128, 64, &one, d, 64, d, 64, &zero, d, 64));
  EXPECT_STATUS("Sgemm bad transa", CUBLAS_STATUS_INVALID_VALUE,
                cublasSgemm(h, (cublasOperation_t)7, CUBLAS_OP_N, 64, 64, 64, &one, d, 64, d, 64, &zero, d, 64));
  EXPECT_STATUS("Sgemm m < 0", CUBLAS_STATUS_INVALID_VALUE,
                cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 64, 64, &one, d, 64, d, 64, &zero, d, 64));
  EXPECT_STATUS("Sgemm m = 0 (quick return)", CUBLAS_STATUS_SUCCESS,
                cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 64, 64, &one, d, 1, d, 64, &zero, d, 1));
  EXPECT_STATUS("GemmEx bf16 x bf16 -> fp16 is not a cuBLAS combination", CUBLAS_STATUS_NOT_SUPPORTED,
                cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, CUDA_R_16BF, 64, d, CUDA_R_16BF, 64,
                             &zero, d, CUDA_R_16F, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  EXPECT_STATUS("GemmEx bf16 -> fp32", CUBLAS_STATUS_SUCCESS,
                cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 64, 64, 64, &one, d, CUDA_R_16BF, 64, d, CUDA_R_16BF, 64,
                             &zero, d, CUDA_R_32F, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));

  // Host-pointer-mode dot: returns after the work completes (the stream is idle), result written.
  float result = 42.0f;
  EXPECT_STATUS("Sdot (host result)", CUBLAS_STATUS_SUCCESS, cublasSdot(h, 1 << 16, d, 1, d, 1, &result));
  EXPECT_ERR("stream idle after a host-mode dot", cudaSuccess, cudaStreamQuery(s));
  if (on_genie())
    EXPECT_NEAR_DBL("dot result is written (not computed: 0)", 0.0, result, 0.0);
  else
    SKIP_ON_REAL_GPU("dot result is written (not computed: 0)", "a real GPU computes it");
  // The result is copied to the host pointer, which fails (no argument check for it; measured on an H200).
  EXPECT_STATUS("Sdot null result", CUBLAS_STATUS_MAPPING_ERROR, cublasSdot(h, 16, d, 1, d, 1, nullptr));
  // A zero stride is accepted (measured on an H200; the reference BLAS rejects it).
  EXPECT_STATUS("Sgemv incx = 0", CUBLAS_STATUS_SUCCESS,
                cublasSgemv(h, CUBLAS_OP_N, 16, 16, &one, d, 16, d, 0, &zero, d + 512, 1));
  // incy = 0: taken to behave as incx = 0 (not yet run on a real GPU).
  EXPECT_STATUS("Sgemv incy = 0", CUBLAS_STATUS_SUCCESS,
                cublasSgemv(h, CUBLAS_OP_N, 16, 16, &one, d, 16, d, 1, &zero, d + 512, 0));
  EXPECT_STATUS("Strsm", CUBLAS_STATUS_SUCCESS,
                cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 64, 32,
                            &one, d, 64, d, 64));

  // Set/GetMatrix move real bytes, with leading dimensions.
  std::vector<float> host(6 * 4), back(8 * 4, -1.0f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i);
  EXPECT_STATUS("SetMatrix 6x4 ld 6 -> ld 8", CUBLAS_STATUS_SUCCESS,
                cublasSetMatrix(6, 4, sizeof(float), host.data(), 6, d, 8));
  EXPECT_STATUS("GetMatrix 6x4 ld 8 -> ld 8", CUBLAS_STATUS_SUCCESS,
                cublasGetMatrix(6, 4, sizeof(float), d, 8, back.data(), 8));
  int mismatches = 0;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 6; ++r) mismatches += back[c * 8 + r] != host[c * 6 + r];
  EXPECT_EQ_INT("matrix round trip", 0, mismatches);
  // Not an argument error in cuBLAS: the strided copy it makes is refused (measured on an H200).
  EXPECT_STATUS("SetMatrix lda < rows", CUBLAS_STATUS_MAPPING_ERROR,
                cublasSetMatrix(6, 4, sizeof(float), host.data(), 5, d, 8));
  // ldb < rows: the same strided copy, refused the same way (inferred; not yet run on a real GPU).
  EXPECT_STATUS("SetMatrix ldb < rows", CUBLAS_STATUS_MAPPING_ERROR,
                cublasSetMatrix(6, 4, sizeof(float), host.data(), 6, d, 5));
  // lda <= 0: INVALID_VALUE, as cuBLAS documents for cublasSetMatrix.
  EXPECT_STATUS("SetMatrix lda = 0", CUBLAS_STATUS_INVALID_VALUE,
                cublasSetMatrix(6, 4, sizeof(float), host.data(), 0, d, 8));

  // Batched LU of two 8x8 identity matrices: info = 0 and identity pivots, in stream order.
  float** ptrs;
  int *piv, *info;
  std::vector<float> eye(64, 0.0f);
  for (int i = 0; i < 8; ++i) eye[i * 8 + i] = 1.0f;
  float* mats = d + (1 << 18);
  CHECK_CUDA(cudaMemcpy(mats, eye.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(mats + 64, eye.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
  float* hptrs[2] = {mats, mats + 64};
  CHECK_CUDA(cudaMalloc(&ptrs, 2 * sizeof(float*)));
  CHECK_CUDA(cudaMemcpy(ptrs, hptrs, sizeof(hptrs), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&piv, 2 * 8 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&info, 2 * sizeof(int)));
  CHECK_CUDA(cudaMemset(info, 0x7f, 2 * sizeof(int)));
  EXPECT_STATUS("SgetrfBatched", CUBLAS_STATUS_SUCCESS, cublasSgetrfBatched(h, 8, ptrs, 8, piv, info, 2));
  CHECK_CUDA(cudaStreamSynchronize(s));
  int hinfo[2], hpiv[16];
  CHECK_CUDA(cudaMemcpy(hinfo, info, sizeof(hinfo), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hpiv, piv, sizeof(hpiv), cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("getrf info[1]", 0, hinfo[1]);
  EXPECT_EQ_INT("getrf pivot[1][7] (1-based identity)", 8, hpiv[15]);

  // Names, an unemulated export, and use after destroy.
  EXPECT_EQ_INT("status name", 0, std::strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
                                               "CUBLAS_STATUS_INVALID_VALUE"));
  cublasXtHandle_t xt;
  EXPECT_STATUS("cublasXtCreate is not emulated", CUBLAS_STATUS_NOT_SUPPORTED, cublasXtCreate(&xt));
  EXPECT_STATUS("Destroy", CUBLAS_STATUS_SUCCESS, cublasDestroy(h));
  if (on_genie()) {  // a destroyed handle is undefined behaviour in cuBLAS; Genie checks it
    EXPECT_STATUS("Sgemm after Destroy", CUBLAS_STATUS_NOT_INITIALIZED,
                  cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, d, 64, d, 64, &zero, d, 64));
    EXPECT_STATUS("Destroy twice", CUBLAS_STATUS_NOT_INITIALIZED, cublasDestroy(h));
  } else {
    SKIP_ON_REAL_GPU("Sgemm after Destroy, Destroy twice", "a destroyed handle is undefined behaviour");
  }
  CHECK_CUDA(cudaFree(d));
  return finish("cublas_api");
}
